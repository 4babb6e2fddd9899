//! `headmap train` as a researcher runs it: the model folder, `training.json` and the
//! checkpoints are written; every checkpoint opens like any model, and the scores the timeline
//! records for it are what `headmap heads` says of it; the same seed trains the same weights;
//! bad settings are refused by name with exit 1.

#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use cli_common::{headmap, json_of};

/// Trains a small model into a fresh folder; its path and training.json.
fn trained(name: &str, extra: &[&str]) -> (std::path::PathBuf, serde_json::Value) {
    let out = std::env::temp_dir().join(format!("headmap-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec!["train", "--steps", "40", "--score-every", "10", "--checkpoints", "3", "--batch-size", "4"];
    args.extend(["--d-model", "16", "--heads", "2", "--length", "17", "--out", out.to_str().unwrap()]);
    args.extend(extra);
    let (ok, _, err) = headmap(&args);
    assert!(ok, "{err}");
    let doc = serde_json::from_slice(&std::fs::read(out.join("training.json")).unwrap()).unwrap();
    (out, doc)
}

#[test]
fn a_run_writes_a_model_its_timeline_and_checkpoints_that_headmap_reads_back() {
    let (out, doc) = trained("run", &["--seed", "5"]);
    assert_eq!(doc["format"], "headmap.training");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["curve"].as_array().unwrap().len(), 40);
    let steps: Vec<u64> = doc["scores"].as_array().unwrap().iter().map(|s| s["step"].as_u64().unwrap()).collect();
    assert_eq!(steps, [0, 10, 20, 30, 40]);
    let kept: Vec<u64> = doc["checkpoints"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
    assert_eq!((kept.len(), kept[0], kept[2]), (3, 0, 40));
    for name in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(out.join(name).exists(), "{name}");
    }
    let length = doc["probe"]["length"].as_u64().unwrap().to_string();
    for &step in &kept {
        let folder = out.join("checkpoints").join(format!("step-{step}"));
        let folder = folder.to_str().unwrap();
        let recorded = doc["scores"].as_array().unwrap().iter().find(|s| s["step"] == step).unwrap();
        // the induction probe, as the timeline ran it
        let probe = json_of(&["heads", "--model", folder, "--probe", "induction", "--probe-length", &length]);
        assert_eq!(probe["probe"]["induction"], recorded["induction"], "step {step}");
        // the previous-token scores over the probe's text
        let text = doc["probe"]["text"].as_str().unwrap();
        let heads = json_of(&["heads", "--model", folder, "--text", text, "--score", "previous_token"]);
        let scores = &heads["places"][0]["rows"][0]["scores"]["previous_token"];
        assert_eq!(scores, &recorded["previousToken"], "step {step}");
    }
    // the last checkpoint is the folder's model
    let last = out.join("checkpoints").join("step-40").join("model.safetensors");
    assert_eq!(std::fs::read(last).unwrap(), std::fs::read(out.join("model.safetensors")).unwrap());
    let (again, _) = trained("again", &["--seed", "5"]);
    assert_eq!(
        std::fs::read(again.join("model.safetensors")).unwrap(),
        std::fs::read(out.join("model.safetensors")).unwrap()
    );
    let (other, _) = trained("other", &["--seed", "6"]);
    assert_ne!(
        std::fs::read(other.join("model.safetensors")).unwrap(),
        std::fs::read(out.join("model.safetensors")).unwrap()
    );
    for dir in [out, again, other] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn bad_settings_are_refused_by_name() {
    let out = std::env::temp_dir().join("headmap-train-refused");
    let out = out.to_str().unwrap();
    for (args, named) in [
        (vec!["--learning-rate=-1"], "learning rate"),
        (vec!["--learning-rate", "NaN"], "learning rate"),
        (vec!["--heads", "5"], "heads"),
        (vec!["--layers", "9"], "layers"),
        (vec!["--length", "4"], "length"),
    ] {
        let (ok, _, err) = headmap(&[&["train", "--steps", "1", "--out", out][..], &args].concat());
        assert!(!ok && err.contains(named), "{args:?}: {err}");
    }
    let (ok, _, err) = headmap(&["train", "--seed", "1.5", "--out", out]);
    assert!(!ok && err.contains("--seed"), "{err}");
}

/// The losses the page's trainer is held to (tests/wasm_hf.rs) are the command line's.
#[test]
fn the_curve_the_page_is_held_to_is_the_command_lines() {
    let out = std::env::temp_dir().join(format!("headmap-train-curve-{}", std::process::id()));
    let out = out.to_str().unwrap();
    let args = ["train", "--steps", "20", "--batch-size", "4", "--seed", "0", "--score-every", "10", "--out", out];
    let (ok, _, err) = headmap(&args);
    assert!(ok, "{err}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(format!("{out}/training.json")).unwrap()).unwrap();
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/train/curve-seed0.json")).expect("the fixture parses");
    let losses: Vec<f64> = doc["curve"].as_array().unwrap().iter().map(|c| c["loss"].as_f64().unwrap()).collect();
    let expected: Vec<f64> = fixture["losses"].as_array().unwrap().iter().map(|l| l.as_f64().unwrap()).collect();
    assert_eq!(losses.len(), expected.len());
    for (step, (a, b)) in losses.iter().zip(&expected).enumerate() {
        assert!((a - b).abs() < 1e-4 * b, "step {}: {a} against {b}", step + 1);
    }
    let _ = std::fs::remove_dir_all(out);
}

/// The scores and phase change the page's training is held to (tests/browser/train.test.mjs)
/// are what the command line records for the page's default settings.
#[test]
fn the_scores_the_page_is_held_to_are_the_command_lines() {
    let out = std::env::temp_dir().join(format!("headmap-train-page-{}", std::process::id()));
    let out = out.to_str().unwrap();
    let (ok, _, err) = headmap(&["train", "--steps", "1500", "--seed", "0", "--out", out]);
    assert!(ok, "{err}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(format!("{out}/training.json")).unwrap()).unwrap();
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/train/page-seed0.json")).expect("the fixture parses");
    assert_eq!(doc["phaseChange"], fixture["phaseChange"]);
    for expected in fixture["scores"].as_array().unwrap() {
        let got = doc["scores"].as_array().unwrap().iter().find(|s| s["step"] == expected["step"]).unwrap();
        for key in ["copyAccuracy", "induction", "previousToken"] {
            let (a, b) = (flat(&got[key]), flat(&expected[key]));
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() < 1e-5, "{key} at step {}: {x} against {y}", expected["step"]);
            }
        }
    }
    let _ = std::fs::remove_dir_all(out);
}

fn flat(value: &serde_json::Value) -> Vec<f64> {
    match value {
        serde_json::Value::Array(items) => items.iter().flat_map(flat).collect(),
        other => vec![other.as_f64().unwrap()],
    }
}
