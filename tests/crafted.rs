//! Crafted model files, as an attacker would hand them to the command line, the Python package
//! or the page: every fixture family's config with each setting it gives set to odd values, its weights
//! with bytes changed, cut short or set to NaN, infinity and values near f32's limit, its
//! tokenizer.json with settings replaced, and odd text. Whatever loads or refuses, nothing
//! panics, and what runs gives finite weights and predictions or an error.
//!
//! The cases are made from a fixed seed, so a failure names a case that fails again.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::{Path, PathBuf};

use headmap::models::generate::{GenerateRequest, Writer};
use headmap::models::hf::ModelFiles;
use headmap::models::predict::PredictOptions;
use headmap::{Model, Request};
use serde_json::{json, Value};

use common::{checked, Cases};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf")
}

/// Every fixture folder with a config and one weights file, in name order.
fn families() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| fixtures().join(n).join("model.safetensors").exists())
        .collect();
    names.sort();
    assert!(names.len() >= 11, "the fixtures of every family: {names:?}");
    names
}

fn read(model: &str, file: &str) -> Option<Vec<u8>> {
    std::fs::read(fixtures().join(model).join(file)).ok()
}

/// The fixture `name` with its config, weights and tokenizer.json given.
fn load(name: &str, config: &[u8], weights: &[u8], tokenizer: Option<&[u8]>) -> headmap::Result<Model> {
    let (spm, vocab) = (read(name, "source.spm"), read(name, "vocab.json"));
    let files = ModelFiles {
        config,
        weights,
        tokenizer,
        source_spm: spm.as_deref(),
        vocab: vocab.as_deref(),
        ..ModelFiles::default()
    };
    Model::from_files(&files)
}

/// What a reader does with a model — run two texts, predict with the lens, write two tokens —
/// and whether anything it shows is not finite. Errors are answers; only a panic (caught by
/// the caller) or a non-finite value is wrong.
fn use_it(model: &Model, texts: &[&str]) -> Result<(), String> {
    let request = Request { texts: texts.iter().map(|t| t.to_string()).collect(), ..Request::default() };
    if let Ok(run) = model.run(&request) {
        for place in &run.places {
            for r in 0..place.batch() {
                let row = place.row(r).map_err(|e| e.to_string())?;
                for layer in 0..row.layers() {
                    let weights = row.layer(layer).map_err(|e| e.to_string())?;
                    if let Some(v) = weights.iter().find(|v| !v.is_finite()) {
                        return Err(format!("{:?} layer {layer}: a weight of {v}", place.place));
                    }
                }
            }
        }
    }
    let options = PredictOptions { top_k: 3, lens: Some(None), ..PredictOptions::default() };
    if let Ok(p) = model.predict(&Request { texts: vec![texts[0].to_string()], ..Request::default() }, &options) {
        let shown = p.rows.iter().flat_map(|r| r.predictions.iter().flatten().flatten());
        if let Some(c) = shown.into_iter().find(|c| !c.p.is_finite()) {
            return Err(format!("a prediction of p = {}", c.p));
        }
    }
    let asked = GenerateRequest { prompt: texts[0].to_string(), max_new_tokens: 2, ..GenerateRequest::default() };
    if let Ok(mut writer) = Writer::new(model, &asked) {
        while let Ok(Some(written)) = writer.step(model) {
            if !written.token.p.is_finite() {
                return Err(format!("a written token of p = {}", written.token.p));
            }
        }
    }
    Ok(())
}

/// Loads what `load` makes and uses it (a refusal is an answer); the case's failure, if any.
fn try_case(case: &str, load: impl FnOnce() -> headmap::Result<Model>) -> Option<String> {
    checked(case, || load().map_or(Ok(()), |m| use_it(&m, &["the cat sat", "안녕 세상"])))
}

/// The fixture's config.json, model.safetensors and tokenizer.json (if it has one).
fn files(name: &str) -> (Vec<u8>, Vec<u8>, Option<Vec<u8>>) {
    (read(name, "config.json").unwrap(), read(name, "model.safetensors").unwrap(), read(name, "tokenizer.json"))
}

fn odd_values() -> Vec<Value> {
    vec![
        json!(0),
        json!(1),
        json!(-1),
        json!(3),
        json!(1_000_000_000u64),
        json!(4_294_967_297u64),
        json!(9.0e18),
        json!(0.5),
        json!(1e-45),
        json!(1e38),
        json!("x"),
        json!(null),
        json!(true),
        json!([]),
        json!({}),
    ]
}

fn assert_none(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} crafted cases failed:\n{}", failures.len(), failures.join("\n"));
}

