//! The small building blocks around attention: linear maps, layer norm, the feed-forward block.
//!
//! Weights follow the paper's orientation, `y = x W + b` with `W` of shape (d_in, d_out), so
//! `Q = X W_Q` reads as written. (PyTorch's `nn.Linear` stores the transpose.)

use ndarray::{Array1, Array2, ArrayView2, Axis};

use crate::error::{Error, Result};

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
        if x.ncols() != self.d_in() {
            return Err(Error::shape("input", &[x.nrows(), x.ncols()], &[x.nrows(), self.d_in()]));
        }
        let mut y = x.dot(&self.weight); // (T, d_out)
        if let Some(b) = &self.bias {
            y += b;
        }
        Ok(y)
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
        let mut y = x.to_owned(); // (T, D)
        for mut row in y.axis_iter_mut(Axis(0)) {
            let n = row.len() as f32;
            let mean = row.sum() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + self.eps).sqrt();
            row.mapv_inplace(|v| (v - mean) * inv);
        }
        y *= &self.gamma;
        y += &self.beta;
        y
    }
}

/// The position-wise feed-forward block of the paper: `max(0, x W₁ + b₁) W₂ + b₂`.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedForward {
    pub inner: Linear, // (D, d_ff)
    pub outer: Linear, // (d_ff, D)
}

impl FeedForward {
    pub fn forward(&self, x: ArrayView2<f32>) -> Result<Array2<f32>> {
        let mut h = self.inner.forward(x)?; // (T, d_ff)
        h.mapv_inplace(|v| v.max(0.0));
        self.outer.forward(h.view()) // (T, D)
    }
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
}
