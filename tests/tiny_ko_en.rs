//! The tiny Korean → English model trained here (`www/models/headmap-tiny-ko-en/`): its files
//! are the ones its model card names, it equals transformers in every place, layer and head,
//! and its held-out figures — recomputed here from the committed weights — are the card's.
//! (They are facts about fixed weights, so they must agree to float rounding.)
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

use std::path::{Path, PathBuf};

use headmap::models::hf::ModelFiles;
use headmap::run::{Batch, Row, Settings};
use headmap::tokenize::{Token, TokenKind};
use headmap::{Model, Place, Request};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn dir() -> PathBuf {
    root().join("www/models/headmap-tiny-ko-en")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn model() -> Model {
    let (c, w, t) =
        (read(&dir().join("config.json")), read(&dir().join("model.safetensors")), read(&dir().join("tokenizer.json")));
    Model::from_files(&ModelFiles { config: &c, weights: &w, tokenizer: Some(&t), ..ModelFiles::default() }).unwrap()
}

fn heldout() -> Value {
    serde_json::from_slice(&read(&dir().join("heldout.json"))).unwrap()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn indices(v: &Value) -> Vec<usize> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect()
}

fn row(ids: Vec<u32>) -> Row {
    Row { tokens: ids.iter().map(|id| Token::word(&id.to_string())).collect(), valid: vec![true; ids.len()], ids }
}

#[test]
fn the_files_are_the_ones_the_model_card_names() {
    let card = String::from_utf8(read(&dir().join("README.md"))).unwrap();
    let mut checked = 0;
    for line in card.lines().filter(|l| l.starts_with("| `") && l.matches('`').count() == 4) {
        let parts: Vec<&str> = line.split('`').collect();
        let (name, want) = (parts[1], parts[3]);
        if want.len() != 64 {
            continue;
        }
        let path = if name.starts_with("tests/") { root().join(name) } else { dir().join(name) };
        let got = format!("{:x}", Sha256::digest(read(&path)));
        assert_eq!(got, want, "sha256 of {name}");
        checked += 1;
    }
    assert!(checked >= 5, "the card lists the model's files with their sha256 ({checked} found)");
    assert!(read(&dir().join("model.safetensors")).len() <= 1 << 20, "the weights fit in 1 MB");
}

#[test]
fn the_seeds_tokenize_into_korean_pieces_and_are_translated_right() {
    let m = model();
    for (source, target) in [
        (
            "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.",
            "The animal did not cross the street. The animal was too tired.",
        ),
        ("민수가 영희에게 책을 주었다.", "Minsu gave Younghee a book."),
    ] {
        let tokens = m.tokenize(source).unwrap().tokens;
        for t in &tokens {
            assert!(!matches!(t.kind, TokenKind::Unknown | TokenKind::Part), "{source}: {t:?}");
            assert!(t.label.chars().all(|c| !('\u{1100}'..='\u{11ff}').contains(&c)), "no jamo in {t:?}");
        }
        assert_eq!(m.generate(source, 40).unwrap().text, target);
    }
    let labels: Vec<String> = m.tokenize("동물이 길을").unwrap().tokens.into_iter().map(|t| t.label).collect();
    assert_eq!(labels[..4], ["동물", "##이", "길", "##을"]);
}

/// The held-out figures of one example: (coreference [enc layer][head], cross by input row and
/// by predicting row [dec layer][head]) and how many items (pronoun tokens, aligned words) each
/// averaged over.
struct Figures {
    coreference: Option<Vec<Vec<f64>>>,
    cross_input: Vec<Vec<f64>>,
    cross_predict: Vec<Vec<f64>>,
    words: usize,
}

fn figures(m: &Model, e: &Value) -> Figures {
    let batch = Batch { sources: vec![row(ids(&e["input_ids"]))], targets: vec![row(ids(&e["decoder_input_ids"]))] };
    let run = m.run_batch(&batch, &Settings::trained()).unwrap();
    let enc = &run.place(Place::EncoderSelf).unwrap().rows[0];
    let cross = &run.place(Place::Cross).unwrap().rows[0];
    let coreference = e.get("pronoun").map(|p| {
        let (queries, keys) = (indices(&p["tokens"]), indices(&e["antecedent"]["tokens"]));
        (0..enc.layers())
            .map(|l| {
                (0..enc.heads())
                    .map(|h| {
                        let w = enc.head(l, h).unwrap();
                        queries.iter().map(|&i| keys.iter().map(|&j| f64::from(w[[i, j]])).sum::<f64>()).sum::<f64>()
                            / queries.len() as f64
                    })
                    .collect()
            })
            .collect()
    });
    let alignment = e["alignment"].as_array().unwrap();
    let per_word = |rows: &str| -> Vec<Vec<f64>> {
        (0..cross.layers())
            .map(|l| {
                (0..cross.heads())
                    .map(|h| {
                        let w = cross.head(l, h).unwrap();
                        let words: Vec<f64> = alignment
                            .iter()
                            .map(|a| {
                                let (rs, keys) = (indices(&a[rows]), indices(&a["source_tokens"]));
                                rs.iter().map(|&i| keys.iter().map(|&j| f64::from(w[[i, j]])).sum::<f64>()).sum::<f64>()
                                    / rs.len() as f64
                            })
                            .collect();
                        words.iter().sum::<f64>() / words.len().max(1) as f64
                    })
                    .collect()
            })
            .collect()
    };
    Figures {
        coreference,
        cross_input: per_word("input_rows"),
        cross_predict: per_word("predict_rows"),
        words: alignment.len(),
    }
}

fn close(got: &[Vec<f64>], want: &Value, tol: f64, label: &str) {
    for (l, layer) in got.iter().enumerate() {
        for (h, &g) in layer.iter().enumerate() {
            let w = want[l][h].as_f64().unwrap();
            assert!((g - w).abs() <= tol, "{label} layer {l} head {h}: headmap {g}, transformers {w}");
        }
    }
}

#[test]
fn the_held_out_figures_are_the_model_cards() {
    let m = model();
    let doc = heldout();
    let examples = doc["examples"].as_array().unwrap();
    let (mut exact, mut pronouns) = (0usize, 0usize);
    let zeros = |layers: usize| vec![vec![0f64; 4]; layers];
    let (mut coreference, mut cross_input, mut cross_predict, mut words) = (zeros(3), zeros(2), zeros(2), 0usize);
    for (n, e) in examples.iter().enumerate() {
        let label = format!("example {n} ({})", e["source"].as_str().unwrap());
        let f = figures(&m, e);
        close(&f.cross_input, &e["cross_input_rows"], 1e-4, &format!("{label}: cross by input row"));
        close(&f.cross_predict, &e["cross_predict_rows"], 1e-4, &format!("{label}: cross by predicting row"));
        let add = |sum: &mut Vec<Vec<f64>>, x: &[Vec<f64>], k: f64| {
            sum.iter_mut().zip(x).for_each(|(s, x)| s.iter_mut().zip(x).for_each(|(s, x)| *s += x * k))
        };
        add(&mut cross_input, &f.cross_input, f.words as f64);
        add(&mut cross_predict, &f.cross_predict, f.words as f64);
        words += f.words;
        if let Some(c) = &f.coreference {
            close(c, &e["coreference"], 1e-4, &format!("{label}: pronoun → antecedent"));
            add(&mut coreference, c, 1.0);
            pronouns += 1;
        }
        let greedy = m.generate(e["source"].as_str().unwrap(), 40).unwrap();
        assert_eq!(greedy.ids, ids(&e["greedy_output_ids"]), "{label}: greedy ids");
        let mut want = vec![ids(&e["decoder_input_ids"])[0]];
        want.extend(ids(&e["labels"]));
        exact += usize::from(greedy.ids == want);
    }
    let agg = &doc["aggregate"];
    assert_eq!(exact, agg["exact_match_count"].as_u64().unwrap() as usize, "greedy exact matches");
    let mean = |sum: &[Vec<f64>], n: usize| -> Vec<Vec<f64>> {
        sum.iter().map(|l| l.iter().map(|s| s / n as f64).collect()).collect()
    };
    let (coreference, cross_input, cross_predict) =
        (mean(&coreference, pronouns), mean(&cross_input, words), mean(&cross_predict, words));
    close(&coreference, &agg["coreference"], 1e-5, "mean pronoun → antecedent");
    close(&cross_input, &agg["cross_input_rows"], 1e-5, "mean cross by input row");
    close(&cross_predict, &agg["cross_predict_rows"], 1e-5, "mean cross by predicting row");
    // the card prints these to three decimals, and names the heads they pick
    let card = String::from_utf8(read(&dir().join("README.md"))).unwrap();
    let best = |t: &[Vec<f64>]| {
        let mut b = (0, 0, f64::MIN);
        for (l, layer) in t.iter().enumerate() {
            for (h, &v) in layer.iter().enumerate() {
                if v > b.2 {
                    b = (l, h, v);
                }
            }
        }
        b
    };
    let suggested: Value = serde_json::from_slice(&read(&dir().join("headmap.json"))).unwrap();
    for (table, key) in [(&coreference, "coreference"), (&cross_predict, "alignment")] {
        let (l, h, v) = best(table);
        assert!(card.contains(&format!("{v:.3}")), "the card shows {key}'s {v:.3}");
        assert_eq!(
            (suggested[key]["layer"].as_u64(), suggested[key]["head"].as_u64()),
            (Some(l as u64), Some(h as u64)),
            "{key}'s head"
        );
    }
}

#[test]
fn the_suggested_head_links_it_to_the_animal_in_the_seed() {
    let m = model();
    let request = Request {
        texts: vec!["동물이 길을 건너지 않았다. 그것은 너무 피곤했다.".into()],
        place: Some(Place::EncoderSelf),
        ..Request::default()
    };
    let run = m.run(&request).unwrap();
    let enc = &run.places[0].rows[0];
    let labels: Vec<&str> = enc.queries.iter().map(|t| t.label.as_str()).collect();
    let (it, animal) =
        (labels.iter().position(|&l| l == "그것").unwrap(), labels.iter().position(|&l| l == "동물").unwrap());
    let suggested: Value = serde_json::from_slice(&read(&dir().join("headmap.json"))).unwrap();
    let (l, h) = (
        suggested["coreference"]["layer"].as_u64().unwrap() as usize,
        suggested["coreference"]["head"].as_u64().unwrap() as usize,
    );
    let w = enc.head(l, h).unwrap();
    let top = (0..w.ncols()).max_by(|&a, &b| w[[it, a]].total_cmp(&w[[it, b]])).unwrap();
    assert_eq!(top, animal, "the 그것 row's largest weight is on 동물 ({})", w[[it, animal]]);
}

/// Activation patching on the model as the explorer opens it: the Korean source differs in one
/// word (동물 / 고양이), the decoder reads the English target, and the logits are read where
/// the target writes the answer, not at its last token (where the model writes its end).
#[test]
fn patching_reads_the_logits_where_the_target_writes_the_answer() {
    use headmap::models::patch::PatchRequest;
    let model = model();
    let request = PatchRequest {
        clean: "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.".into(),
        corrupt: "고양이가 길을 건너지 않았다. 그것은 너무 피곤했다.".into(),
        target: Some("The animal did not cross the street. The animal was too tired.".into()),
        answer: "animal".into(),
        wrong: "cat".into(),
        ..PatchRequest::default()
    };
    let p = model.patch(&request, |_, _| true).unwrap();
    assert_eq!(p.tokens[p.position + 1], "animal", "read where `animal` is written: {:?}", p.tokens);
    assert!(
        p.answer.p > 0.5 && p.clean_diff > 0.0 && p.corrupt_diff < 0.0,
        "{} {} {}",
        p.answer.p,
        p.clean_diff,
        p.corrupt_diff
    );
    // the decoder's own first layer reads the target alone, the same in both runs
    assert!(p.map[0].iter().all(|&v| v == 0.0), "{:?}", p.map);
    // the word comes from the source: through cross-attention, and the encoder's heads
    for place in [Place::Cross, Place::EncoderSelf] {
        let p = model.patch(&PatchRequest { place: Some(place), ..request.clone() }, |_, _| true).unwrap();
        assert_eq!(p.place, place);
        assert!(p.map.iter().flatten().any(|v| v.abs() > 0.1), "{place:?}: some head carries the word: {:?}", p.map);
    }
    // told where, it reads there
    let last = model.patch(&PatchRequest { position: Some(p.tokens.len() - 1), ..request }, |_, _| true).unwrap();
    assert_eq!(last.position, p.tokens.len() - 1);
}
