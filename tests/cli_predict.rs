//! `headmap predict` and `headmap patch` as a reader runs them: the induction model copies a
//! repeated list and stops with its induction heads or its previous-token head off; the logit
//! lens has a row per layer; patching equals the hook-based reference from transformers
//! (tests/fixtures/predict/induction-patch.json, scripts/dev/make_predict_fixtures.py); what
//! it cannot do it says, and exits 1.

#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use cli_common::{headmap, json_of};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/www/models/headmap-tiny-induction");
const WORDS: &str = "고양이 공원 노래 꽃 강 가방 길 개 그림 공";

fn repeat() -> String {
    format!("{WORDS} {WORDS}")
}

/// The share of the second copy's words (after its first) that the top prediction of the word
/// before gets right.
fn copying(doc: &serde_json::Value) -> f64 {
    let row = &doc["rows"][0];
    let tokens: Vec<&str> = row["tokens"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let n = (tokens.len() - 1) / 2;
    let start = tokens.len() - n;
    let right = (start..tokens.len() - 1)
        .filter(|&t| row["predictions"][t][0]["token"].as_str() == Some(tokens[t + 1]))
        .count();
    right as f64 / (n - 1) as f64
}

#[test]
fn the_induction_model_copies_and_stops_copying_without_its_circuit() {
    let text = repeat();
    let base = ["predict", "--model", MODEL, "--text", text.as_str(), "--top-k", "3"];
    let on = json_of(&base);
    assert_eq!(on["format"], "headmap.predictions");
    assert_eq!(on["rows"][0]["predictions"][0].as_array().unwrap().len(), 3, "--top-k 3");
    assert_eq!(copying(&on), 1.0);
    let induction_off = json_of(&[&base[..], &["--ablate", "1.0,1.1,1.3"]].concat());
    assert_eq!(
        induction_off["ablated"],
        serde_json::json!(["decoder_self:1.0", "decoder_self:1.1", "decoder_self:1.3"])
    );
    assert_eq!(copying(&induction_off), 0.0);
    let previous_off = json_of(&[&base[..], &["--ablate", "0.3"]].concat());
    assert!(copying(&previous_off) <= 0.12, "the previous-token head off: {}", copying(&previous_off));
    let other_off = json_of(&[&base[..], &["--ablate", "0.1"]].concat());
    assert_eq!(copying(&other_off), 1.0, "any other head of the first layer changes nothing");
    let mean = json_of(&[&base[..], &["--ablate", "1.0,1.1,1.3", "--mean-ablation"]].concat());
    assert_eq!(mean["ablation"], "mean");
}

#[test]
fn the_lens_has_a_row_per_layer_and_csv_a_line_per_candidate() {
    let doc =
        json_of(&["predict", "--model", MODEL, "--text", "고양이 공원 노래 고양이 공원", "--lens", "--top-k", "2"]);
    let lens = doc["rows"][0]["lens"].as_array().unwrap();
    let tokens = doc["rows"][0]["tokens"].as_array().unwrap().len();
    assert_eq!(lens.len(), 2, "two layers");
    assert!(lens.iter().all(|layer| layer.as_array().unwrap().len() == tokens));
    // the last layer's lens is the prediction itself
    let last = &lens[1][tokens - 1];
    assert_eq!(last["id"], doc["rows"][0]["predictions"][tokens - 1][0]["id"]);
    assert!((last["p"].as_f64().unwrap() - last["p_final"].as_f64().unwrap()).abs() < 1e-6);
    let (ok, out, err) =
        headmap(&["predict", "--model", MODEL, "--text", "고양이 공원 노래", "--top-k", "2", "--format", "csv"]);
    assert!(ok, "{err}");
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("row,kind,layer,position,token,rank,id,candidate,p"));
    assert_eq!(
        lines.filter(|l| l.starts_with("0,prediction,")).count(),
        2 * 4,
        "two candidates at each of <bos> and three words"
    );
}

