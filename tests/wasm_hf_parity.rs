//! Real models in wasm against transformers: every layer, head and row of each place of every
//! family's fixture, to 1e-4, as `tests/hf_parity.rs` checks them natively. Run with
//! `--features hf` (see scripts/test).
#![cfg(all(target_arch = "wasm32", feature = "hf"))]

mod wasm_hf_common;

use headmap::wasm::Model;
use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;
use wasm_hf_common::{bert, get, js, message};

/// Runs reference case `case` from its texts and compares every layer, head and row of each
/// place with what transformers computed, to 1e-4.
fn check_parity(model: &Model, reference: &str, tensors: &[u8], case: usize, places: &[(&str, &str)]) -> f32 {
    let mut worst = 0f32;
    let reference: serde_json::Value = serde_json::from_str(reference).unwrap();
    let c = &reference["cases"][case];
    let texts = c.get("texts").or_else(|| c.get("sources")).unwrap();
    let request =
        serde_json::json!({ "texts": texts, "targets": c.get("targets").cloned().unwrap_or(serde_json::json!([])) });
    let run = model.run(js(&request.to_string())).unwrap();
    let refs = safetensors::SafeTensors::deserialize(tensors).unwrap();
    let info: JsValue = run.info().unwrap().into();
    let summaries: Array = get(&info, "places").dyn_into().unwrap();
    for &(kind, key) in places {
        let meta = summaries.iter().find(|p| get(p, "place").as_string().as_deref() == Some(kind)).unwrap();
        let layers = get(&meta, "layers").as_f64().unwrap() as usize;
        let batch = get(&meta, "batch").as_f64().unwrap() as usize;
        for layer in 0..layers {
            let t = refs.tensor(&format!("case{case}.{key}.{layer}")).unwrap();
            let want: Vec<f32> =
                t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            let per_row = want.len() / batch;
            for row in 0..batch {
                // a row crosses as one copy [L, H, Tq, Tk]; this layer is its slice
                let all: Vec<f32> =
                    js_sys::Float32Array::from(get(&run.row(kind, row).unwrap().into(), "weights")).to_vec();
                let got = all[layer * per_row..(layer + 1) * per_row].to_vec();
                assert_eq!(got.len(), per_row, "{kind} layer {layer} row {row}: shape");
                for (i, (g, w)) in got.iter().zip(&want[row * per_row..]).enumerate() {
                    assert!((g - w).abs() <= 1e-4, "{kind} layer {layer} row {row} [{i}]: wasm {g}, transformers {w}");
                    worst = worst.max((g - w).abs());
                }
            }
        }
    }
    worst
}

#[wasm_bindgen_test]
fn tiny_bert_in_wasm_matches_transformers_on_a_padded_batch() {
    let model = bert().unwrap();
    let reference = include_str!("fixtures/hf/bert/reference.json");
    let tensors = include_bytes!("fixtures/hf/bert/reference.safetensors");
    for case in 0..3 {
        check_parity(&model, reference, tensors, case, &[("encoder_self", "attentions")]);
    }
}

#[wasm_bindgen_test]
fn tiny_bart_in_wasm_matches_transformers_in_all_three_places() {
    let model = Model::from_files(
        include_bytes!("fixtures/hf/bart/config.json"),
        include_bytes!("fixtures/hf/bart/model.safetensors"),
        Some(include_bytes!("fixtures/hf/bart/tokenizer.json").to_vec()),
        None,
        None,
        None,
        None,
    )
    .unwrap();
    let places =
        [("encoder_self", "encoder_attentions"), ("decoder_self", "decoder_attentions"), ("cross", "cross_attentions")];
    for case in 0..2 {
        check_parity(
            &model,
            include_str!("fixtures/hf/bart/reference.json"),
            include_bytes!("fixtures/hf/bart/reference.safetensors"),
            case,
            &places,
        );
    }
}

/// A fixture model folder with a tokenizer.json, as the page loads it.
macro_rules! fixture {
    ($dir:literal) => {
        Model::from_files(
            include_bytes!(concat!("fixtures/hf/", $dir, "/config.json")),
            include_bytes!(concat!("fixtures/hf/", $dir, "/model.safetensors")),
            Some(include_bytes!(concat!("fixtures/hf/", $dir, "/tokenizer.json")).to_vec()),
            None,
            None,
            None,
            None,
        )
        .unwrap()
    };
}

/// Every reference case of fixture `$dir` from its texts, every layer, head and row of `$places`.
macro_rules! parity {
    ($model:expr, $dir:literal, $places:expr) => {{
        let model = &$model;
        let reference = include_str!(concat!("fixtures/hf/", $dir, "/reference.json"));
        let cases = serde_json::from_str::<serde_json::Value>(reference).unwrap()["cases"].as_array().unwrap().len();
        let mut worst = 0f32;
        for case in 0..cases {
            worst = worst.max(check_parity(
                model,
                reference,
                include_bytes!(concat!("fixtures/hf/", $dir, "/reference.safetensors")),
                case,
                $places,
            ));
        }
        wasm_bindgen_test::console_log!("{}: largest difference from transformers in wasm {worst:e}", $dir);
    }};
}

