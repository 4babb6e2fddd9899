//! The `headmap attention`, `heads` and `rollout` commands on the tiny fixture models
//! (`vectors` in cli_vectors.rs).
#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use cli_common::{fixture, grid, headmap, json_of};

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
    assert_eq!(err.trim(), "headmap: png and safetensors output need --out FILE");
    let (ok, _, err) =
        headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--format", "svg", "--head", "9"]);
    assert!(!ok && err.contains("head 9 does not exist: there are 4"), "{err}");
    let (ok, _, err) = headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--place", "decoder"]);
    assert!(!ok && err.contains("unknown place `decoder`: use encoder_self, decoder_self, cross"), "{err}");
    // a target is for an encoder–decoder's decoder: elsewhere it would be dropped unsaid
    for command in ["attention", "heads", "predict"] {
        let (ok, _, err) = headmap(&[command, "--model", &fixture("gpt2"), "--text", "a", "--target", "b"]);
        assert!(
            !ok && err.contains("--target is the decoder's input of an encoder–decoder model; gpt2 reads"),
            "{command}: {err}"
        );
    }
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

#[test]
fn heads_scores_every_layer_and_head_of_every_place_and_row() {
    // the fixtures have 2 layers of 4 heads at every place
    let doc = json_of(&["heads", "--model", &fixture("bart"), "--text", "민수가 책을 주었다.", "--text", "a book."]);
    assert_eq!(doc["model"], "bart");
    let places = doc["places"].as_array().unwrap();
    let names: Vec<&str> = places.iter().map(|p| p["place"].as_str().unwrap()).collect();
    assert_eq!(names, ["encoder_self", "decoder_self", "cross"]);
    for place in places {
        let name = place["place"].as_str().unwrap();
        let expected: &[&str] = match name {
            // cross attention takes only the scores that compare no positions
            "cross" => &["first_token", "special", "punctuation", "broad"],
            _ => &[
                "previous_token",
                "duplicate_token",
                "induction",
                "next_token",
                "current_token",
                "first_token",
                "special",
                "punctuation",
                "broad",
                "distance",
            ],
        };
        let rows = place["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2, "{name}: batch rows");
        for (b, row) in rows.iter().enumerate() {
            assert!(!row["tokens"].as_array().unwrap().is_empty(), "{name}.row{b}: tokens");
            assert_eq!(row["key_tokens"].is_array(), name == "cross", "{name}.row{b}: key tokens only for cross");
            let scores = row["scores"].as_object().unwrap();
            let mut names: Vec<&str> = scores.keys().map(String::as_str).collect();
            names.sort_unstable();
            let mut want = expected.to_vec();
            want.sort_unstable();
            assert_eq!(names, want, "{name}.row{b}: the scores the place takes");
            for score in expected {
                let values = grid(&scores[*score]);
                assert_eq!(values.len(), 2, "{name}.row{b}.{score}: layers");
                for (l, heads) in values.iter().enumerate() {
                    assert_eq!(heads.len(), 4, "{name}.row{b}.{score}.layer{l}: heads");
                    for (h, &v) in heads.iter().enumerate() {
                        let label = format!("{name}.row{b}.{score}.layer{l}.head{h} = {v}");
                        match *score {
                            "distance" => assert!(v >= 0.0, "{label}"),
                            _ => assert!((0.0..=1.0).contains(&v), "{label}: a share"),
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn mass_of_one_query_on_one_key_is_that_weight() {
    let text = "the animal was tired";
    let weights = json_of(&["attention", "--model", &fixture("bert"), "--text", text]);
    let weights = &weights["rows"][0]["attention"]["encoder_self"]["weights"];
    let heads = json_of(&["heads", "--model", &fixture("bert"), "--text", text, "--queries", "3", "--keys", "1"]);
    let mass = &heads["places"][0]["rows"][0]["mass"];
    assert_eq!((mass["queries"][0].as_u64(), mass["keys"][0].as_u64()), (Some(3), Some(1)));
    let values = grid(&mass["values"]);
    assert_eq!((values.len(), values[0].len()), (2, 4), "(L, H)");
    for (l, heads) in values.iter().enumerate() {
        for (h, &got) in heads.iter().enumerate() {
            let want = weights[l][h][3][1].as_f64().unwrap();
            assert!((got - want).abs() < 1e-6, "bert.layer{l}.head{h}: mass {got}, weight {want}");
        }
    }
    // CSV: the same numbers as `mass` lines beside the scores
    let (ok, out, err) = headmap(&[
        "heads",
        "--model",
        &fixture("bert"),
        "--text",
        text,
        "--queries",
        "3",
        "--keys",
        "1",
        "--score",
        "broad",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    let csv = String::from_utf8(out).unwrap();
    assert!(csv.starts_with("place,row,score,layer,head,value\n"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 2 * 8, "a header, then broad and mass for 2 × 4 heads");
    let line = csv.lines().find(|l| l.starts_with("encoder_self,0,mass,1,2,")).unwrap();
    let got: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
    assert!((got - weights[1][2][3][1].as_f64().unwrap()).abs() < 1e-6, "csv mass layer1.head2");
}

#[test]
fn the_induction_probe_repeats_its_random_tokens_and_names_a_best_head() {
    let doc = json_of(&["heads", "--model", &fixture("gpt2"), "--probe", "induction", "--probe-length", "10"]);
    let probe = &doc["probe"];
    assert_eq!((probe["place"].as_str(), probe["causal"].as_bool()), (Some("decoder_self"), Some(true)));
    assert_eq!((probe["length"].as_u64(), probe["second"].as_u64()), (Some(10), Some(11)));
    let ids: Vec<u64> = probe["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(ids.len(), 1 + 20, "a start token, then r twice");
    assert_eq!(ids[1..11], ids[11..21], "the second half repeats the first");
    assert_eq!(probe["tokens"].as_array().unwrap().len(), 21);
    let induction = grid(&probe["induction"]);
    assert_eq!((induction.len(), induction[0].len()), (2, 4), "(L, H)");
    let best = &probe["best"];
    let (l, h) = (best["layer"].as_u64().unwrap() as usize, best["head"].as_u64().unwrap() as usize);
    let highest = induction.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(induction[l][h], highest, "best is the highest induction score");
    assert_eq!(best["score"].as_f64(), Some(highest));
    // the same seed draws the same tokens
    let again = json_of(&["heads", "--model", &fixture("gpt2"), "--probe", "induction", "--probe-length", "10"]);
    assert_eq!(again["probe"]["ids"], probe["ids"]);
}

#[test]
fn rollout_rows_sum_to_one_after_every_layer() {
    for (model, texts) in
        [("gpt2", vec!["The animal was tired."]), ("bert", vec!["동물이 길을 건너지 않았다.", "a book."])]
    {
        let mut args = vec!["rollout", "--model", &fixture(model)].into_iter().map(String::from).collect::<Vec<_>>();
        for text in &texts {
            args.extend(["--text".to_string(), text.to_string()]);
        }
        let doc = json_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(doc["fusion"], "mean");
        let rows = doc["rows"].as_array().unwrap();
        assert_eq!(rows.len(), texts.len(), "{model}: batch rows");
        for (b, row) in rows.iter().enumerate() {
            let t = row["tokens"].as_array().unwrap().len();
            let layers = row["layers"].as_array().unwrap();
            assert_eq!(layers.len(), 2, "{model}.row{b}: layers");
            for (l, layer) in layers.iter().enumerate() {
                let matrix = grid(layer);
                assert_eq!(matrix.len(), t, "{model}.row{b}.layer{l}: (T, T)");
                for (i, r) in matrix.iter().enumerate() {
                    assert_eq!(r.len(), t);
                    let sum: f64 = r.iter().sum();
                    assert!((sum - 1.0).abs() < 1e-5, "{model}.row{b}.layer{l}.query{i}: sums to {sum}");
                }
            }
        }
    }
    let (ok, out, err) =
        headmap(&["rollout", "--model", &fixture("gpt2"), "--text", "a b", "--fusion", "max", "--format", "csv"]);
    assert!(ok, "{err}");
    assert!(String::from_utf8(out).unwrap().starts_with("row,layer,query,key,value\n0,0,0,0,"));
}

#[test]
fn heads_and_rollout_mistakes_are_explained() {
    let (ok, _, err) = headmap(&["heads", "--model", &fixture("gpt2"), "--text", "a", "--score", "nope"]);
    assert!(!ok && err.contains("unknown score `nope`: use previous_token,"), "{err}");
    let (ok, _, err) =
        headmap(&["heads", "--model", &fixture("gpt2"), "--text", "a b", "--queries", "99", "--keys", "0"]);
    assert!(!ok, "{err}");
    assert!(err.starts_with("headmap: decoder_self row 0: queries position 99 does not exist"), "{err}");
    let (ok, _, err) = headmap(&["rollout", "--model", &fixture("bart"), "--text", "a", "--place", "cross"]);
    assert!(!ok);
    assert_eq!(err.trim(), "headmap: rollout follows one sentence through its layers: cross attention has two");
    let (ok, _, err) =
        headmap(&["heads", "--model", &fixture("gpt2"), "--probe", "induction", "--probe-length", "1000"]);
    assert!(!ok && err.starts_with("headmap: probe length 1000 is outside"), "{err}");
    let (ok, _, err) = headmap(&["heads", "--model", &fixture("gpt2"), "--probe", "induction", "--text", "a"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    let (ok, _, err) =
        headmap(&["heads", "--model", &fixture("bart"), "--text", "a", "--place", "cross", "--score", "induction"]);
    assert!(!ok && err.contains("the induction score compares positions in one sentence"), "{err}");
}

#[test]
fn a_corpus_goes_in_as_a_file_and_out_as_a_row_per_text() {
    let dir = std::env::temp_dir().join(format!("headmap-cli-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).display().to_string();
    std::fs::write(dir.join("c.txt"), "The cat sat.\n\nA dog ran.\n").unwrap();
    let model = fixture("gpt2");
    let rows = |args: &[&str]| {
        let (ok, out, err) = headmap(args);
        assert!(ok, "{args:?}: {err}");
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let got = rows(&["heads", "--model", &model, "--input", &path("c.txt"), "--score", "previous_token,first_token"]);
    assert_eq!(got.len(), 3, "a row per line, the empty one too");
    assert_eq!(got[1]["error"], "the text is empty: type a sentence to see its attention");
    assert!(got[1]["first_token.1.3"].is_null() && got[1]["tokens"] == 0);
    // a row's scores are those of its text alone
    let one = json_of(&["heads", "--model", &model, "--text", "A dog ran.", "--score", "first_token"]);
    let alone = one["places"][0]["rows"][0]["scores"]["first_token"][1][3].as_f64().unwrap();
    assert_eq!(got[2]["first_token.1.3"].as_f64().unwrap() as f32, alone as f32);
    assert_eq!(got[2]["id"], 2);
    // a file named .csv is CSV: a header, then a row per text
    let (ok, _, err) = headmap(&[
        "heads",
        "--model",
        &model,
        "--input",
        &path("c.txt"),
        "--score",
        "first_token",
        "--out",
        &path("s.csv"),
    ]);
    assert!(ok, "{err}");
    let csv = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    assert!(csv.starts_with("id,tokens,error,first_token.0.0,"), "{csv}");
    assert_eq!(csv.lines().count(), 4);
    // a line past 16 MB, or a text past the model's characters, is a row saying so, and the
    // lines after it are read as before
    let huge = "a".repeat((16 << 20) + 10);
    let long = "a ".repeat(20_000);
    std::fs::write(dir.join("long.txt"), format!("{huge}\n{long}\nA dog ran.\n")).unwrap();
    let got = rows(&["heads", "--model", &model, "--input", &path("long.txt"), "--score", "first_token"]);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0]["error"], "line 1 is longer than 16 MB");
    assert_eq!(got[1]["error"], "the text has 40000 characters, more than the maximum of 32768");
    assert_eq!(got[2]["first_token.1.3"].as_f64().unwrap() as f32, alone as f32);
    // what cannot be read at all is said, not written as rows
    std::fs::write(dir.join("broken.parquet"), b"PAR1 not really").unwrap();
    for (args, said) in [
        (vec!["--input", &path("missing.txt")], "missing.txt: No such file"),
        (vec!["--input", &path("broken.parquet")], "broken.parquet: not a Parquet file headmap can read"),
        (vec!["--input", &path("c.txt"), "--text", "a"], "cannot be used with"),
        (vec!["--input", &path("c.txt"), "--place", "cross"], "the model has no cross (it has decoder_self)"),
    ] {
        let (ok, _, err) = headmap(&[&["heads", "--model", &model][..], &args[..]].concat());
        assert!(!ok && err.contains(said), "{args:?}: {err}");
    }
}
