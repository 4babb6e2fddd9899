//! What the command-line tests share: running `headmap` and reading what it prints.
#![allow(dead_code)] // each test file uses its own part

use std::path::Path;
use std::process::Command;

pub fn headmap(args: &[&str]) -> (bool, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_headmap")).args(args).output().expect("the command runs");
    (out.status.success(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

pub fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name).display().to_string()
}

/// The command's JSON, or a failure that shows its message.
pub fn json_of(args: &[&str]) -> serde_json::Value {
    let (ok, out, err) = headmap(args);
    assert!(ok, "{args:?}: {err}");
    serde_json::from_slice(&out).unwrap()
}

/// A JSON array of arrays of numbers.
pub fn grid(value: &serde_json::Value) -> Vec<Vec<f64>> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect())
        .collect()
}
