//! The small building blocks around attention: linear maps, layer norm, activations, the
//! feed-forward block and embedding look-ups.
//!
//! Weights follow the paper's orientation, `y = x W + b` with `W` of shape (d_in, d_out), so
//! `Q = X W_Q` reads as written. (PyTorch's `nn.Linear` stores the transpose.)

use ndarray::{s, Array1, Array2, ArrayView2, ArrayViewMut2, Axis, Zip};

use crate::error::{Error, Result};
#[cfg(feature = "hf")]
use crate::math;

/// `y = x W + b`.
#[derive(Debug, Clone, PartialEq)]
pub struct Linear {
    pub weight: Array2<f32>,       // (d_in, d_out)
    pub bias: Option<Array1<f32>>, // (d_out,)
}

impl Linear {
    pub fn new(name: &str, weight: Array2<f32>, bias: Option<Array1<f32>>) -> Result<Self> {
        if let Some(b) = &bias {
            if b.len() != weight.ncols() {
                return Err(Error::shape(format!("{name}.bias"), &[b.len()], &[weight.ncols()]));
            }
        }
        Ok(Linear { weight, bias })
    }

    pub fn d_in(&self) -> usize {
        self.weight.nrows()
    }

    pub fn d_out(&self) -> usize {
        self.weight.ncols()
    }

    pub fn forward(&self, x: ArrayView2<f32>) -> Result<Array2<f32>> {
        self.forward_then(x, |_| {})
    }

    /// `x W + b`, then `then` on the result's rows, piece by piece on the threads that
    /// computed them (an activation while the values are in cache).
    pub fn forward_then(
        &self,
        x: ArrayView2<f32>,
        then: impl Fn(ArrayViewMut2<f32>) + Sync + Send,
    ) -> Result<Array2<f32>> {
        if x.ncols() != self.d_in() {
            return Err(Error::shape("input", &[x.nrows(), x.ncols()], &[x.nrows(), self.d_in()]));
        }
        Ok(crate::par::product_then(x, self.weight.view(), |mut y, columns| {
            if let Some(b) = &self.bias {
                y += &b.slice(s![columns]);
            }
            then(y)
        })) // (T, d_out)
    }
}

/// Normalises each row to mean 0 and variance 1, then scales and shifts.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNorm {
    pub gamma: Array1<f32>, // (D,)
    pub beta: Array1<f32>,  // (D,)
    pub eps: f32,
}

impl LayerNorm {
    /// gamma 1, beta 0: the state before training.
    pub fn identity(d: usize, eps: f32) -> Self {
        LayerNorm { gamma: Array1::ones(d), beta: Array1::zeros(d), eps }
    }

    pub fn forward(&self, x: ArrayView2<f32>) -> Array2<f32> {
        self.normalise(x.to_owned())
    }

    /// `x + residual`, normalised, in `residual`'s memory: a post-norm block's add & norm, the
    /// add done with the norm, row by row, on the threads.
    pub fn forward_sum(&self, x: ArrayView2<f32>, mut residual: Array2<f32>) -> Array2<f32> {
        crate::par::rows_mut_beside(residual.view_mut(), x, |mut y, x| {
            y += &x;
            self.normalise_rows(y);
        });
        residual // (T, D)
    }

    /// Each row of `y` in place, rows on the threads when there are many.
    fn normalise(&self, mut y: Array2<f32>) -> Array2<f32> {
        crate::par::rows_mut(y.view_mut(), |y| self.normalise_rows(y));
        y // (T, D)
    }

    fn normalise_rows(&self, mut y: ArrayViewMut2<f32>) {
        for mut row in y.axis_iter_mut(Axis(0)) {
            let n = row.len() as f32;
            let mean = row.sum() / n;
            // v − mean, kept for the variance and the norm; the variance as a dot product,
            // which adds lane by lane, where a sum of squares waited on each add in turn
            row -= mean;
            let var = row.dot(&row) / n;
            let inv = 1.0 / (var + self.eps).sqrt();
            // one pass, in the order of two: ((v − mean) · inv) · γ + β
            Zip::from(&mut row).and(&self.gamma).and(&self.beta).for_each(|v, &g, &b| *v = *v * inv * g + b);
        }
    }
}

