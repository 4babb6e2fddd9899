//! The wasm API as JavaScript sees it: shapes, values and errors crossing the boundary.
//! Run by `wasm-pack test --node` and, with WASM_BINDGEN_USE_BROWSER=1,
//! `wasm-pack test --headless --chrome`.
#![cfg(target_arch = "wasm32")]

mod common;

use common::{assert_close, flat, golden};
use headmap::wasm::{attention, examples, limits, weighted_sum, Session};
use js_sys::{Array, Float32Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn js(json: &str) -> JsValue {
    js_sys::JSON::parse(json).expect("test JSON parses")
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &key.into()).expect("a property")
}

fn num(obj: &JsValue, key: &str) -> f64 {
    get(obj, key).as_f64().unwrap_or_else(|| panic!("`{key}` is a number"))
}

fn floats(value: JsValue) -> Vec<f32> {
    value.dyn_into::<Float32Array>().expect("a Float32Array").to_vec()
}

/// The message of the JS Error a call failed with.
fn message<T>(result: Result<T, wasm_bindgen::JsError>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => JsValue::from(e).dyn_into::<js_sys::Error>().expect("a JS Error").message().into(),
    }
}

#[wasm_bindgen_test]
fn a_padded_batch_crosses_as_h_tq_tk_with_zero_pad_columns() {
    let session = Session::new(js(r#"{"preset":"small","seed":1}"#)).unwrap();
    let run = session
        .run(js(r#"{"texts":["동물이 길을 건너지 않았다. 그것은 너무 피곤했다.","민수가 영희에게 책을 주었다."],"mask":"padding"}"#))
        .unwrap();
    let meta = run.meta().unwrap();
    assert_eq!((num(&meta, "heads"), num(&meta, "tq"), num(&meta, "tk")), (4.0, 9.0, 9.0));
    assert_eq!(num(&meta, "batch"), 2.0);
    let keys: Array = get(&meta, "keys").dyn_into().unwrap();
    let row1: Array = keys.get(1).dyn_into().unwrap();
    assert_eq!(row1.get(0).as_string().unwrap(), "민수가", "Korean survives the trip");
    assert_eq!(row1.get(8).as_string().unwrap(), "[PAD]");
    let w = run.weights(1, 0).unwrap().to_vec();
    assert_eq!(w.len(), 4 * 9 * 9);
    for (i, &v) in w.iter().enumerate() {
        if i % 9 >= 5 {
            assert_eq!(v, 0.0, "PAD column at flat index {i}");
        }
    }
    assert!(num(&get(&meta, "cost"), "score_macs") > 0.0);
}

#[wasm_bindgen_test]
fn cross_attention_is_rectangular_and_traceable() {
    let session = Session::new(JsValue::UNDEFINED).unwrap();
    let run = session
        .run(js(r#"{"texts":["동물이 길을 건너지 않았다."],"targets":["The animal did not cross the road ."],"mask":"cross"}"#))
        .unwrap();
    let meta = run.meta().unwrap();
    assert_eq!((num(&meta, "tq"), num(&meta, "tk")), (8.0, 5.0));
    let trace: JsValue = session.trace(&run, 0, 1, 2).unwrap().into();
    assert_eq!((num(&trace, "tq"), num(&trace, "tk"), num(&trace, "dK")), (8.0, 5.0, 16.0));
    let weights = get(&trace, "weights");
    assert_eq!((num(&weights, "rows"), num(&weights, "cols")), (8.0, 5.0));
    let from_trace = floats(get(&weights, "data"));
    let from_run = run.weights(0, 1).unwrap().to_vec();
    assert_eq!(from_trace[..], from_run[2 * 40..3 * 40], "head 2 of layer 1");
    let x_q = get(&trace, "xQ");
    assert_eq!(num(&x_q, "cols"), 64.0);
}

#[wasm_bindgen_test]
fn the_causal_trace_marks_the_future_minus_infinity() {
    let session = Session::new(JsValue::UNDEFINED).unwrap();
    let run = session.run(js(r#"{"texts":["Minsu gave Younghee a book."],"mask":"causal","scale":false}"#)).unwrap();
    let trace: JsValue = session.trace(&run, 0, 0, 0).unwrap().into();
    assert_eq!(num(&trace, "scale"), 1.0, "scaling switched off");
    let masked = floats(get(&get(&trace, "masked"), "data"));
    assert_eq!(masked[1], f32::NEG_INFINITY);
    let weights = floats(get(&get(&trace, "weights"), "data"));
    assert_eq!(weights[0], 1.0);
    assert_eq!(weights[1], 0.0);
}

#[wasm_bindgen_test]
fn raw_attention_matches_pytorch_across_the_boundary() {
    let fixture = golden();
    for case in fixture["sdpa"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let to_f32 = |key: &str| flat(&case[key]).into_iter().map(|x| x as f32).collect::<Vec<f32>>();
        let d_k = case["q"][0].as_array().unwrap().len();
        let d_v = case["v"][0].as_array().unwrap().len();
        let options = Object::new();
        let kind = case["mask"].as_str().unwrap();
        Reflect::set(&options, &"causal".into(), &kind.starts_with("causal").into()).unwrap();
        Reflect::set(&options, &"scale".into(), &case["scale"].as_bool().unwrap().into()).unwrap();
        if let Some(valid) = case["key_valid"].as_array() {
            let arr: Array = valid.iter().map(|b| JsValue::from(b.as_bool().unwrap())).collect();
            Reflect::set(&options, &"keyValid".into(), &arr).unwrap();
        }
        let got: JsValue =
            attention(&to_f32("q"), &to_f32("k"), &to_f32("v"), d_k, d_v, options.into()).unwrap().into();
        assert_close(&floats(get(&get(&got, "weights"), "data")), &flat(&case["weights"]), 1e-5, name);
        assert_close(&floats(get(&get(&got, "output"), "data")), &flat(&case["output"]), 1e-5, name);
    }
}

#[wasm_bindgen_test]
fn the_seed_weighted_sum_is_8_2() {
    let got = weighted_sum(&[0.7, 0.1, 0.2], &[10.0, 0.0, 0.0, 10.0, 5.0, 5.0], 2).unwrap().to_vec();
    assert!((got[0] - 8.0).abs() < 1e-5 && (got[1] - 2.0).abs() < 1e-5, "{got:?}");
}

#[wasm_bindgen_test]
fn examples_and_limits_are_there() {
    let list: Array = examples().unwrap().dyn_into().unwrap();
    assert_eq!(list.length(), 4);
    assert_eq!(get(&list.get(0), "text").as_string().unwrap(), "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.");
    assert_eq!(num(&limits().unwrap(), "maxTokens"), 2048.0);
}

#[wasm_bindgen_test]
fn errors_arrive_as_js_errors_with_a_message() {
    let session = Session::new(JsValue::UNDEFINED).unwrap();
    assert_eq!(
        message(session.run(js(r#"{"texts":["  "],"mask":"padding"}"#))),
        "the text is empty: type a sentence to see its attention"
    );
    let long = format!(r#"{{"texts":["{}"],"mask":"padding"}}"#, "a ".repeat(2100));
    assert_eq!(message(session.run(js(&long))), "the text has 2100 tokens, more than the maximum of 2048");
    assert!(message(session.run(js(r#"{"texts":["a"],"mask":"diagonal"}"#))).contains("unknown mask `diagonal`"));
    assert!(message(session.run(js(r#"{"texts":"not a list","mask":"none"}"#))).starts_with("invalid request"));
    assert!(message(Session::new(js(r#"{"preset":"huge"}"#))).contains("unknown preset"));
    assert!(message(Session::new(js(r#"{"layers":0}"#))).contains("outside 1..=12"));
    let run = session.run(js(r#"{"texts":["a b"],"mask":"none"}"#)).unwrap();
    assert!(message(run.weights(0, 9)).contains("no weights for row 0, layer 9"));
    assert!(message(session.trace(&run, 0, 0, 99)).contains("head 99 does not exist"));
    assert!(message(attention(&[1.0, 2.0, 3.0], &[1.0, 2.0], &[1.0], 2, 1, JsValue::UNDEFINED))
        .contains("do not fill rows of 2"));
    assert!(message(attention(&[f32::NAN, 0.0], &[1.0, 2.0], &[1.0], 2, 1, JsValue::UNDEFINED)).contains("non-finite"));
    assert!(message(attention(&[1.0, 0.0], &[1.0, 2.0, 3.0, 4.0], &[1.0], 2, 1, JsValue::UNDEFINED))
        .contains("`K` has shape"));
    assert!(message(weighted_sum(&[0.5, 0.5], &[1.0, 2.0, 3.0], 3)).contains("`weights` has shape [2]"));
}

#[wasm_bindgen_test]
fn the_mask_crosses_as_one_byte_per_cell() {
    let session = Session::new(JsValue::UNDEFINED).unwrap();
    let run = session.run(js(r#"{"texts":["a b c","d e"],"mask":"causal"}"#)).unwrap();
    assert_eq!(run.allowed(1).unwrap().to_vec(), [1, 0, 0, 1, 1, 0, 1, 1, 0], "causal and PAD combined");
    let none = session.run(js(r#"{"texts":["a b"],"mask":"none"}"#)).unwrap();
    assert_eq!(none.allowed(0).unwrap().to_vec(), [1, 1, 1, 1]);
    assert!(message(none.allowed(3)).contains("no mask for row 3"));
}
