//! Texts of one length run together give each text's own run, bit for bit: an encoder's
//! products then take every text's tokens at once (what a corpus's scores go through,
//! `heads::each::each_text`), and nothing of one text may reach another. For every
//! encoder-only family's fixture, and the default model: rows of one length, each different,
//! run as one batch and each alone — weights of every layer, hidden states and residuals — for
//! the run a view asks (weights alone), the whole run, a what-if mask, a run through one
//! layer and a run that recomputes its weights on demand, on one thread and on two with every
//! split taken.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::Path;

use common::load;
use headmap::heads::each::{each_text, wanted_at};
use headmap::heads::{scores_of, ScoreOptions};
use headmap::run::{Batch, Row, Settings, Store};
use headmap::{par, MaskKind, Model, Place, Run};

const FAMILIES: &[&str] = &["bert", "roberta", "xlm-roberta", "distilbert", "electra", "minilm"];

fn model(name: &str) -> Model {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match name {
        "minilm" => load(&root.join("models/all-MiniLM-L6-v2")),
        _ => load(&root.join("tests/fixtures/hf").join(name)),
    }
}

/// Three rows of one length, each a different order of one text's tokens between its first
/// and last (the special tokens stay where they are).
fn rows(model: &Model, text: &str) -> Vec<Row> {
    let encoded = model.tokenize(text).unwrap();
    let n = encoded.ids.len();
    assert!(n >= 5, "{text}: {n} tokens");
    (0..3)
        .map(|turn| {
            let order: Vec<usize> =
                (0..n).map(|i| if i == 0 || i + 1 == n { i } else { 1 + (i - 1 + turn) % (n - 2) }).collect();
            Row {
                ids: order.iter().map(|&i| encoded.ids[i]).collect(),
                tokens: order.iter().map(|&i| encoded.tokens[i].clone()).collect(),
                valid: vec![true; n],
            }
        })
        .collect()
}

/// Every weight, hidden state and residual of batch row `r`, in one order.
fn bits(run: &Run, r: usize) -> Vec<u32> {
    let mut out = Vec::new();
    for place in &run.places {
        let row = place.row(r).unwrap();
        // a run through one layer records the layers it computed
        for weights in (0..row.layers()).map_while(|layer| row.layer(layer).ok()) {
            out.extend(weights.iter().map(|w| w.to_bits()));
        }
    }
    let h = &run.hidden[r];
    for m in [&h.encoder, &h.decoder].into_iter().flatten().chain(&h.residuals) {
        out.extend(m.iter().map(|x| x.to_bits()));
    }
    out
}

fn settings() -> Vec<(&'static str, Settings)> {
    let trained = Settings::trained;
    vec![
        ("the weights alone", Settings { hidden: false, ..trained() }),
        ("the whole run with residuals", Settings { residuals: true, ..trained() }),
        ("a causal what-if", Settings { what_if: Some((Place::EncoderSelf, MaskKind::Causal)), ..trained() }),
        ("through layer 0", Settings { hidden: false, through: Some(0), ..trained() }),
        ("weights on demand", Settings { store: Store::OnDemand, ..trained() }),
    ]
}

#[test]
fn texts_run_together_give_each_text_its_own_run_bit_for_bit() {
    par::split_everything(true);
    let pools: Vec<_> = [1, 2].into_iter().map(|n| par::pool(n).unwrap()).collect();
    for name in FAMILIES {
        let model = model(name);
        let rows = rows(&model, "the animal didn't cross the street because it was too tired");
        for (what, settings) in settings() {
            for pool in &pools {
                let together = pool
                    .install(|| model.run_batch(&Batch { sources: rows.clone(), targets: vec![] }, &settings))
                    .unwrap();
                assert_eq!(together.places[0].batch(), rows.len(), "{name}, {what}");
                for (r, row) in rows.iter().enumerate() {
                    let alone = pool
                        .install(|| model.run_batch(&Batch { sources: vec![row.clone()], targets: vec![] }, &settings));
                    let alone = alone.unwrap();
                    let (got, want) = (bits(&together, r), bits(&alone, 0));
                    assert!(!want.is_empty(), "{name}, {what}: nothing computed");
                    assert!(got == want, "{name}, {what}, row {r}: not the bits of its own run");
                }
            }
        }
    }
}

/// A corpus's scores: texts of one length among others, one the model refuses, each with the
/// scores of its own run.
#[test]
fn a_corpus_of_many_lengths_scores_each_text_as_its_own_run() {
    let model = model("minilm");
    let words = "the cat sat on a mat and then it went home because it was late".split(' ').collect::<Vec<_>>();
    let mut texts: Vec<String> = (0..40)
        .map(|i| {
            words[..3 + i % 7].iter().rev().cycle().skip(i % 3).take(3 + i % 7).copied().collect::<Vec<_>>().join(" ")
        })
        .collect();
    texts.insert(17, String::new());
    texts.insert(5, "word ".repeat(600));
    let place = model.info().place(Place::EncoderSelf).unwrap().clone();
    let wanted = wanted_at(place.place, &[]).unwrap();
    let options = ScoreOptions::default();
    let got = each_text(&model, &texts, &place, &wanted, &options);
    assert_eq!(got.len(), texts.len());
    for (text, got) in texts.iter().zip(got) {
        let request = headmap::Request { texts: vec![text.clone()], place: Some(place.place), ..Default::default() };
        match model.run_weights(&request) {
            Ok(run) => {
                let want =
                    scores_of(run.place(place.place).unwrap().row(0).unwrap(), place.place, &wanted, &options).unwrap();
                let got = got.unwrap_or_else(|e| panic!("{text:?}: {e}"));
                let same =
                    got.scores.iter().zip(&want).all(|(a, b)| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()));
                assert!(same, "{text:?}: not the scores of its own run");
            }
            Err(e) => assert_eq!(got.unwrap_err().to_string(), e.to_string(), "{text:?}"),
        }
    }
}