/// Root-mean-square norm (Llama's `RMSNorm`, T5's `T5LayerNorm`): each row divided by
/// √(mean(x²) + eps), then scaled. No centring, no bias.
#[derive(Debug, Clone, PartialEq)]
pub struct RmsNorm {
    pub weight: Array1<f32>, // (D,)
    pub eps: f32,
}

impl RmsNorm {
    pub fn forward(&self, x: ArrayView2<f32>) -> Array2<f32> {
        let mut y = x.to_owned(); // (T, D)
        crate::par::rows_mut(y.view_mut(), |mut y| {
            for mut row in y.axis_iter_mut(Axis(0)) {
                let mean_square = row.dot(&row) / row.len() as f32; // lane by lane
                let inv = 1.0 / (mean_square + self.eps).sqrt();
                Zip::from(&mut row).and(&self.weight).for_each(|v, &w| *v = *v * inv * w);
            }
        });
        y
    }
}

/// The activation functions of the feed-forward block, by the names Hugging Face configs use.
/// The toy has the paper's ReLU; the others come with real models (the `hf` feature), and a
/// toy-only build leaves their math out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `gelu`: x Φ(x), with the exact error function.
    #[cfg(feature = "hf")]
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`: GPT-2's tanh approximation.
    #[cfg(feature = "hf")]
    GeluTanh,
    /// `relu`: the paper's max(0, x).
    Relu,
    /// `swish`, `silu`: x σ(x).
    #[cfg(feature = "hf")]
    Silu,
}

impl Activation {
    #[cfg(feature = "hf")]
    pub const NAMES: [&'static str; 7] =
        ["gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "swish", "silu"];

    /// `None` for a name headmap does not know.
    #[cfg(feature = "hf")]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "gelu" => Some(Activation::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Some(Activation::GeluTanh),
            "relu" => Some(Activation::Relu),
            "swish" | "silu" => Some(Activation::Silu),
            _ => None,
        }
    }

    pub fn apply(self, mut x: ArrayViewMut2<f32>) {
        match self {
            #[cfg(feature = "hf")]
            Activation::Gelu => {
                // natively, the widest SIMD the CPU has; elsewhere (wasm) the map vectorises as is
                #[cfg(target_arch = "x86_64")]
                if let Some(values) = x.as_slice_memory_order_mut() {
                    return math::gelu(values);
                }
                x.mapv_inplace(math::gelu_one)
            }
            #[cfg(feature = "hf")]
            Activation::GeluTanh => x.mapv_inplace(|v| {
                let c = (2.0 / std::f32::consts::PI).sqrt();
                0.5 * v * (1.0 + (c * (v + 0.044715 * v * v * v)).tanh())
            }),
            Activation::Relu => x.mapv_inplace(|v| v.max(0.0)),
            #[cfg(feature = "hf")]
            Activation::Silu => x.mapv_inplace(|v| v / (1.0 + (-v).exp())),
        }
    }
}

/// The position-wise feed-forward block: `W₂ act(x W₁ + b₁) + b₂` (the paper's with ReLU).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedForward {
    pub inner: Linear, // (D, d_ff)
    pub outer: Linear, // (d_ff, D)
    pub activation: Activation,
}

impl FeedForward {
    pub fn forward(&self, x: ArrayView2<f32>) -> Result<Array2<f32>> {
        let h = self.inner.forward_then(x, |h| self.activation.apply(h))?; // (T, d_ff)
        self.outer.forward(h.view()) // (T, D)
    }
}

/// The gated feed-forward block (Llama's SwiGLU MLP, T5's gated-gelu):
/// `down(act(gate(x)) ⊙ up(x))`.
#[derive(Debug, Clone, PartialEq)]
pub struct GatedFeedForward {
    pub gate: Linear, // (D, d_ff)
    pub up: Linear,   // (D, d_ff)
    pub down: Linear, // (d_ff, D)
    pub activation: Activation,
}

impl GatedFeedForward {
    pub fn forward(&self, x: ArrayView2<f32>) -> Result<Array2<f32>> {
        let mut h = self.gate.forward_then(x, |h| self.activation.apply(h))?; // (T, d_ff)
        h *= &self.up.forward(x)?;
        self.down.forward(h.view()) // (T, D)
    }
}

/// A block's norm: LayerNorm (GPT-2, GPT-Neo, GPT-NeoX) or RMSNorm (Llama-style, T5).
#[derive(Debug, Clone, PartialEq)]
pub enum Norm {
    Layer(LayerNorm),
    Rms(RmsNorm),
}

impl Norm {
    pub fn forward(&self, x: ArrayView2<f32>) -> Array2<f32> {
        match self {
            Norm::Layer(norm) => norm.forward(x),
            Norm::Rms(norm) => norm.forward(x),
        }
    }
}

/// A block's feed-forward: plain (GPT-2's MLP, T5's `relu`) or gated (Llama's SwiGLU, T5's
/// gated-gelu).
#[derive(Debug, Clone, PartialEq)]
pub enum Mlp {
    Plain(FeedForward),
    Gated(GatedFeedForward),
}

impl Mlp {
    pub fn forward(&self, x: ArrayView2<f32>) -> Result<Array2<f32>> {
        match self {
            Mlp::Plain(f) => f.forward(x),
            Mlp::Gated(f) => f.forward(x),
        }
    }
}

/// Rows `ids` of an embedding table (V, D), checking every id.
pub fn embed(table: &Array2<f32>, ids: &[u32]) -> Result<Array2<f32>> {
    let mut out = Array2::zeros((ids.len(), table.ncols())); // (T, D)
    for (t, &id) in ids.iter().enumerate() {
        if id as usize >= table.nrows() {
            return Err(Error::TokenOutOfVocabulary { id, vocab: table.nrows() });
        }
        out.row_mut(t).assign(&table.row(id as usize));
    }
    Ok(out)
}

/// Token rows times `embed_scale`, plus the first T rows of a position table: refuses text longer
/// than the table.
pub fn embed_with_positions(
    tokens: &Array2<f32>,
    positions: &Array2<f32>,
    ids: &[u32],
    embed_scale: f32,
) -> Result<Array2<f32>> {
    embed_at(tokens, positions, ids, embed_scale, 0)
}

/// [`embed_with_positions`] for tokens at positions `first..`: a decoder's step after the
/// tokens its cache holds.
pub fn embed_at(
    tokens: &Array2<f32>,
    positions: &Array2<f32>,
    ids: &[u32],
    embed_scale: f32,
    first: usize,
) -> Result<Array2<f32>> {
    let end = first + ids.len();
    if end > positions.nrows() {
        return Err(Error::TooLong { tokens: end, max: positions.nrows() });
    }
    let mut x = embed(tokens, ids)?; // (T, D)
    if embed_scale != 1.0 {
        x *= embed_scale;
    }
    x += &positions.slice(s![first..end, ..]);
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn linear_is_x_times_w_plus_b() {
        let lin = Linear::new("l", array![[1.0f32, 2.0], [3.0, 4.0]], Some(array![0.5, -0.5])).unwrap();
        assert_eq!(lin.forward(array![[1.0f32, 1.0]].view()).unwrap(), array![[4.5f32, 5.5]]);
        assert!(lin.forward(array![[1.0f32, 1.0, 1.0]].view()).is_err());
        assert!(Linear::new("l", Array2::zeros((2, 2)), Some(Array1::zeros(3))).is_err());
    }

    #[test]
    fn layer_norm_gives_zero_mean_unit_variance() {
        let y = LayerNorm::identity(4, 1e-5).forward(array![[1.0f32, 2.0, 3.0, 4.0]].view());
        let mean = y.sum() / 4.0;
        let var = y.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 4.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-4, "mean {mean} var {var}");
    }

    #[test]
    #[cfg(feature = "hf")]
    fn every_activation_name_parses() {
        for name in Activation::NAMES {
            assert!(Activation::parse(name).is_some(), "{name}");
        }
        assert_eq!(Activation::parse("mish"), None);
    }

    #[test]
    fn relu_keeps_the_positive_part() {
        let mut x = array![[-1.0f32, 0.0, 2.0]];
        Activation::Relu.apply(x.view_mut());
        assert_eq!(x, array![[0.0f32, 0.0, 2.0]]);
    }

    #[test]
    fn an_id_outside_the_vocabulary_is_refused() {
        let table = Array2::<f32>::zeros((3, 2));
        assert_eq!(embed(&table, &[0, 3]).unwrap_err(), Error::TokenOutOfVocabulary { id: 3, vocab: 3 });
        let positions = Array2::<f32>::zeros((1, 2));
        assert_eq!(
            embed_with_positions(&table, &positions, &[0, 1], 1.0).unwrap_err(),
            Error::TooLong { tokens: 2, max: 1 }
        );
    }
}
