//! RoPE settings as checkpoints write them, read into a [`Rotary`]. Two forms exist:
//! transformers 5 saves `"rope_parameters": { "rope_type", "rope_theta", … }`; Hub files have
//! a top-level `"rope_theta"` and `"rope_scaling": null | { "type" or "rope_type", … }`
//! (GPT-NeoX: `"rotary_emb_base"` and `"rotary_pct"`). `rope_parameters` wins when both are
//! there. Types headmap does not compute (`longrope`, `proportional`, per-layer parameters)
//! are refused by name. Mirrors transformers' `modeling_rope_utils.py`.

use serde::Deserialize;
use serde_json::Value;

use crate::attention::rotary::{yarn_mscale, RopeScaling, Rotary};
use crate::error::{Error, FileProblem, Result};

/// One flat dictionary of RoPE parameters, in either form.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Parameters {
    rope_type: Option<String>,
    #[serde(rename = "type")]
    legacy_type: Option<String>,
    rope_theta: Option<f64>,
    factor: Option<f64>,
    partial_rotary_factor: Option<f64>,
    low_freq_factor: Option<f64>,
    high_freq_factor: Option<f64>,
    original_max_position_embeddings: Option<usize>,
    attention_factor: Option<f64>,
    beta_fast: Option<f64>,
    beta_slow: Option<f64>,
    mscale: Option<f64>,
    mscale_all_dim: Option<f64>,
    truncate: Option<bool>,
}

/// What a config says about RoPE, wherever it says it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RopeSettings<'a> {
    /// `rope_parameters` (transformers 5).
    pub parameters: Option<&'a Value>,
    /// `rope_scaling` (older files).
    pub scaling: Option<&'a Value>,
    /// The top-level base: `rope_theta`, or GPT-NeoX's `rotary_emb_base`.
    pub theta: Option<f64>,
    pub default_theta: f64,
    /// The top-level share of each head that turns: `partial_rotary_factor`, GPT-NeoX's `rotary_pct`.
    pub partial: Option<f64>,
    pub default_partial: f64,
    /// A top-level `original_max_position_embeddings` (Phi-3 style), which wins.
    pub original_max_positions: Option<usize>,
    pub max_positions: usize,
}

fn refuse(setting: &str, value: impl std::fmt::Display, reason: &str) -> Error {
    Error::file("config.json", FileProblem::unsupported(setting, value, reason))
}

fn impossible(setting: &str, value: impl std::fmt::Display, reason: &str) -> Error {
    Error::file("config.json", FileProblem::impossible(setting, value, reason))
}

