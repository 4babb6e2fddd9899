//! Rotary position embedding (RoPE, Su et al. 2021), as Llama, Qwen2, Mistral and GPT-NeoX use
//! it: instead of adding a position vector to the input, each query and key is turned by an
//! angle proportional to its position, so q·k depends on how far apart the two tokens are.
//!
//! Dimension i of the rotated part pairs with dimension i + d_r/2 ("rotate half", not the
//! interleaved 2i/2i+1 of GPT-J), and the pair turns by `position · inv_freq[i]`:
//!
//! ```text
//! x'[i]       = x[i] cos θ − x[i + d_r/2] sin θ
//! x'[i+d_r/2] = x[i + d_r/2] cos θ + x[i] sin θ        θ = p · inv_freq[i], i < d_r/2
//! ```
//!
//! The first d_r dimensions of a head turn (all of them, or a share: Pythia turns a quarter);
//! the rest pass through. As in transformers, a share is first a width `dim` =
//! int(head_dim · share), the frequencies' exponents are 2i / `dim` for i < ⌈dim/2⌉, and
//! `cat((freqs, freqs))` turns d_r = 2·⌈dim/2⌉ dimensions: one more than `dim` when it is odd
//! (head_dim 6 at 0.5: dim 3, two frequencies, four dimensions turned).
//!
//! The scaling variants stretch `inv_freq` for longer texts, mirroring transformers'
//! `modeling_rope_utils.py`; all arithmetic is f32 where torch's is, so angles at position 2048
//! agree to the last bits.

use ndarray::{Array2, ArrayViewMut2};

use crate::error::{Error, Result};

/// How a checkpoint stretches RoPE's frequencies (`rope_type`).
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    /// `default`: `inv_freq[i] = 1 / base^(2i / d_r)`.
    None,
    /// `linear`: every frequency ÷ `factor` (positions interpolated).
    Linear { factor: f32 },
    /// `dynamic` (NTK): beyond `max_position_embeddings` tokens the base grows with the length.
    Dynamic { factor: f32 },
    /// `llama3` (Llama 3.1, 3.2): low frequencies ÷ `factor`, high ones kept, a smooth ramp between.
    Llama3 { factor: f32, low_freq_factor: f32, high_freq_factor: f32, original_max_positions: usize },
    /// `yarn`: a ramp between interpolated and original frequencies, and cos/sin scaled by
    /// `attention_factor`.
    Yarn {
        factor: f32,
        original_max_positions: usize,
        attention_factor: f32,
        beta_fast: f32,
        beta_slow: f32,
        truncate: bool,
    },
}

/// The rotation of one attention block.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotary {
    /// transformers' `dim`, int(head_dim · partial_rotary_factor): what the frequencies'
    /// exponents divide by. It may be odd.
    pub dim: usize,
    /// d_r = 2·⌈dim/2⌉: how many leading dimensions of each head turn, one pair per frequency.
    pub dims: usize,
    /// `rope_theta`.
    pub base: f32,
    pub scaling: RopeScaling,
    /// `max_position_embeddings`: where dynamic scaling starts.
    pub max_positions: usize,
}

/// cos and sin of every position's angles, (T, d_r/2), with the attention factor applied.
#[derive(Debug, Clone, PartialEq)]
pub struct RotaryTables {
    pub cos: Array2<f32>, // (T, d_r/2)
    pub sin: Array2<f32>, // (T, d_r/2)
}

impl Rotary {
    /// The rotation transformers computes for a rotary width `dim`, odd or even (0 turns
    /// nothing). Yarn's ramp has ⌊dim/2⌋ entries for the ⌈dim/2⌉ frequencies, which torch
    /// broadcasts: at dim 1 to no frequency at all, at 3 one entry for both; from 5 it fails.
    pub fn new(dim: usize, base: f32, scaling: RopeScaling, max_positions: usize) -> Result<Self> {
        let yarn = matches!(scaling, RopeScaling::Yarn { .. });
        if yarn && !dim.is_multiple_of(2) && dim >= 5 {
            return Err(Error::out_of_range("yarn rotary dimensions (even, or 1 or 3)", dim, 0, 3));
        }
        let dims = if yarn && dim == 1 { 0 } else { 2 * dim.div_ceil(2) };
        Ok(Rotary { dim, dims, base, scaling, max_positions })
    }