#[test]
fn patching_equals_the_hook_reference() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/predict/induction-patch.json");
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let arg = |k: &str| reference[k].as_str().unwrap().to_string();
    let (clean, corrupt, answer, wrong) = (arg("clean"), arg("corrupt"), arg("answer"), arg("wrong"));
    let doc = json_of(&[
        "patch",
        "--model",
        MODEL,
        "--clean",
        &clean,
        "--corrupt",
        &corrupt,
        "--answer",
        &answer,
        "--wrong",
        &wrong,
    ]);
    assert_eq!(doc["format"], "headmap.patching");
    for key in ["clean_diff", "corrupt_diff"] {
        let (got, want) = (doc[key].as_f64().unwrap(), reference[key].as_f64().unwrap());
        assert!((got - want).abs() < 1e-3, "{key}: {got} against {want}");
    }
    for (layer, heads) in reference["map"].as_array().unwrap().iter().enumerate() {
        for (head, want) in heads.as_array().unwrap().iter().enumerate() {
            let got = doc["map"][layer][head].as_f64().unwrap();
            assert!((got - want.as_f64().unwrap()).abs() < 1e-3, "{layer}.{head}: {got} against {want}");
        }
    }
    // the CSV carries the same figures, each line naming the place and the position it was read at
    let args = ["patch", "--model", MODEL, "--clean", &clean, "--corrupt", &corrupt, "--answer", &answer];
    let (ok, out, err) = headmap(&[&args[..], &["--wrong", &wrong, "--format", "csv"]].concat());
    assert!(ok, "{err}");
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("what,place,position,token,answer,wrong,layer,head,value"));
    let position = doc["position"].as_u64().unwrap() as usize;
    let on = format!(
        "decoder_self,{position},{},{},{}",
        doc["tokens"][position].as_str().unwrap(),
        doc["answer"]["token"].as_str().unwrap(),
        doc["wrong"]["token"].as_str().unwrap()
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r[1..6].join(",") == on), "every line names {on}:\n{csv}");
    let value = |what: &str, layer: &str, head: &str| -> f64 {
        let row = rows.iter().find(|r| r[0] == what && r[6] == layer && r[7] == head).expect(what);
        row[8].parse().unwrap()
    };
    assert_eq!(value("clean_diff", "", ""), doc["clean_diff"].as_f64().unwrap());
    assert_eq!(value("corrupt_diff", "", ""), doc["corrupt_diff"].as_f64().unwrap());
    let map = doc["map"].as_array().unwrap();
    assert_eq!(rows.len(), 2 + map.iter().map(|h| h.as_array().unwrap().len()).sum::<usize>());
    for (layer, heads) in map.iter().enumerate() {
        for (head, want) in heads.as_array().unwrap().iter().enumerate() {
            assert_eq!(value("patched", &layer.to_string(), &head.to_string()), want.as_f64().unwrap());
        }
    }
}

#[test]
fn what_it_cannot_do_it_says() {
    let fails = |args: &[&str], says: &str| {
        let (ok, _, err) = headmap(args);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    fails(&["predict", "--model", MODEL, "--text", "고양이", "--ablate", "5.0"], "there are 2");
    fails(&["predict", "--model", MODEL, "--text", "고양이", "--ablate", "0.9"], "there are 4");
    fails(&["predict", "--model", MODEL, "--text", "고양이", "--ablate", "cross:0.0"], "cross");
    fails(&["predict", "--model", MODEL, "--text", ""], "empty");
    let patch = ["patch", "--model", MODEL, "--clean", "고양이 공원", "--corrupt", "고양이 길"];
    fails(&[&patch[..], &["--answer", "노래 길", "--wrong", "길"]].concat(), "노래");
    fails(
        &[
            "patch",
            "--model",
            MODEL,
            "--clean",
            "고양이 공원 노래",
            "--corrupt",
            "고양이",
            "--answer",
            "노래",
            "--wrong",
            "길",
        ],
        "4",
    );
}