/// The rotation of heads of width `head_dim` that `settings` describe.
pub(crate) fn rotary(settings: &RopeSettings, head_dim: usize) -> Result<Rotary> {
    let (key, value) = match (settings.parameters, settings.scaling) {
        (Some(v), _) if !v.is_null() => ("rope_parameters", Some(v)),
        (_, Some(v)) if !v.is_null() => ("rope_scaling", Some(v)),
        _ => ("rope_parameters", None),
    };
    let p: Parameters = match value {
        None => Parameters::default(),
        Some(Value::Object(map)) => {
            // Gemma-style parameters per layer type: a map of maps
            if let Some((name, _)) = map.iter().find(|(_, v)| v.is_object()) {
                return Err(refuse(
                    &format!("{key}.{name}"),
                    "{…}",
                    "headmap reads one set of RoPE parameters for every layer",
                ));
            }
            serde_json::from_value(Value::Object(map.clone())).map_err(|_| {
                Error::file(
                    "config.json",
                    FileProblem::WrongType { field: key.to_string(), expected: "RoPE parameters".into() },
                )
            })?
        }
        Some(_) => {
            return Err(Error::file(
                "config.json",
                FileProblem::WrongType { field: key.to_string(), expected: "a map of RoPE parameters".into() },
            ))
        }
    };
    let base = p.rope_theta.or(settings.theta).unwrap_or(settings.default_theta);
    if !(base.is_finite() && base > 1.0) {
        return Err(impossible("rope_theta", base, "it must be a number above 1"));
    }
    let partial = p.partial_rotary_factor.or(settings.partial).unwrap_or(settings.default_partial);
    if !(partial.is_finite() && partial >= 0.0) {
        return Err(impossible("partial_rotary_factor", partial, "it must be a share of a head, 0 or more"));
    }
    // transformers: dim = int(head_dim * partial_rotary_factor), ⌈dim/2⌉ frequencies over dim,
    // turning 2·⌈dim/2⌉ dimensions (an odd dim turns one more; 0 turns none)
    let dim = (head_dim as f64 * partial) as usize;
    // a factor of 1e300 saturates `dim`: the count saturates too, and is refused below
    let turned = dim.div_ceil(2).saturating_mul(2);
    if turned > head_dim {
        if p.partial_rotary_factor.or(settings.partial).is_none() {
            // no share in the file: the head itself is what cannot be turned
            let reason = "rotary positions turn a head's dimensions in pairs, and this head has an odd number";
            return Err(impossible("head_dim", head_dim, reason));
        }
        let reason = format!("it would turn {turned} of a head's {head_dim} dimensions");
        return Err(impossible("partial_rotary_factor", partial, &reason));
    }
    let rope_type = p.rope_type.clone().or(p.legacy_type.clone()).unwrap_or_else(|| "default".into());
    let type_key = format!("{key}.rope_type");
    let factor = |required: bool| -> Result<f64> {
        match p.factor {
            Some(f) if f.is_finite() && f > 0.0 => Ok(f),
            Some(f) => Err(impossible(&format!("{key}.factor"), f, "it must be a positive number")),
            None if required => Err(impossible(&format!("{key}.factor"), "missing", &format!("{rope_type} needs it"))),
            None => Ok(1.0),
        }
    };
    let original =
        settings.original_max_positions.or(p.original_max_position_embeddings).unwrap_or(settings.max_positions);
    let scaling = match rope_type.as_str() {
        "default" => RopeScaling::None,
        "linear" => RopeScaling::Linear { factor: factor(true)? as f32 },
        // transformers raises a ZeroDivisionError: the base's exponent is dim / (dim - 2)
        "dynamic" if dim == 2 => {
            return Err(impossible(&type_key, "dynamic", "it divides by the rotary width − 2, and the width is 2"))
        }
        "dynamic" => RopeScaling::Dynamic { factor: factor(true)? as f32 },
        "llama3" => {
            let need = |name: &str, v: Option<f64>| {
                v.ok_or_else(|| impossible(&format!("{key}.{name}"), "missing", "llama3 RoPE needs it"))
            };
            let (low, high) =
                (need("low_freq_factor", p.low_freq_factor)?, need("high_freq_factor", p.high_freq_factor)?);
            if high <= low {
                return Err(impossible(&format!("{key}.high_freq_factor"), high, "it must be above low_freq_factor"));
            }
            RopeScaling::Llama3 {
                factor: factor(true)? as f32,
                low_freq_factor: low as f32,
                high_freq_factor: high as f32,
                original_max_positions: original,
            }
        }
        // transformers' ramp has ⌊dim/2⌋ entries for ⌈dim/2⌉ frequencies: from 5 on an odd dim fails
        "yarn" if !dim.is_multiple_of(2) && dim >= 5 => {
            let reason =
                format!("yarn needs an even rotary width (or 1 or 3), and int({head_dim} · {partial}) = {dim}");
            return Err(impossible("partial_rotary_factor", partial, &reason));
        }
        "yarn" => {
            let factor = match p.factor {
                Some(_) => factor(true)?,
                None => settings.max_positions as f64 / original.max(1) as f64,
            };
            let attention_factor = match (p.attention_factor, p.mscale, p.mscale_all_dim) {
                (Some(a), _, _) => a,
                (None, Some(m), Some(all)) if m != 0.0 && all != 0.0 => {
                    yarn_mscale(factor, m) / yarn_mscale(factor, all)
                }
                _ => yarn_mscale(factor, 1.0),
            };
            RopeScaling::Yarn {
                factor: factor as f32,
                original_max_positions: original.max(1),
                attention_factor: attention_factor as f32,
                beta_fast: p.beta_fast.filter(|b| *b != 0.0).unwrap_or(32.0) as f32,
                beta_slow: p.beta_slow.filter(|b| *b != 0.0).unwrap_or(1.0) as f32,
                truncate: p.truncate.unwrap_or(true),
            }
        }
        other => {
            return Err(refuse(
                &type_key,
                other,
                "headmap computes the RoPE types default, linear, dynamic, llama3 and yarn",
            ))
        }
    };
    Rotary::new(dim, base as f32, scaling, settings.max_positions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(parameters: &Value) -> RopeSettings<'_> {
        RopeSettings {
            parameters: Some(parameters),
            default_theta: 10000.0,
            default_partial: 1.0,
            max_positions: 128,
            ..RopeSettings::default()
        }
    }

    fn assert_freqs(got: (Vec<f32>, f32), want: &[f64], factor: f64, label: &str) {
        for (i, (g, w)) in got.0.iter().zip(want).enumerate() {
            assert!((f64::from(*g) - w).abs() <= 1e-6 * w.abs(), "{label}: inv_freq[{i}] {g}, transformers {w}");
        }
        assert!((f64::from(got.1) - factor).abs() < 1e-6, "{label}: attention factor {}, transformers {factor}", got.1);
    }

    #[test]
    fn yarn_and_dynamic_frequencies_equal_transformers() {
        // transformers 5.24 ROPE_INIT_FUNCTIONS for a Llama with head_dim 16, max positions 128
        let yarn =
            json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32, "rope_theta": 10000.0});
        let want = [
            1.0,
            0.19764235615730286,
            0.025000000372529,
            0.007905694656074047,
            0.0024999999441206455,
            0.0007905694656074047,
            0.0002500000118743628,
            7.905694656074047e-05,
        ];
        assert_freqs(rotary(&settings(&yarn), 16).unwrap().inv_freq(10), &want, 1.138629436111989, "yarn");
        let mscale = json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32, "rope_theta": 10000.0,
                            "mscale": 0.707, "mscale_all_dim": 1.0, "beta_fast": 16, "beta_slow": 2});
        let want = [
            1.0,
            0.07905694097280502,
            0.025000000372529,
            0.007905694656074047,
            0.0024999999441206455,
            0.0007905694656074047,
            0.0002500000118743628,
            7.905694656074047e-05,
        ];
        assert_freqs(
            rotary(&settings(&mscale), 16).unwrap().inv_freq(10),
            &want,
            0.964326914892074,
            "yarn with mscale",
        );
        let dynamic = json!({"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0});
        let want = [
            1.0,
            0.26244500279426575,
            0.06887736916542053,
            0.018076520413160324,
            0.0047440920025110245,
            0.0012450632639229298,
            0.0003267606080044061,
            8.575667743571103e-05,
        ];
        assert_freqs(rotary(&settings(&dynamic), 16).unwrap().inv_freq(300), &want, 1.0, "dynamic at 300 positions");
    }

    #[test]
    fn an_odd_rotary_width_turns_one_more_dimension_with_frequencies_over_it() {
        // transformers 5.24 GPTNeoXRotaryEmbedding / ROPE_INIT_FUNCTIONS, max positions 128:
        // (rope parameters, head_dim, dimensions turned, inv_freq)
        let cases = [
            (json!({"partial_rotary_factor": 0.5}), 10, 6, vec![1.0, 0.025118863210082054, 0.0006309573072940111]),
            (json!({"partial_rotary_factor": 0.1}), 16, 2, vec![1.0]),
            (json!({"partial_rotary_factor": 0.1}), 6, 0, vec![]),
            (
                json!({"partial_rotary_factor": 0.5, "rope_type": "linear", "factor": 2.0}),
                10,
                6,
                vec![0.5, 0.012559431605041027, 0.00031547865364700556],
            ),
            (
                json!({"partial_rotary_factor": 0.5, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0, "original_max_position_embeddings": 64}),
                10,
                6,
                vec![1.0, 0.0031398579012602568, 7.886966341175139e-05],
            ),
            (
                json!({"partial_rotary_factor": 0.5, "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}),
                6,
                4,
                vec![1.0, 0.002154434332624078],
            ),
        ];
        for (parameters, head_dim, turned, want) in cases {
            let label = format!("{parameters} at head_dim {head_dim}");
            let r = rotary(&settings(&parameters), head_dim).unwrap();
            assert_eq!((r.dims, r.inv_freq(10).0.len()), (turned, want.len()), "{label}");
            let factor = r.inv_freq(10).1.into();
            assert_freqs(r.inv_freq(10), &want, factor, &label);
        }
        let dynamic = json!({"partial_rotary_factor": 0.5, "rope_type": "dynamic", "factor": 2.0});
        let at_300 = rotary(&settings(&dynamic), 6).unwrap().inv_freq(300);
        assert_freqs(at_300, &[1.0, 0.0001584415731485933], 1.0, "dynamic, dim 3, at 300 positions");
    }

    #[test]
    fn a_rotary_width_transformers_cannot_run_is_refused() {
        let refused =
            |parameters: Value, head_dim: usize| rotary(&settings(&parameters), head_dim).unwrap_err().to_string();
        let e = refused(json!({"partial_rotary_factor": 1.0}), 5);
        assert!(
            e.contains("`partial_rotary_factor` = 1 is impossible: it would turn 6 of a head's 5 dimensions"),
            "{e}"
        );
        let e = refused(json!({"partial_rotary_factor": -0.5}), 8);
        assert!(e.contains("`partial_rotary_factor` = -0.5 is impossible"), "{e}");
        // dim / (dim - 2): a ZeroDivisionError in transformers
        let e = refused(json!({"partial_rotary_factor": 0.5, "rope_type": "dynamic", "factor": 2.0}), 4);
        assert!(e.contains("`rope_parameters.rope_type` = dynamic is impossible"), "{e}");
        // yarn's ramp of 2 entries against 3 frequencies: a RuntimeError in transformers
        let yarn = json!({"partial_rotary_factor": 0.5, "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32});
        assert!(refused(yarn, 10).contains("yarn needs an even rotary width"));
    }

    #[test]
    fn the_legacy_form_reads_type_and_top_level_theta() {
        let scaling = json!({"type": "linear", "factor": 2.0});
        let s = RopeSettings { parameters: None, scaling: Some(&scaling), theta: Some(500000.0), ..settings(&scaling) };
        let r = rotary(&s, 8).unwrap();
        assert_eq!((r.base, r.dims, r.scaling.clone()), (500000.0, 8, RopeScaling::Linear { factor: 2.0 }));
    }
}