/// Each setting each family's config.json gives, one at a time, set to each odd value (a
/// setting a fixture leaves out keeps its default).
#[test]
fn every_config_setting_given_odd_values() {
    let mut failures = Vec::new();
    for name in families() {
        let (config, weights, tokenizer) = files(&name);
        let base: Value = serde_json::from_slice(&config).unwrap();
        for key in base.as_object().unwrap().keys() {
            for value in odd_values() {
                let mut changed = base.clone();
                changed[key] = value.clone();
                let bytes = serde_json::to_vec(&changed).unwrap();
                let case = format!("{name}: config {key} = {value}");
                failures.extend(try_case(&case, || load(&name, &bytes, &weights, tokenizer.as_deref())));
            }
        }
    }
    assert_none(failures);
}

/// model.safetensors with header bytes changed, cut short anywhere, or values set to NaN,
/// infinity or near f32's limit.
#[test]
fn weights_changed_cut_or_overflowing() {
    let mut cases = Cases(0x5eed_0fc0_ffee);
    let mut failures = Vec::new();
    for name in families() {
        let (config, weights, tokenizer) = files(&name);
        let header = 8 + u64::from_le_bytes(weights[..8].try_into().unwrap()) as usize;
        for i in 0..90 {
            let mut bad = weights.clone();
            let what = match i % 3 {
                0 => {
                    for _ in 0..1 + cases.next(3) {
                        bad[8 + cases.next(header - 8)] = b"0123456789[]{},:\"-.eE "[cases.next(22)];
                    }
                    "header bytes changed"
                }
                1 => {
                    bad.truncate(cases.next(bad.len()));
                    "cut short"
                }
                _ => {
                    for _ in 0..1 + cases.next(4) {
                        let at = header + cases.next((bad.len() - header) / 4) * 4;
                        let v = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e38, -3e38, 1e30][cases.next(6)];
                        bad[at..at + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    "values not finite or near the limit"
                }
            };
            let case = format!("{name}: weights case {i}, {what}");
            failures.extend(try_case(&case, || load(&name, &config, &bad, tokenizer.as_deref())));
        }
    }
    assert_none(failures);
}

/// Every path to a value in `v` but the vocabulary's and merges' entries (its settings: the
/// normalizer, pre-tokenizer, post-processor, decoder, added tokens, the model's type and
/// unknown token), arrays' items marked by their index.
fn settings_of(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let entries = path.len() >= 2
        && path[0] == Step::Key("model".into())
        && matches!(&path[1], Step::Key(k) if k == "vocab" || k == "merges");
    if entries {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Step::Key(k.clone()));
                out.push(path.clone());
                settings_of(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate().take(20) {
                path.push(Step::Index(i));
                out.push(path.clone());
                settings_of(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'a>(mut v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    for step in path {
        v = match step {
            Step::Key(k) => &mut v[k.as_str()],
            Step::Index(i) => &mut v[*i],
        };
    }
    v
}

/// tokenizer.json with one of its settings replaced by an odd value.
#[test]
fn tokenizer_settings_replaced() {
    let mut cases = Cases(0x0070_6be4);
    let mut failures = Vec::new();
    let replacements = [
        json!(null),
        json!(0),
        json!(-1),
        json!(4_000_000_000u64),
        json!(""),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
        json!(["a", 1]),
        json!({"type": "Nope"}),
    ];
    for name in families() {
        let (config, weights, Some(tokenizer)) = files(&name) else { continue };
        let base: Value = serde_json::from_slice(&tokenizer).unwrap();
        let mut paths = Vec::new();
        settings_of(&base, &mut Vec::new(), &mut paths);
        for i in 0..60 {
            let path = &paths[cases.next(paths.len())];
            let value = replacements[cases.next(replacements.len())].clone();
            let mut changed = base.clone();
            *at(&mut changed, path) = value.clone();
            let bytes = serde_json::to_vec(&changed).unwrap();
            let case = format!("{name}: tokenizer case {i}, {path:?} = {value}");
            failures.extend(try_case(&case, || load(&name, &config, &weights, Some(&bytes))));
        }
    }
    assert_none(failures);
}

/// Odd text — empty, controls, a byte-order mark, joiners, stacked combining marks, the last
/// code point, jamo, right-to-left overrides, emoji, special tokens' spellings — alone, 300
/// times over and inside words, on every family.
#[test]
fn odd_text_on_every_family() {
    let odd = [
        "",
        " ",
        "\u{0}",
        "\u{FEFF}",
        "\u{200D}\u{200D}",
        "a\u{301}\u{301}\u{301}\u{301}",
        "\u{10FFFF}",
        "\u{D7A3}\u{1100}\u{1161}",
        "\u{202E}abc",
        "🙂🙂🙂",
        "\r\n\t",
        "[MASK]",
        "<mask>",
        "</s><s><pad>",
        "ー",
    ];
    let mut failures = Vec::new();
    for name in families() {
        let (config, weights, tokenizer) = files(&name);
        let model = load(&name, &config, &weights, tokenizer.as_deref()).unwrap();
        for text in odd.iter().flat_map(|s| [s.to_string(), s.repeat(300), format!("hello {s} world")]) {
            failures.extend(checked(&format!("{name}: text {text:?}"), || use_it(&model, &[&text, "a"])));
        }
    }
    assert_none(failures);
}
