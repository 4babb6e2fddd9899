//! Adam (Kingma and Ba, 2015) as `torch.optim.Adam` computes it with its defaults (no weight
//! decay, not amsgrad), so that one step here equals one step there:
//!
//! ```text
//! m ← m + (1 − β₁)(g − m)          (torch's lerp)
//! v ← β₂ v + (1 − β₂) g²
//! w ← w − (lr / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)
//! ```

/// The optimiser's state for a flat array of weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Adam {
    pub lr: f32,
    pub betas: (f32, f32),
    pub eps: f32,
    m: Vec<f32>,
    v: Vec<f32>,
    step: i32,
}

impl Adam {
    /// `len` weights, torch's defaults: betas (0.9, 0.999), eps 1e-8.
    pub fn new(len: usize, lr: f32) -> Self {
        Adam { lr, betas: (0.9, 0.999), eps: 1e-8, m: vec![0.0; len], v: vec![0.0; len], step: 0 }
    }

    /// Steps taken so far.
    pub fn steps(&self) -> i32 {
        self.step
    }

    /// One step of `weights` down `grad`.
    pub fn step(&mut self, weights: &mut [f32], grad: &[f32]) {
        self.step += 1;
        let (b1, b2) = self.betas;
        let bias1 = 1.0 - b1.powi(self.step);
        let bias2_sqrt = (1.0 - b2.powi(self.step)).sqrt();
        let step_size = self.lr / bias1;
        for (((w, &g), m), v) in weights.iter_mut().zip(grad).zip(&mut self.m).zip(&mut self.v) {
            *m += (1.0 - b1) * (g - *m);
            *v = b2 * *v + (1.0 - b2) * g * g;
            let denom = v.sqrt() / bias2_sqrt + self.eps;
            *w -= step_size * *m / denom;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_step_moves_each_weight_by_the_learning_rate() {
        // with m̂ = g and v̂ = g², the first step is lr · sign(g) (up to ε)
        let mut adam = Adam::new(3, 0.01);
        let mut w = vec![1.0f32, 2.0, 3.0];
        adam.step(&mut w, &[0.5, -4.0, 0.0]);
        assert!((w[0] - 0.99).abs() < 1e-6 && (w[1] - 2.01).abs() < 1e-6 && w[2] == 3.0, "{w:?}");
        assert_eq!(adam.steps(), 1);
    }
}
