//! Loading the building blocks of `nn` from Hugging Face checkpoints, and the activations
//! their configs name.

use ndarray::{Array2, ArrayView2};

use super::weights::Weights;
use crate::attention::multi_head::MultiHeadAttention;
use crate::error::{Error, Result};
use crate::nn::{LayerNorm, Linear};

/// A PyTorch `nn.Linear` stored as (d_out, d_in), turned to headmap's (d_in, d_out).
pub fn linear(w: &Weights, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
    let weight = w.matrix(&format!("{name}.weight"), [d_out, d_in])?.reversed_axes();
    let bias = w.vector(&format!("{name}.bias"), d_out)?;
    Linear::new(name, weight.as_standard_layout().into_owned(), Some(bias))
}

/// GPT-2's `Conv1D`, already stored as (d_in, d_out).
pub fn conv1d(w: &Weights, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
    let weight = w.matrix(&format!("{name}.weight"), [d_in, d_out])?;
    let bias = w.vector(&format!("{name}.bias"), d_out)?;
    Linear::new(name, weight, Some(bias))
}

pub fn layer_norm(w: &Weights, name: &str, d: usize, eps: f32) -> Result<LayerNorm> {
    Ok(LayerNorm { gamma: w.vector(&format!("{name}.weight"), d)?, beta: w.vector(&format!("{name}.bias"), d)?, eps })
}

/// Four projections named `{name}.{q}`, …: the attention block of BERT and BART.
pub fn attention(w: &Weights, names: [&str; 4], d: usize, heads: usize) -> Result<MultiHeadAttention> {
    let [q, k, v, o] = names;
    MultiHeadAttention::new(linear(w, q, d, d)?, linear(w, k, d, d)?, linear(w, v, d, d)?, linear(w, o, d, d)?, heads)
}

/// Rows `ids` of an embedding table (V, D), checking every id.
pub fn embed(table: &Array2<f32>, ids: &[u32], what: &str) -> Result<Array2<f32>> {
    let mut out = Array2::zeros((ids.len(), table.ncols())); // (T, D)
    for (t, &id) in ids.iter().enumerate() {
        if id as usize >= table.nrows() {
            return Err(Error::setting(what, format!("token id {id} is outside the vocabulary of {}", table.nrows())));
        }
        out.row_mut(t).assign(&table.row(id as usize));
    }
    Ok(out)
}

/// Token rows plus the first T position rows: refuses text longer than the position table.
pub fn embed_with_positions(
    tokens: &Array2<f32>,
    positions: &Array2<f32>,
    ids: &[u32],
    scale: f32,
) -> Result<Array2<f32>> {
    let t = ids.len();
    if t > positions.nrows() {
        return Err(Error::TooLong { tokens: t, max: positions.nrows() });
    }
    let mut x = embed(tokens, ids, "input_ids")?; // (T, D)
    if scale != 1.0 {
        x *= scale;
    }
    x += &positions.slice(ndarray::s![..t, ..]);
    Ok(x)
}

/// The activation functions Hugging Face configs name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `gelu`: x Φ(x), with the exact error function.
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`: GPT-2's tanh approximation.
    GeluTanh,
    Relu,
    /// `swish`, `silu`: x σ(x).
    Silu,
}

impl Activation {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "gelu" => Ok(Activation::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Activation::GeluTanh),
            "relu" => Ok(Activation::Relu),
            "swish" | "silu" => Ok(Activation::Silu),
            other => Err(Error::setting("activation_function", format!("`{other}` is not supported"))),
        }
    }

    pub fn apply(self, x: &mut Array2<f32>) {
        match self {
            Activation::Gelu => x.mapv_inplace(|v| 0.5 * v * (1.0 + libm::erff(v / std::f32::consts::SQRT_2))),
            Activation::GeluTanh => x.mapv_inplace(|v| {
                let c = (2.0 / std::f32::consts::PI).sqrt();
                0.5 * v * (1.0 + (c * (v + 0.044715 * v * v * v)).tanh())
            }),
            Activation::Relu => x.mapv_inplace(|v| v.max(0.0)),
            Activation::Silu => x.mapv_inplace(|v| v / (1.0 + (-v).exp())),
        }
    }
}

/// `fc2(act(fc1(x)))`, the feed-forward block of every model here.
pub fn feed_forward(x: ArrayView2<f32>, fc1: &Linear, fc2: &Linear, act: Activation) -> Result<Array2<f32>> {
    let mut h = fc1.forward(x)?; // (T, d_ff)
    act.apply(&mut h);
    fc2.forward(h.view()) // (T, D)
}
