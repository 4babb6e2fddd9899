//! `headmap generate` as a reader runs it: the trained model translates the seed sentence, the
//! induction model continues a repeat and stops copying with its previous-token head off, a
//! seed draws the same text twice, the whole run saves as an attention file the explorer
//! opens, and bad settings are refused with a message and exit 1.

#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use cli_common::{headmap, json_of};

const INDUCTION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/headmap-tiny-induction");
const TRANSLATOR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/headmap-tiny-ko-en");
const SEED: &str = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.";
const REPEAT: &str = "고양이 공원 노래 꽃 강 가방 고양이";

fn words(doc: &serde_json::Value) -> Vec<String> {
    doc["generated"].as_array().unwrap().iter().map(|w| w["token"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_translator_writes_the_seed_sentence_in_english() {
    let doc = json_of(&["generate", "--model", TRANSLATOR, "--text", SEED]);
    assert_eq!(doc["format"], "headmap.generation");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["model_type"], "marian");
    assert_eq!(doc["prompt"][0], "동물");
    assert_eq!(doc["text"], "The animal did not cross the street. The animal was too tired.");
    let first = &doc["generated"][0];
    assert!(first["id"].is_u64() && first["p"].as_f64().unwrap() > 0.5, "{first}");
    assert_eq!(words(&doc).last().map(String::as_str), Some("</s>"), "the end token is kept");
    assert_eq!(doc["ended"], "end_token");
}

#[test]
fn the_document_says_why_the_text_ends() {
    let asked = json_of(&["generate", "--model", INDUCTION, "--text", REPEAT, "--max-new-tokens", "3"]);
    assert_eq!((words(&asked).len(), asked["ended"].as_str()), (3, Some("max_new_tokens")));
    // 15 repeats of 7 words and <bos>: 106 of the model's 128 positions, room for 22 more
    let long = vec![REPEAT; 15].join(" ");
    let full = json_of(&["generate", "--model", INDUCTION, "--text", &long, "--max-new-tokens", "40"]);
    assert_eq!((words(&full).len(), full["ended"].as_str()), (22, Some("positions")));
}

#[test]
fn the_induction_model_continues_a_repeat_until_its_head_is_off() {
    let args = ["generate", "--model", INDUCTION, "--text", REPEAT, "--max-new-tokens", "5"];
    let on = json_of(&args);
    assert_eq!(words(&on), ["공원", "노래", "꽃", "강", "가방"]);
    let off = json_of(&[&args[..], &["--ablate", "0.3"]].concat());
    assert_ne!(words(&off), words(&on));
}

#[test]
fn a_seed_draws_the_same_text_twice() {
    let args =
        ["generate", "--model", INDUCTION, "--text", REPEAT, "--temperature", "2.5", "--top-p", "0.99", "--seed", "11"];
    assert_eq!(json_of(&args), json_of(&args));
}

#[test]
fn the_run_saves_as_an_attention_file() {
    let dir = std::env::temp_dir().join(format!("headmap-generate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.safetensors");
    let out_arg = out.display().to_string();
    let (ok, _, err) =
        headmap(&["generate", "--model", TRANSLATOR, "--text", SEED, "--format", "safetensors", "--out", &out_arg]);
    assert!(ok, "{err}");
    let imported = headmap::import::read("run.safetensors", &std::fs::read(&out).unwrap()).unwrap();
    let places: Vec<_> = imported.run.places.iter().map(|p| p.place.name()).collect();
    assert_eq!(places, ["encoder_self", "decoder_self", "cross"]);
    let decoder = imported.run.place(headmap::Place::DecoderSelf).unwrap().row(0).unwrap();
    assert_eq!(decoder.size().0, 15, "the start token and every token written but the last");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_settings_are_refused_with_a_message() {
    for (extra, says) in [
        (&["--temperature", "0"][..], "temperature 0 must be greater than 0"),
        (&["--temperature", "1", "--top-p", "1.5"][..], "top-p 1.5"),
        (&["--top-k", "5"][..], "give a --temperature"),
        (&["--format", "safetensors"][..], "needs --out"),
        (&["--ablate", "7.0"][..], "layer 7 does not exist"),
    ] {
        let (ok, _, err) = headmap(&[&["generate", "--model", INDUCTION, "--text", REPEAT][..], extra].concat());
        assert!(!ok, "{extra:?}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    let (ok, _, err) = headmap(&["generate", "--model", INDUCTION, "--text", ""]);
    assert!(!ok && err.contains("empty"), "{err}");
    // more tokens than the model reads: it writes to its limit and says so
    let (ok, out, err) = headmap(&["generate", "--model", INDUCTION, "--text", REPEAT, "--max-new-tokens", "100000"]);
    assert!(ok && !out.is_empty(), "{err}");
    assert!(err.contains("tokens asked: the model reads at most"), "{err}");
}
