//! Finding heads, against the references: per-head scores equal TransformerLens's own
//! `compute_head_attention_similarity_score` on transformers' attentions, rollout a NumPy
//! computation, for a decoder-only and an encoder family (tests/fixtures/heads/*.json, written
//! by scripts/dev/make_head_fixtures.py); and the induction probe and token-to-token mass, with
//! their refusals. Needs `--features hf`.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::Path;

use headmap::heads::{induction_probe, mass, scores, Metric, Score, ScoreOptions};
use headmap::rollout::{rollout, Fusion};
use headmap::run::{Batch, Row, RowAttention, Run, Settings};
use headmap::tokenize::{Token, TokenKind};
use headmap::{Error, Model, Place};
use serde_json::Value;

const TOL: f64 = 1e-5;

fn root(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn reference(name: &str) -> Value {
    serde_json::from_slice(&common::read(&root(&format!("tests/fixtures/heads/{name}.json")))).unwrap()
}

/// The fixture's ids run as they are, one row, unpadded.
fn run_ids(model: &Model, ids: &[u32], place: Place) -> Run {
    let special = model.tokenizer().vocabulary().unwrap().special;
    let tokens = ids
        .iter()
        .map(|&id| {
            if special.contains(&id) {
                Token::marker(&model.tokenizer().piece(id).unwrap(), TokenKind::Special)
            } else {
                model.tokenizer().token_of(id)
            }
        })
        .collect();
    let row = Row { ids: ids.to_vec(), tokens, valid: vec![true; ids.len()] };
    let settings = Settings { keep: vec![place], ..Settings::trained() };
    model.run_batch(&Batch { sources: vec![row], targets: Vec::new() }, &settings).unwrap()
}

fn ids_of(reference: &Value) -> Vec<u32> {
    reference["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

fn check_scores(name: &str, place: Place) {
    let reference = reference(name);
    let model = common::load(&root(reference["model"].as_str().unwrap()));
    let run = run_ids(&model, &ids_of(&reference), place);
    let row = run.place(place).unwrap().row(0).unwrap();
    let mut checked = 0;
    for (detection, by_options) in reference["scores"].as_object().unwrap() {
        let score = Score::parse(detection).unwrap();
        for (key, want) in by_options.as_object().unwrap() {
            let parts: Vec<&str> = key.split('-').collect();
            let options = ScoreOptions {
                exclude_bos: parts[0] == "true",
                exclude_current_token: parts[1] == "true",
                metric: Metric::parse(parts[2]).unwrap(),
                queries: None,
            };
            let got = scores(row, place, score, &options).unwrap();
            let want = common::flat(want);
            let unrounded = match options.metric {
                Metric::Abs => common::flat(&reference["scores_abs_unrounded"][detection][key]),
                Metric::Mul => Vec::new(),
            };
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let g = f64::from(g);
                // abs rounds to 3 decimals: a value within TOL of a rounding edge may fall either side
                let near_edge = options.metric == Metric::Abs
                    && unrounded.get(i).is_some_and(|u| ((u * 1000.0).fract().abs() - 0.5).abs() * 1e-3 < TOL);
                let tolerance = if near_edge { 1e-3 + TOL } else { TOL };
                assert!((g - w).abs() <= tolerance, "{name} {detection} {key} [{i}]: got {g}, TransformerLens {w}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 48, "{name}: only {checked} scores compared");
}

#[test]
fn scores_equal_transformer_lens_on_gpt2() {
    check_scores("gpt2", Place::DecoderSelf);
}

#[test]
fn scores_equal_transformer_lens_on_bert() {
    check_scores("bert", Place::EncoderSelf);
}

#[test]
fn scores_equal_transformer_lens_on_the_trained_induction_model() {
    check_scores("headmap-tiny-induction", Place::DecoderSelf);
}

/// The model trained here to show induction: its card names three induction heads in layer 1
/// (heads 0, 1 and 3, 0.97 on the second half through transformers) and none in layer 0; the
/// probe finds the same, whatever the seed.
#[test]
fn the_probe_finds_the_trained_model_s_induction_heads() {
    let model = common::load(&root("www/models/headmap-tiny-induction"));
    let card: Value =
        serde_json::from_slice(&common::read(&root("www/models/headmap-tiny-induction/headmap.json"))).unwrap();
    assert_eq!(card["induction"]["layer"], 1);
    for seed in [0, 1, 2] {
        let probe = induction_probe(&model, None, 25, seed).unwrap();
        let (layer, head, score) = probe.best();
        assert!(layer == 1 && head != 2 && score > 0.6, "seed {seed}: {:?}", probe.scores);
        for h in [0, 1, 3] {
            assert!(probe.scores[[1, h]] > 0.5, "seed {seed}: {:?}", probe.scores);
        }
        assert!(probe.scores.row(0).iter().all(|&s| s < 0.05), "seed {seed}: {:?}", probe.scores);
        assert!(probe.scores[[1, 2]] < 0.1, "seed {seed}: {:?}", probe.scores);
    }
}

fn check_rollout(name: &str, place: Place) {
    let reference = reference(name);
    let model = common::load(&root(reference["model"].as_str().unwrap()));
    let run = run_ids(&model, &ids_of(&reference), place);
    let row = run.place(place).unwrap().row(0).unwrap();
    for fusion in Fusion::ALL {
        let got: Vec<f32> = rollout(row, place, fusion).unwrap().iter().flatten().copied().collect();
        common::assert_close(
            &got,
            &common::flat(&reference["rollout"][fusion.name()]),
            TOL,
            &format!("{name} rollout {}", fusion.name()),
        );
    }
}

#[test]
fn rollout_equals_numpy_on_gpt2_and_bert() {
    check_rollout("gpt2", Place::DecoderSelf);
    check_rollout("bert", Place::EncoderSelf);
}

fn first_row(run: &Run, place: Place) -> &RowAttention {
    run.place(place).unwrap().row(0).unwrap()
}

#[test]
fn the_probe_repeats_its_tokens_and_scores_the_second_half() {
    let model = common::load(&root("tests/fixtures/hf/gpt2"));
    let probe = induction_probe(&model, None, 20, 7).unwrap();
    assert_eq!(probe.place, Place::DecoderSelf);
    assert!(probe.causal);
    assert_eq!(probe.ids.len(), 1 + 2 * 20);
    assert_eq!(probe.ids[probe.second..], probe.ids[probe.second - 20..probe.second]);
    let special = model.tokenizer().vocabulary().unwrap().special;
    assert!(probe.ids[1..].iter().all(|id| !special.contains(id)), "r holds no special token");
    // the same seed gives the same sequence; the scores are the induction score of the second half
    assert_eq!(induction_probe(&model, None, 20, 7).unwrap().ids, probe.ids);
    let options = ScoreOptions { queries: Some(probe.second..probe.second + 20), ..ScoreOptions::default() };
    let again = scores(first_row(&probe.run, probe.place), probe.place, Score::Induction, &options).unwrap();
    assert_eq!(again, probe.scores);
    assert_eq!(probe.scores.dim(), (2, 4));
}

#[test]
fn the_probe_says_when_it_cannot_run() {
    let gpt2 = common::load(&root("tests/fixtures/hf/gpt2"));
    // gpt2's fixture reads 64 tokens: a start token and two runs of 31 fit, of 32 do not
    assert!(induction_probe(&gpt2, None, 31, 1).is_ok());
    assert!(matches!(induction_probe(&gpt2, None, 32, 1), Err(Error::OutOfRange { .. })));
    assert!(matches!(induction_probe(&gpt2, None, 1, 1), Err(Error::OutOfRange { .. })));
    // an encoder is probed too, and says its place is not causal
    let bert = common::load(&root("tests/fixtures/hf/bert"));
    assert!(!induction_probe(&bert, None, 10, 1).unwrap().causal);
    // an encoder–decoder's encoder and cross-attention are refused by name; its decoder is probed
    let bart = common::load(&root("tests/fixtures/hf/bart"));
    for place in [Place::EncoderSelf, Place::Cross] {
        let e = induction_probe(&bart, Some(place), 10, 1).unwrap_err();
        assert!(matches!(e, Error::ProbeNeedsCausal { .. }), "{e}");
    }
    assert_eq!(induction_probe(&bart, None, 10, 1).unwrap().place, Place::DecoderSelf);
    // the toy has no vocabulary to draw from
    let toy = Model::toy(headmap::ToyConfig::small(1)).unwrap();
    assert!(matches!(induction_probe(&toy, None, 10, 1), Err(Error::NoVocabulary { .. })));
}

#[test]
fn mass_is_the_mean_weight_from_chosen_queries_to_chosen_keys() {
    let model = common::load(&root("tests/fixtures/hf/bert"));
    let run = run_ids(&model, &ids_of(&reference("bert")), Place::EncoderSelf);
    let row = first_row(&run, Place::EncoderSelf);
    let all: Vec<usize> = (0..row.size().1).collect();
    // every key: each query's row sums to 1
    let whole = mass(row, &[3, 5], &all).unwrap();
    assert!(whole.iter().all(|&m| (m - 1.0).abs() < 1e-5), "{whole:?}");
    let one = mass(row, &[3], &[1]).unwrap();
    assert_eq!(one[[1, 2]], row.head(1, 2).unwrap()[[3, 1]]);
    assert!(matches!(mass(row, &[], &[1]), Err(Error::EmptySelection { .. })));
    assert!(matches!(mass(row, &[3], &[]), Err(Error::EmptySelection { .. })));
    assert!(matches!(mass(row, &[99], &[1]), Err(Error::PositionOutOfRange { .. })));
    // a position given twice counts once
    assert_eq!(mass(row, &[3, 3], &[1, 1]).unwrap(), one);
    // PAD positions are no tokens of the sentence: left out, and a selection of PAD alone is empty
    let padded = model
        .run_weights(&headmap::Request { texts: vec!["a".into(), "a b c d e f".into()], ..Default::default() })
        .unwrap();
    let short = first_row(&padded, Place::EncoderSelf);
    let last = short.size().0 - 1;
    assert!(!short.query_valid[last]);
    assert_eq!(mass(short, &[1, last], &[0]).unwrap(), mass(short, &[1], &[0]).unwrap());
    assert!(matches!(mass(short, &[last], &[0]), Err(Error::EmptySelection { .. })));
    // positional scores and rollout need one sentence on both sides
    let bart = common::load(&root("tests/fixtures/hf/bart"));
    let run = bart.run_weights(&headmap::Request { texts: vec!["a b c".into()], ..Default::default() }).unwrap();
    let cross = first_row(&run, Place::Cross);
    let e = scores(cross, Place::Cross, Score::PreviousToken, &ScoreOptions::default()).unwrap_err();
    assert!(matches!(e, Error::ScoreNeedsSelf { .. }), "{e}");
    assert!(scores(cross, Place::Cross, Score::FirstToken, &ScoreOptions::default()).is_ok());
    assert!(matches!(rollout(cross, Place::Cross, Fusion::Mean), Err(Error::RolloutNeedsSelf { .. })));
}