    /// `inv_freq` (d_r/2) for a text of `seq` positions, and the factor cos and sin are scaled by.
    pub fn inv_freq(&self, seq: usize) -> (Vec<f32>, f32) {
        let dim = self.dim;
        // torch: base ** (arange(0, dim, 2).float() / dim), all f32: ⌈dim/2⌉ of them
        let powers =
            |base: f32| -> Vec<f32> { (0..self.dims / 2).map(|i| base.powf((2 * i) as f32 / dim as f32)).collect() };
        let default = |base: f32| -> Vec<f32> { powers(base).iter().map(|p| 1.0 / p).collect() };
        match self.scaling {
            RopeScaling::None => (default(self.base), 1.0),
            RopeScaling::Linear { factor } => (default(self.base).iter().map(|f| f / factor).collect(), 1.0),
            RopeScaling::Dynamic { factor } => {
                let max = self.max_positions as f64;
                let seq = (seq as f64).max(max);
                let exponent = dim as f64 / (dim as f64 - 2.0);
                let base =
                    f64::from(self.base) * ((f64::from(factor) * seq / max) - (f64::from(factor) - 1.0)).powf(exponent);
                (default(base as f32), 1.0)
            }
            RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_max_positions } => {
                let old = original_max_positions as f32;
                let (low_wavelen, high_wavelen) = (old / low_freq_factor, old / high_freq_factor);
                let freqs = default(self.base)
                    .into_iter()
                    .map(|inv| {
                        let wavelen = 2.0 * std::f32::consts::PI / inv;
                        let kept = if wavelen > low_wavelen { inv / factor } else { inv };
                        let medium = wavelen >= high_wavelen && wavelen <= low_wavelen;
                        if medium {
                            let smooth = (old / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
                            (1.0 - smooth) * kept / factor + smooth * kept
                        } else {
                            kept
                        }
                    })
                    .collect();
                (freqs, 1.0)
            }
            RopeScaling::Yarn { factor, original_max_positions, attention_factor, beta_fast, beta_slow, truncate } => {
                let base = f64::from(self.base);
                let correction = |rotations: f32| {
                    let ratio = original_max_positions as f64 / (f64::from(rotations) * 2.0 * std::f64::consts::PI);
                    (dim as f64 * ratio.ln()) / (2.0 * base.ln())
                };
                let (mut low, mut high) = (correction(beta_fast), correction(beta_slow));
                if truncate {
                    (low, high) = (low.floor(), high.ceil());
                }
                let (low, mut high) = (low.max(0.0) as f32, high.min(dim as f64 - 1.0) as f32);
                if low == high {
                    high += 0.001;
                }
                let freqs = powers(self.base)
                    .into_iter()
                    .enumerate()
                    .map(|(j, p)| {
                        let (extrapolation, interpolation) = (1.0 / p, 1.0 / (factor * p));
                        // the ramp's ⌊dim/2⌋ entries, broadcast over ⌈dim/2⌉ frequencies
                        let j = j.min((dim / 2).saturating_sub(1));
                        let ramp = ((j as f32 - low) / (high - low)).clamp(0.0, 1.0);
                        let keep = 1.0 - ramp;
                        interpolation * (1.0 - keep) + extrapolation * keep
                    })
                    .collect();
                (freqs, attention_factor)
            }
        }
    }

    /// The angles' cos and sin for positions 0..t.
    pub fn tables(&self, t: usize) -> RotaryTables {
        let (inv_freq, factor) = self.inv_freq(t);
        let half = self.dims / 2;
        // one f32 product per angle, as torch computes `position · inv_freq`
        let angle = |p: usize, i: usize| f64::from(p as f32 * inv_freq[i]);
        RotaryTables {
            cos: Array2::from_shape_fn((t, half), |(p, i)| angle(p, i).cos() as f32 * factor),
            sin: Array2::from_shape_fn((t, half), |(p, i)| angle(p, i).sin() as f32 * factor),
        }
    }

