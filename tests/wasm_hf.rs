//! Real models through the wasm API: a tiny BERT and a tiny Marian from their files, as the
//! explorer loads them. Run with `--features hf` (see scripts/test).
#![cfg(all(target_arch = "wasm32", feature = "hf"))]

use headmap::wasm::hf::ModelSession;
use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn js(json: &str) -> JsValue {
    js_sys::JSON::parse(json).expect("test JSON parses")
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &key.into()).expect("a property")
}

fn message<T>(result: Result<T, wasm_bindgen::JsError>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => JsValue::from(e).dyn_into::<js_sys::Error>().expect("a JS Error").message().into(),
    }
}

fn bert() -> Result<ModelSession, wasm_bindgen::JsError> {
    ModelSession::new(
        include_bytes!("fixtures/hf/bert/config.json"),
        include_bytes!("fixtures/hf/bert/model.safetensors"),
        Some(include_bytes!("fixtures/hf/bert/tokenizer.json").to_vec()),
        None,
        None,
    )
}

#[wasm_bindgen_test]
fn bert_gives_padding_attention_for_a_batch() {
    let model = bert().unwrap();
    let info = model.info().unwrap();
    assert_eq!(get(&info, "modelType").as_string().unwrap(), "bert");
    let kinds: Array = get(&info, "kinds").dyn_into().unwrap();
    assert_eq!(kinds.length(), 1);
    let run = model.run(js(r#"{"texts":["동물이 길을 건너지 않았다.","Minsu gave a book."]}"#)).unwrap();
    let meta = run.meta("padding").unwrap();
    assert_eq!(get(&meta, "heads").as_f64(), Some(4.0));
    let keys: Array = get(&meta, "keys").dyn_into().unwrap();
    let first: Array = keys.get(0).dyn_into().unwrap();
    assert_eq!(first.get(0).as_string().unwrap(), "[CLS]");
    let w = run.weights("padding", 1, 1).unwrap().to_vec();
    let tk = get(&meta, "tk").as_f64().unwrap() as usize;
    let allowed = run.allowed("padding", 1).unwrap().to_vec();
    for (k, &a) in allowed.iter().enumerate() {
        if a == 0 {
            assert_eq!(w[k], 0.0, "a PAD key at flat index {k} of head 0");
        }
    }
    let row_sum: f32 = w[..tk].iter().sum();
    assert!((row_sum - 1.0).abs() < 1e-5);
    assert!(message(run.weights("cross", 0, 0)).contains("this model has no cross attention; it has padding"));
}

#[wasm_bindgen_test]
fn marian_gives_all_three_places_from_spm_files() {
    let model = ModelSession::new(
        include_bytes!("fixtures/hf/marian/config.json"),
        include_bytes!("fixtures/hf/marian/model.safetensors"),
        None,
        Some(include_bytes!("fixtures/hf/marian/source.spm").to_vec()),
        Some(include_bytes!("fixtures/hf/marian/vocab.json").to_vec()),
    )
    .unwrap();
    let run = model
        .run(js(r#"{"texts":["민수가 영희에게 책을 주었다."],"targets":["Minsu gave Younghee a book."]}"#))
        .unwrap();
    for kind in ["padding", "causal", "cross"] {
        let meta = run.meta(kind).unwrap();
        assert_eq!(get(&meta, "layers").as_f64(), Some(2.0), "{kind}");
    }
    let cross = run.meta("cross").unwrap();
    assert_ne!(get(&cross, "tq").as_f64(), get(&cross, "tk").as_f64());
    let trace: JsValue = model.trace(&run, "cross", 0, 1, 2).unwrap().into();
    assert_eq!(get(&trace, "dK").as_f64(), Some(8.0));
}

#[wasm_bindgen_test]
fn broken_files_are_js_errors_naming_the_file() {
    let truncated = &include_bytes!("fixtures/hf/bert/model.safetensors")[..1000];
    let e = message(ModelSession::new(include_bytes!("fixtures/hf/bert/config.json"), truncated, None, None, None));
    assert!(e.starts_with("model.safetensors: not a valid safetensors file"), "{e}");
    let e = message(ModelSession::new(
        b"{\"model_type\":\"t5\"}",
        include_bytes!("fixtures/hf/bert/model.safetensors"),
        Some(b"{}".to_vec()),
        None,
        None,
    ));
    assert!(e.starts_with("tokenizer.json: the tokenizer does not load"), "{e}");
    let e = message(bert().unwrap().run(js(&format!(r#"{{"texts":["{}"]}}"#, "the ".repeat(80)))));
    assert_eq!(e, "the text has 82 tokens, more than the maximum of 64");
}
