//! Helpers shared by the integration tests.
#![allow(dead_code)]

use ndarray::{Array2, Array3};
use serde_json::Value;

/// Fails with `label`, the index and both values at the first element more than `tol` apart.
pub fn assert_close(got: &[f32], want: &[f64], tol: f64, label: &str) {
    assert_eq!(got.len(), want.len(), "{label}: {} values, expected {}", got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!((f64::from(g) - w).abs() <= tol, "{label}[{i}]: got {g}, want {w} (tolerance {tol})");
    }
}

pub fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        Value::Number(n) => vec![n.as_f64().expect("a number")],
        other => panic!("not a number array: {other}"),
    }
}

pub fn matrix(v: &Value) -> Array2<f32> {
    let rows = v.as_array().expect("rows");
    let cols = rows.first().and_then(Value::as_array).map_or(0, Vec::len);
    let data: Vec<f32> = flat(v).into_iter().map(|x| x as f32).collect();
    Array2::from_shape_vec((rows.len(), cols), data).expect("a rectangular matrix")
}

pub fn cube(v: &Value) -> Array3<f32> {
    let a = v.as_array().expect("outer");
    let m = matrix(&a[0]);
    let data: Vec<f32> = flat(v).into_iter().map(|x| x as f32).collect();
    Array3::from_shape_vec((a.len(), m.nrows(), m.ncols()), data).expect("a rectangular cube")
}

pub fn golden() -> Value {
    serde_json::from_str(include_str!("../fixtures/attention_golden.json")).expect("the golden fixture parses")
}

#[cfg(feature = "hf")]
/// Loads a model folder as a user would give it: model.safetensors, or a sharded checkpoint.
pub fn load(dir: &std::path::Path) -> headmap::Model {
    let opt = |f: &str| dir.join(f).exists().then(|| read(&dir.join(f)));
    let config = read(&dir.join("config.json"));
    let index = opt(headmap::models::weights::INDEX);
    let names = index.as_deref().map_or(Vec::new(), |i| headmap::models::weights::shard_names(i).unwrap());
    let shards: Vec<Vec<u8>> = names.iter().map(|n| read(&dir.join(n))).collect();
    let weights = if index.is_some() { Vec::new() } else { read(&dir.join("model.safetensors")) };
    let (tokenizer, spm, vocab) = (opt("tokenizer.json"), opt("source.spm"), opt("vocab.json"));
    headmap::Model::from_files(&headmap::models::hf::ModelFiles {
        config: &config,
        weights: &weights,
        tokenizer: tokenizer.as_deref(),
        source_spm: spm.as_deref(),
        vocab: vocab.as_deref(),
        index: index.as_deref(),
        shards: names.iter().map(String::as_str).zip(shards.iter().map(Vec::as_slice)).collect(),
    })
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Reads a file a test needs, naming it when it cannot.
pub fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// xorshift64: a crafted-file sweep's fixed sequence of cases, so a failure names a case that
/// fails again.
pub struct Cases(pub u64);

impl Cases {
    pub fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below as u64) as usize
    }
}

/// The failure of the case `f`, if any: an error it gives, or a panic.
pub fn checked(case: &str, f: impl FnOnce() -> Result<(), String>) -> Option<String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("{case}: {e}")),
        Err(_) => Some(format!("{case}: panicked")),
    }
}
