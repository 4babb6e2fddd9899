//! headmap against PyTorch: scaled dot-product and multi-head attention for every mask type,
//! from `tests/fixtures/attention_golden.json` (written by `scripts/dev/make_golden.py`).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{assert_close, flat, golden, matrix};
use headmap::nn::Linear;
use headmap::{scaled_dot_product_attention, Mask, MultiHeadAttention};
use ndarray::Array1;
use serde_json::Value;

const TOL: f64 = 1e-5;

fn mask_for(case: &Value, tq: usize, tk: usize) -> Option<Mask> {
    let key_valid: Option<Vec<bool>> =
        case["key_valid"].as_array().map(|v| v.iter().map(|b| b.as_bool().expect("bool")).collect());
    let padding = key_valid.map(|valid| Mask::key_padding(tq, &valid));
    match case["mask"].as_str().expect("mask") {
        "none" => None,
        "padding" | "cross" => padding,
        "causal" => Some(Mask::causal(tq)),
        "causal+padding" => Some(Mask::causal(tq).and(&padding.expect("key_valid")).expect("same shape")),
        other => panic!("unknown mask {other} (tk {tk})"),
    }
}

#[test]
fn scaled_dot_product_attention_matches_pytorch() {
    let fixture = golden();
    let cases = fixture["sdpa"].as_array().expect("sdpa cases");
    assert!(cases.len() >= 5);
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let (q, k, v) = (matrix(&case["q"]), matrix(&case["k"]), matrix(&case["v"]));
        let mask = mask_for(case, q.nrows(), k.nrows());
        let scale = case["scale"].as_bool().expect("scale");
        let got = scaled_dot_product_attention(q.view(), k.view(), v.view(), mask.as_ref(), scale).expect(name);
        assert_close(got.weights.as_slice().unwrap(), &flat(&case["weights"]), TOL, &format!("{name}: weights"));
        assert_close(got.output.as_slice().unwrap(), &flat(&case["output"]), TOL, &format!("{name}: output"));
    }
}

#[test]
fn multi_head_attention_matches_pytorch() {
    let fixture = golden();
    let cases = fixture["mha"].as_array().expect("mha cases");
    assert!(cases.len() >= 5);
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let linear = |w: &str, b: &str| {
            let bias: Array1<f32> = flat(&case[b]).into_iter().map(|x| x as f32).collect();
            Linear::new(w, matrix(&case[w]), Some(bias)).expect(w)
        };
        let heads = case["heads"].as_u64().expect("heads") as usize;
        let block = MultiHeadAttention::new(
            linear("w_q", "b_q"),
            linear("w_k", "b_k"),
            linear("w_v", "b_v"),
            linear("w_o", "b_o"),
            heads,
        )
        .expect(name);
        let (x_q, x_kv) = (matrix(&case["x_q"]), matrix(&case["x_kv"]));
        let mask = mask_for(case, x_q.nrows(), x_kv.nrows());
        let got = block.forward(x_q.view(), x_kv.view(), mask.as_ref(), true).expect(name);
        assert_eq!(got.weights.dim().0, heads, "{name}: one weight matrix per head");
        assert_close(got.weights.as_slice().unwrap(), &flat(&case["weights"]), TOL, &format!("{name}: weights"));
        assert_close(got.output.as_slice().unwrap(), &flat(&case["output"]), TOL, &format!("{name}: output"));
    }
}