const ENCODER: &[(&str, &str)] = &[("encoder_self", "attentions")];
const DECODER: &[(&str, &str)] = &[("decoder_self", "attentions")];
const ALL_THREE: &[(&str, &str)] =
    &[("encoder_self", "encoder_attentions"), ("decoder_self", "decoder_attentions"), ("cross", "cross_attentions")];

#[wasm_bindgen_test]
fn the_new_encoders_in_wasm_match_transformers() {
    parity!(fixture!("roberta"), "roberta", ENCODER);
    parity!(fixture!("xlm-roberta"), "xlm-roberta", ENCODER);
    parity!(fixture!("distilbert"), "distilbert", ENCODER);
    parity!(fixture!("electra"), "electra", ENCODER);
}

#[wasm_bindgen_test]
fn the_new_decoders_in_wasm_match_transformers() {
    parity!(fixture!("gpt_neox"), "gpt_neox", DECODER);
    parity!(fixture!("gpt_neox-sequential"), "gpt_neox-sequential", DECODER);
    parity!(fixture!("gpt_neo"), "gpt_neo", DECODER);
    parity!(fixture!("gpt2-inverse-layer"), "gpt2-inverse-layer", DECODER);
}

#[wasm_bindgen_test]
fn llama_qwen2_and_mistral_in_wasm_match_transformers_and_show_shared_keys_and_windows() {
    parity!(fixture!("llama"), "llama", DECODER);
    parity!(fixture!("llama3"), "llama3", DECODER);
    parity!(fixture!("qwen2"), "qwen2", DECODER);
    let mistral = fixture!("mistral");
    parity!(mistral, "mistral", DECODER);
    let info: JsValue = mistral.info().unwrap().into();
    let place = get(&info, "places").dyn_into::<Array>().unwrap().get(0);
    assert_eq!((get(&place, "heads").as_f64(), get(&place, "kvHeads").as_f64()), (Some(4.0), Some(1.0)));
    assert_eq!(get(&place, "dK").as_f64(), Some(16.0), "head_dim apart from hidden_size / heads");
    let windows: Array = get(&place, "windows").dyn_into().unwrap();
    assert_eq!(windows.get(1).as_f64(), Some(5.0));
    let run = mistral.run(js(r#"{"texts":["a b c"]}"#)).unwrap();
    let trace: JsValue = run.trace("decoder_self", 0, 0, 3).unwrap().into();
    assert_eq!(get(&trace, "kvHead").as_f64(), Some(0.0));
    assert!(get(&trace, "qRotated").is_object() && get(&trace, "kRotated").is_object());
}

#[wasm_bindgen_test]
fn t5_in_wasm_matches_transformers_and_traces_its_position_bias() {
    let t5 = fixture!("t5");
    parity!(t5, "t5", ALL_THREE);
    parity!(fixture!("t5-v1_1"), "t5-v1_1", ALL_THREE);
    let run = t5.run(js(r#"{"texts":["a b c"],"targets":["d e"]}"#)).unwrap();
    let trace: JsValue = run.trace("encoder_self", 0, 1, 0).unwrap().into();
    assert_eq!(get(&trace, "scale").as_f64(), Some(1.0), "no ÷√d_k");
    assert!(get(&trace, "positionBias").is_object() && get(&trace, "biased").is_object());
    let cross: JsValue = run.trace("cross", 0, 0, 0).unwrap().into();
    assert!(get(&cross, "positionBias").is_undefined());
}

#[wasm_bindgen_test]
fn a_sharded_llama_in_wasm_equals_transformers() {
    let shard = |name: &str, bytes: &[u8]| {
        let o = js_sys::Object::new();
        Reflect::set(&o, &"name".into(), &name.into()).unwrap();
        Reflect::set(&o, &"bytes".into(), &js_sys::Uint8Array::from(bytes)).unwrap();
        JsValue::from(o)
    };
    let shards = Array::new();
    shards.push(&shard(
        "model-00001-of-00004.safetensors",
        include_bytes!("fixtures/hf/llama-sharded/model-00001-of-00004.safetensors"),
    ));
    shards.push(&shard(
        "model-00002-of-00004.safetensors",
        include_bytes!("fixtures/hf/llama-sharded/model-00002-of-00004.safetensors"),
    ));
    shards.push(&shard(
        "model-00003-of-00004.safetensors",
        include_bytes!("fixtures/hf/llama-sharded/model-00003-of-00004.safetensors"),
    ));
    let index = include_bytes!("fixtures/hf/llama-sharded/model.safetensors.index.json").to_vec();
    let load = |shards: Array| {
        Model::from_files(
            include_bytes!("fixtures/hf/llama-sharded/config.json"),
            &[],
            Some(include_bytes!("fixtures/hf/llama-sharded/tokenizer.json").to_vec()),
            None,
            None,
            Some(shards),
            Some(index.clone()),
        )
    };
    let e = message(load(shards.clone()));
    assert_eq!(
        e,
        "model.safetensors.index.json: it names the shard `model-00004-of-00004.safetensors`, which was not given"
    );
    shards.push(&shard(
        "model-00004-of-00004.safetensors",
        include_bytes!("fixtures/hf/llama-sharded/model-00004-of-00004.safetensors"),
    ));
    parity!(load(shards).unwrap(), "llama-sharded", DECODER);
}
