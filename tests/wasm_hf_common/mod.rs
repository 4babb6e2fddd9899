//! What the real-model wasm tests share: JSON in, properties and error messages out, and the
//! tiny BERT as the page loads it.
#![allow(dead_code)] // each test file uses its own part

use headmap::wasm::Model;
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};

pub fn js<T: JsCast>(json: &str) -> T {
    js_sys::JSON::parse(json).expect("test JSON parses").unchecked_into()
}

pub fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &key.into()).expect("a property")
}

pub fn message<T>(result: Result<T, JsValue>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.dyn_into::<js_sys::Error>().expect("a JS Error").message().into(),
    }
}

pub fn bert() -> Result<Model, JsValue> {
    Model::from_files(
        include_bytes!("../fixtures/hf/bert/config.json"),
        include_bytes!("../fixtures/hf/bert/model.safetensors"),
        Some(include_bytes!("../fixtures/hf/bert/tokenizer.json").to_vec()),
        None,
        None,
        None,
        None,
    )
}
