//! The wasm API as JavaScript sees it: shapes, values and errors crossing the boundary.
//! Run by `cargo test --target wasm32-unknown-unknown` with wasm-bindgen-test-runner as the
//! target's runner, in Node and, with WASM_BINDGEN_USE_BROWSER=1, in headless Chromium (see
//! scripts/test).
#![cfg(target_arch = "wasm32")]

use headmap::wasm::{examples, weighted_sum, Model};
use js_sys::{Array, Float32Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn js<T: JsCast>(json: &str) -> T {
    js_sys::JSON::parse(json).expect("test JSON parses").unchecked_into()
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

fn toy() -> Model {
    Model::toy(JsValue::UNDEFINED.unchecked_into()).unwrap()
}

/// The JS Error a call failed with: its message, and its `code`.
fn failure<T>(result: Result<T, JsValue>) -> (String, String) {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => {
            let code = get(&e, "code").as_string().unwrap_or_default();
            (e.dyn_into::<js_sys::Error>().expect("a JS Error").message().into(), code)
        }
    }
}

fn message<T>(result: Result<T, JsValue>) -> String {
    failure(result).0
}

#[wasm_bindgen_test]
fn a_padded_batch_crosses_as_h_tq_tk_with_zero_pad_columns() {
    let model = Model::toy(js(r#"{"preset":"small","seed":1}"#)).unwrap();
    let run = model
        .run(js(r#"{"texts":["동물이 길을 건너지 않았다. 그것은 너무 피곤했다.","민수가 영희에게 책을 주었다."],"place":"encoder_self"}"#))
        .unwrap();
    let info: JsValue = run.info().unwrap().into();
    let place: JsValue = get(&info, "places").dyn_into::<Array>().unwrap().get(0);
    assert_eq!((num(&place, "heads"), num(&place, "tq"), num(&place, "tk")), (4.0, 9.0, 9.0));
    assert_eq!(num(&place, "batch"), 2.0);
    assert_eq!(get(&place, "mask").as_string().unwrap(), "padding");
    assert!(num(&get(&place, "cost"), "scoreMacs") > 0.0);
    let tokens: JsValue = run.tokens("encoder_self", 1).unwrap().into();
    let keys: Array = get(&tokens, "keys").dyn_into().unwrap();
    assert_eq!(get(&keys.get(0), "label").as_string().unwrap(), "민수가", "Korean survives the trip");
    assert_eq!(get(&keys.get(8), "label").as_string().unwrap(), "[PAD]");
    assert_eq!(get(&keys.get(8), "kind").as_string().unwrap(), "pad");
    // a whole row in one copy: [L, H, Tq, Tk]
    let row: JsValue = run.row("encoder_self", 1).unwrap().into();
    let w = floats(get(&row, "weights"));
    assert_eq!(w.len(), 2 * 4 * 9 * 9);
    for (i, &v) in w.iter().enumerate() {
        if i % 9 >= 5 {
            assert_eq!(v, 0.0, "PAD column at flat index {i}");
        }
    }
    assert_eq!(run.head("encoder_self", 1, 1, 2).unwrap().to_vec()[..], w[(4 + 2) * 81..(4 + 3) * 81]);
    assert_eq!(floats(get(&row, "maxima")).len(), 8, "[L, H]");
}

#[wasm_bindgen_test]
fn cross_attention_is_rectangular_and_traceable() {
    let model = toy();
    let run = model
        .run(js(r#"{"texts":["동물이 길을 건너지 않았다."],"targets":["The animal did not cross the road ."],"place":"cross"}"#))
        .unwrap();
    let info: JsValue = run.info().unwrap().into();
    let place = get(&info, "places").dyn_into::<Array>().unwrap().get(0);
    assert_eq!((num(&place, "tq"), num(&place, "tk")), (8.0, 5.0));
    let trace: JsValue = run.trace("cross", 0, 1, 2).unwrap().into();
    assert_eq!((num(&trace, "tq"), num(&trace, "tk"), num(&trace, "dK")), (8.0, 5.0, 16.0));
    let weights = get(&trace, "weights");
    assert_eq!((num(&weights, "rows"), num(&weights, "cols")), (8.0, 5.0));
    let from_trace = floats(get(&weights, "data"));
    let from_run = run.head("cross", 0, 1, 2).unwrap().to_vec();
    assert_eq!(from_trace, from_run, "head 2 of layer 1");
    let x_q = get(&trace, "xQ");
    assert_eq!(num(&x_q, "cols"), 64.0);
    let output = get(&trace, "output");
    assert_eq!((num(&output, "rows"), num(&output, "cols")), (8.0, 16.0), "weights · V: one row per query");
}

#[wasm_bindgen_test]
fn the_causal_trace_marks_the_future_minus_infinity() {
    let model = toy();
    let run =
        model.run(js(r#"{"texts":["Minsu gave Younghee a book."],"place":"decoder_self","scale":false}"#)).unwrap();
    let trace: JsValue = run.trace("decoder_self", 0, 0, 0).unwrap().into();
    assert_eq!(num(&trace, "scale"), 1.0, "scaling switched off");
    let masked = floats(get(&get(&trace, "masked"), "data"));
    assert_eq!(masked[1], f32::NEG_INFINITY);
    let weights = floats(get(&get(&trace, "weights"), "data"));
    assert_eq!(weights[0], 1.0);
    assert_eq!(weights[1], 0.0);
}

#[wasm_bindgen_test]
fn a_what_if_mask_is_labelled() {
    let run = toy().run(js(r#"{"texts":["a b","c"],"place":"encoder_self","mask":"none"}"#)).unwrap();
    let info: JsValue = run.info().unwrap().into();
    let place = get(&info, "places").dyn_into::<Array>().unwrap().get(0);
    assert_eq!(get(&place, "whatIf").as_bool(), Some(true));
    assert_eq!(run.allowed("encoder_self", 1, 0).unwrap().to_vec(), [1, 1, 1, 1], "PAD keys visible");
}

#[wasm_bindgen_test]
fn the_seed_weighted_sum_is_8_2() {
    let got = weighted_sum(&[0.7, 0.1, 0.2], &[10.0, 0.0, 0.0, 10.0, 5.0, 5.0], 2).unwrap().to_vec();
    assert!((got[0] - 8.0).abs() < 1e-5 && (got[1] - 2.0).abs() < 1e-5, "{got:?}");
}

#[wasm_bindgen_test]
fn examples_and_limits_are_there() {
    let list: Array = JsValue::from(examples().unwrap()).dyn_into().unwrap();
    assert_eq!(list.length(), 4);
    assert_eq!(get(&list.get(0), "text").as_string().unwrap(), "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.");
    let info: JsValue = toy().info().unwrap().into();
    assert_eq!(num(&info, "maxTokens"), 2048.0);
    assert_eq!(get(&info, "trained").as_bool(), Some(false));
    assert_eq!(get(&info, "places").dyn_into::<Array>().unwrap().length(), 3);
}

#[wasm_bindgen_test]
fn errors_arrive_as_js_errors_with_a_message_and_a_code() {
    let model = toy();
    assert_eq!(
        failure(model.run(js(r#"{"texts":["  "],"place":"encoder_self"}"#))),
        ("the text is empty: type a sentence to see its attention".to_string(), "empty_text".to_string())
    );
    let long = format!(r#"{{"texts":["{}"]}}"#, "a ".repeat(2100));
    let (text, code) = failure(model.run(js(&long)));
    assert_eq!(text, "the text has 2100 tokens, more than the maximum of 2048");
    assert_eq!(code, "too_long");
    assert!(message(model.run(js(r#"{"texts":["a"],"mask":"diagonal"}"#))).contains("unknown mask `diagonal`"));
    assert!(message(model.run(js(r#"{"texts":"not a list"}"#))).starts_with("invalid request"));
    assert!(message(Model::toy(js(r#"{"preset":"huge"}"#))).contains("unknown preset"));
    assert!(message(Model::toy(js(r#"{"layers":0}"#))).contains("outside 1..=12"));
    let run = model.run(js(r#"{"texts":["a b"],"place":"encoder_self","mask":"none"}"#)).unwrap();
    assert!(message(run.head("encoder_self", 0, 9, 0)).contains("layer 9 does not exist"));
    assert_eq!(failure(run.head("cross", 0, 0, 0)).1, "place_absent", "the run kept only encoder_self");
    assert!(message(run.trace("encoder_self", 0, 0, 99)).contains("head 99 does not exist"));
    assert!(message(weighted_sum(&[0.5, 0.5], &[1.0, 2.0, 3.0], 3)).contains("`weights` has shape [2]"));
    let (_, code) = failure(model.generate("a", 3));
    assert_eq!(code, "cannot_generate", "the toy has no start token to write from");
}

#[wasm_bindgen_test]
fn the_mask_crosses_as_one_byte_per_cell() {
    let model = toy();
    let run = model.run(js(r#"{"texts":["a b c","d e"],"place":"decoder_self"}"#)).unwrap();
    assert_eq!(
        run.allowed("decoder_self", 1, 0).unwrap().to_vec(),
        [1, 0, 0, 1, 1, 0, 1, 1, 0],
        "causal and PAD combined"
    );
    let none = model.run(js(r#"{"texts":["a b"],"place":"encoder_self","mask":"none"}"#)).unwrap();
    assert_eq!(none.allowed("encoder_self", 0, 0).unwrap().to_vec(), [1, 1, 1, 1]);
    assert!(message(none.allowed("encoder_self", 3, 0)).contains("row 3 does not exist"));
}

#[wasm_bindgen_test]
fn export_gives_the_command_lines_json_and_csv() {
    let model = toy();
    let run = model.run(js(r#"{"texts":["a b"]}"#)).unwrap();
    let doc = run.json().unwrap();
    assert_eq!(get(&doc, "model_type").as_string().unwrap(), "toy");
    let rows: Array = get(&doc, "rows").dyn_into().unwrap();
    let place = get(&get(&rows.get(0), "attention"), "cross");
    assert_eq!(get(&place, "mask").as_string().unwrap(), "cross");
    assert!(run.csv().unwrap().starts_with("row,attention,layer,head,query_index,query,key_index,key,weight\n"));
}

#[wasm_bindgen_test]
fn a_run_outlives_its_model_trace_and_export_included() {
    let model = toy();
    let run = model.run(js(r#"{"texts":["동물이 길을 건너지 않았다."],"place":"encoder_self"}"#)).unwrap();
    let x_q = |trace: &JsValue| floats(get(&get(trace, "xQ"), "data"));
    let before = x_q(&run.trace("encoder_self", 0, 1, 2).unwrap().into());
    drop(model); // what the worker does when a fifth model evicts the first
    let trace: JsValue = run.trace("encoder_self", 0, 1, 2).unwrap().into();
    let weights = floats(get(&get(&trace, "weights"), "data"));
    assert_eq!(weights, run.head("encoder_self", 0, 1, 2).unwrap().to_vec(), "the trace after eviction");
    assert_eq!(x_q(&trace), before, "the same inputs, recomputed from the run's own model");
    let doc = run.json().unwrap();
    assert_eq!(get(&doc, "model_type").as_string().unwrap(), "toy", "the export names the run's own model");
    // and the model comes back from the run, the same one: it runs the same text to the same weights
    let again = run
        .model()
        .expect("a run of a model keeps it")
        .run(js(r#"{"texts":["동물이 길을 건너지 않았다."],"place":"encoder_self"}"#))
        .unwrap();
    assert_eq!(again.head("encoder_self", 0, 1, 2).unwrap().to_vec(), weights);
}

#[wasm_bindgen_test]
fn a_view_and_a_layer_each_cross_in_one_call() {
    let model = toy();
    let run = model.run(js(r#"{"texts":["동물이 길을 건너지 않았다. 그것은 너무 피곤했다."]}"#)).unwrap();
    let layer = run.layer("decoder_self", 0, 1).unwrap().to_vec();
    let cells = run.head("decoder_self", 0, 1, 0).unwrap().length() as usize; // Tq · Tk
    let allowed = run.allowed("decoder_self", 0, 1).unwrap().to_vec();
    let tq = (cells as f64).sqrt() as usize; // decoder self-attention: Tq = Tk
    assert_eq!(layer.len(), 4 * cells, "[H, Tq, Tk]");
    for h in 0..4 {
        assert_eq!(
            layer[h * cells..(h + 1) * cells],
            run.head("decoder_self", 0, 1, h).unwrap().to_vec()[..],
            "head {h}"
        );
    }
    let view: JsValue = run.view("decoder_self", 0, 1, 3).unwrap().into();
    let weights = run.head("decoder_self", 0, 1, 3).unwrap().to_vec();
    assert_eq!(floats(get(&view, "weights")), weights);
    assert_eq!(get(&view, "allowed").dyn_into::<js_sys::Uint8Array>().unwrap().to_vec(), allowed);
    // each row's entropy in bits, and the most it could have: log₂ of the keys it may see
    let entropies = floats(get(&view, "entropies"));
    let limits = floats(get(&view, "entropyLimits"));
    for i in 0..tq {
        let row = &weights[i * tq..(i + 1) * tq];
        let bits: f32 = row.iter().filter(|&&w| w > 0.0).map(|&w| -w * w.log2()).sum();
        assert!((entropies[i] - bits).abs() < 1e-4, "row {i}: {} vs {bits}", entropies[i]);
        let seen = allowed[i * tq..(i + 1) * tq].iter().filter(|&&a| a == 1).count();
        assert!((limits[i] - (seen as f32).log2()).abs() < 1e-5, "row {i}'s limit");
    }
    let maxima = floats(get(&view, "maxima"));
    assert_eq!(maxima.len(), 2 * 4, "[L, H]");
    assert_eq!(maxima[4 + 3], weights.iter().cloned().fold(0.0, f32::max), "layer 1, head 3's largest weight");
}

#[wasm_bindgen_test]
fn the_model_says_which_masks_each_place_takes_and_the_run_how_much_it_read() {
    let info: JsValue = toy().info().unwrap().into();
    let places: Array = get(&info, "places").dyn_into().unwrap();
    let masks = |i: u32| -> Vec<String> {
        get(&places.get(i), "masks").dyn_into::<Array>().unwrap().iter().map(|m| m.as_string().unwrap()).collect()
    };
    assert_eq!(masks(0), ["padding", "causal", "none"], "encoder self-attention, its own mask first");
    assert_eq!(masks(1), ["causal", "padding", "none"], "decoder self-attention");
    assert_eq!(masks(2), ["cross", "none"], "cross-attention");
    let run = toy().run(js(r#"{"texts":["동물이 길을 건너지 않았다."],"place":"encoder_self"}"#)).unwrap();
    let coverage = get(&get(&run.tokens("encoder_self", 0).unwrap().into(), "coverage"), "queries");
    assert_eq!(num(&coverage, "read"), 1.0, "the toy reads every word whole");
    assert_eq!(num(&coverage, "tokens"), 5.0);
}
