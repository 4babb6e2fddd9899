//! Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"):
//! how much each token's representation after layer l draws on each input token, when the
//! residual stream is counted as half of every layer.
//!
//! Per layer the heads are fused (mean, max or min) into F, the residual added as
//! Â = 0.5·F + 0.5·I, each row renormalized to sum 1, and the layers multiplied through:
//! R₀ = Â₀, R_l = Â_l·R_{l−1}. Computed in f64, given as f32.

use ndarray::{Array2, Axis};
use serde::Serialize;

use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::run::RowAttention;

/// How one layer's heads become one matrix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    #[default]
    Mean,
    Max,
    Min,
}

impl Fusion {
    pub const ALL: [Fusion; 3] = [Fusion::Mean, Fusion::Max, Fusion::Min];

    pub fn name(self) -> &'static str {
        match self {
            Fusion::Mean => "mean",
            Fusion::Max => "max",
            Fusion::Min => "min",
        }
    }

    pub fn parse(name: &str) -> Result<Fusion> {
        Fusion::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| Error::unknown("fusion", name, &["mean", "max", "min"]))
    }
}

/// The rollout of one batch row at a self-attention place after every layer: L matrices of
/// (T, T), row i the share of each input token in token i's representation.
pub fn rollout(row: &RowAttention, place: Place, fusion: Fusion) -> Result<Vec<Array2<f32>>> {
    if place == Place::Cross {
        return Err(Error::RolloutNeedsSelf { place: place.name().to_string() });
    }
    let (t, _) = row.size();
    let mut joint: Option<Array2<f64>> = None;
    let mut out = Vec::with_capacity(row.layers());
    for layer in 0..row.layers() {
        let weights = row.layer(layer)?; // (H, T, T)
        let heads = weights.len_of(Axis(0)).max(1);
        let start = match fusion {
            Fusion::Mean => 0.0,
            Fusion::Max => f64::NEG_INFINITY,
            Fusion::Min => f64::INFINITY,
        };
        let mut fused = Array2::<f64>::from_elem((t, t), start);
        for head in weights.axis_iter(Axis(0)) {
            ndarray::Zip::from(&mut fused).and(&head).for_each(|f, &w| {
                let w = w as f64;
                *f = match fusion {
                    Fusion::Mean => *f + w,
                    Fusion::Max => f.max(w),
                    Fusion::Min => f.min(w),
                };
            });
        }
        if fusion == Fusion::Mean {
            fused.mapv_inplace(|x| x / heads as f64);
        }
        fused.mapv_inplace(|x| 0.5 * x);
        for i in 0..t {
            fused[[i, i]] += 0.5;
        }
        for mut r in fused.rows_mut() {
            let sum: f64 = r.sum();
            if sum > 0.0 {
                r.mapv_inplace(|x| x / sum);
            }
        }
        let next = match &joint {
            None => fused,
            Some(previous) => fused.dot(previous),
        };
        out.push(next.mapv(|x| x as f32));
        joint = Some(next);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_names_round_trip() {
        for f in Fusion::ALL {
            assert_eq!(Fusion::parse(f.name()).unwrap(), f);
        }
        assert!(Fusion::parse("sum").is_err());
    }
}