    /// Turns the first d_r dimensions of every head of `x` (T, heads · head_dim) in place.
    pub fn rotate(&self, mut x: ArrayViewMut2<f32>, head_dim: usize, tables: &RotaryTables) -> Result<()> {
        let (t, width) = x.dim();
        let half = self.dims / 2;
        if head_dim < self.dims || head_dim == 0 || width % head_dim != 0 || tables.cos.dim() != (t, half) {
            return Err(Error::shape("rotary input", &[t, width], &[t, head_dim.max(self.dims)]));
        }
        for (p, mut row) in x.rows_mut().into_iter().enumerate() {
            for head in 0..width / head_dim {
                let start = head * head_dim;
                for i in 0..half {
                    let (c, s) = (tables.cos[[p, i]], tables.sin[[p, i]]);
                    let (a, b) = (row[start + i], row[start + i + half]);
                    row[start + i] = a * c - b * s;
                    row[start + i + half] = b * c + a * s;
                }
            }
        }
        Ok(())
    }
}

/// `mscale` of YaRN: how much sharper attention gets at `factor` times the context.
pub fn yarn_mscale(factor: f64, mscale: f64) -> f64 {
    if factor <= 1.0 {
        1.0
    } else {
        0.1 * mscale * factor.ln() + 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn position_zero_is_the_identity_and_the_product_depends_on_distance_only() {
        let rotary = Rotary::new(4, 10000.0, RopeScaling::None, 64).unwrap();
        let tables = rotary.tables(8);
        let mut x = array![[1.0f32, 2.0, 3.0, 4.0]];
        rotary.rotate(x.view_mut(), 4, &rotary.tables(1)).unwrap();
        assert_eq!(x, array![[1.0f32, 2.0, 3.0, 4.0]]);
        // q at p and k at p - 2 give the same product for every p
        let (q, k) = (array![0.3f32, -1.0, 0.5, 2.0], array![1.0f32, 0.25, -0.5, 0.75]);
        let dot_at = |pq: usize, pk: usize| {
            let mut m = Array2::zeros((8, 4));
            m.row_mut(pq).assign(&q);
            let mut n = Array2::zeros((8, 4));
            n.row_mut(pk).assign(&k);
            rotary.rotate(m.view_mut(), 4, &tables).unwrap();
            rotary.rotate(n.view_mut(), 4, &tables).unwrap();
            m.row(pq).dot(&n.row(pk))
        };
        assert!((dot_at(2, 0) - dot_at(7, 5)).abs() < 1e-5);
    }

    #[test]
    fn partial_rotation_leaves_the_rest_alone() {
        let rotary = Rotary::new(2, 10000.0, RopeScaling::None, 64).unwrap();
        let tables = rotary.tables(3);
        let mut x = Array2::from_elem((3, 8), 1.0f32); // two heads of 4, 2 dims turn in each
        rotary.rotate(x.view_mut(), 4, &tables).unwrap();
        for p in 0..3 {
            assert_eq!([x[[p, 2]], x[[p, 3]], x[[p, 6]], x[[p, 7]]], [1.0; 4]);
            assert!((x[[p, 0]] - ((p as f32).cos() - (p as f32).sin())).abs() < 1e-6);
        }
    }

    #[test]
    fn linear_scaling_divides_the_frequencies_and_dynamic_waits_for_long_texts() {
        let plain = Rotary::new(8, 10000.0, RopeScaling::None, 16).unwrap();
        let linear = Rotary { scaling: RopeScaling::Linear { factor: 2.0 }, ..plain.clone() };
        let dynamic = Rotary { scaling: RopeScaling::Dynamic { factor: 2.0 }, ..plain.clone() };
        let (p, l) = (plain.inv_freq(4).0, linear.inv_freq(4).0);
        assert!(p.iter().zip(&l).all(|(a, b)| (a / 2.0 - b).abs() < 1e-9));
        assert_eq!(dynamic.inv_freq(16).0, p, "no change within max_position_embeddings");
        assert!(dynamic.inv_freq(32).0[1] < p[1], "a longer text lowers the frequencies");
    }
}
