//! The `headmap attention` command on the tiny fixture models.
#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

use std::path::Path;
use std::process::Command;

fn headmap(args: &[&str]) -> (bool, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_headmap")).args(args).output().expect("the command runs");
    (out.status.success(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name).display().to_string()
}

#[test]
fn json_holds_layers_heads_and_tokens_per_batch_row() {
    let (ok, out, err) = headmap(&[
        "attention",
        "--model",
        &fixture("bert"),
        "--text",
        "동물이 길을 건너지 않았다.",
        "--text",
        "a book.",
    ]);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["model_type"], "bert");
    let place = &doc["rows"][1]["attention"]["encoder_self"];
    let weights = place["weights"].as_array().unwrap();
    assert_eq!(weights.len(), 2, "layers");
    assert_eq!(weights[0].as_array().unwrap().len(), 4, "heads");
    let tq = place["queries"].as_array().unwrap().len();
    assert_eq!(weights[0][0].as_array().unwrap().len(), tq);
    assert_eq!(
        place["key_valid"].as_array().unwrap().iter().filter(|v| v == &&serde_json::Value::Bool(false)).count(),
        tq - 5
    );
}

#[test]
fn an_encoder_decoder_gives_all_three_places() {
    let (ok, out, err) = headmap(&[
        "attention",
        "--model",
        &fixture("marian"),
        "--text",
        "민수가 책을 주었다.",
        "--target",
        "Minsu gave a book.",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    let csv = String::from_utf8(out).unwrap();
    assert!(csv.starts_with("row,attention,layer,head,query_index,query,key_index,key,weight\n"));
    for place in ["encoder_self", "decoder_self", "cross"] {
        assert!(csv.contains(&format!("0,{place},1,3,")), "{place}");
    }
}

#[test]
fn figures_as_svg_and_png() {
    let dir = std::env::temp_dir().join(format!("headmap-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("a.svg");
    let (ok, _, err) = headmap(&[
        "attention",
        "--model",
        &fixture("gpt2"),
        "--text",
        "The animal was tired.",
        "--format",
        "svg",
        "--layer",
        "1",
        "--head",
        "2",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("decoder_self · layer 1 · head 2"));
    assert!(text.contains("url(#masked)"), "the causal mask is drawn");
    let png = dir.join("a.png");
    let (ok, _, err) = headmap(&[
        "attention",
        "--model",
        &fixture("bart"),
        "--text",
        "민수가 책을 주었다.",
        "--kind",
        "cross",
        "--format",
        "png",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn mistakes_are_explained() {
    let (ok, _, err) = headmap(&["attention", "--model", "/nonexistent", "--text", "a"]);
    assert!(!ok);
    assert!(err.starts_with("headmap: /nonexistent/config.json:"), "{err}");
    let (ok, _, err) =
        headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--format", "svg", "--kind", "cross"]);
    assert!(!ok);
    assert_eq!(err.trim(), "headmap: this model has no cross attention; it has encoder_self");
    let (ok, _, err) = headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--format", "png"]);
    assert!(!ok);
    assert_eq!(err.trim(), "headmap: png output needs --out FILE");
    let (ok, _, err) =
        headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--format", "svg", "--head", "9"]);
    assert!(!ok && err.contains("head 9 does not exist: there are 4"), "{err}");
    let (ok, _, err) = headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--place", "decoder"]);
    assert!(!ok && err.contains("unknown place `decoder`: use encoder_self, decoder_self, cross"), "{err}");
}

#[test]
fn a_what_if_mask_is_run_and_labelled() {
    let (ok, out, err) = headmap(&[
        "attention",
        "--model",
        &fixture("bert"),
        "--text",
        "the animal was tired",
        "--place",
        "encoder_self",
        "--mask",
        "causal",
    ]);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let place = &doc["rows"][0]["attention"]["encoder_self"];
    assert_eq!((place["mask"].as_str(), place["what_if"].as_bool()), (Some("causal"), Some(true)));
    assert_eq!(place["weights"][0][0][0][1], 0.0, "the first query sees no later key");
}

#[test]
fn a_sharded_checkpoint_and_t5_from_their_folders() {
    let (ok, out, err) = headmap(&["attention", "--model", &fixture("llama-sharded"), "--text", "a b c"]);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["model_type"], "llama");
    assert_eq!(doc["rows"][0]["attention"]["decoder_self"]["weights"].as_array().unwrap().len(), 2, "layers");
    let (ok, out, err) = headmap(&[
        "attention",
        "--model",
        &fixture("t5"),
        "--text",
        "민수가 책을",
        "--target",
        "a book",
        "--format",
        "svg",
    ]);
    assert!(ok, "{err}");
    assert!(String::from_utf8(out).unwrap().contains("t5 · encoder_self · layer 0 · head 0"));
}
