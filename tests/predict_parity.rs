//! What a model predicts, through the logit lens and with heads off, equal to transformers
//! within 1e-4 for every family with an output head; activation patching equal to a
//! hook-based reference; models without a head refused by name. References:
//! tests/fixtures/hf/*/predict.{json,safetensors} and tests/fixtures/predict/, written by
//! scripts/dev/make_predict_fixtures.py. Needs `--features hf`.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::{Path, PathBuf};

use common::{load, read};
use headmap::models::patch::PatchRequest;
use headmap::models::predict::{PredictOptions, Predictions};
use headmap::run::Ablation;
use headmap::{Error, Model, Place, Request};
use safetensors::SafeTensors;
use serde_json::Value;

const TOL: f32 = 1e-4;

const WITH_HEADS: [&str; 13] = [
    "gpt2",
    "gpt_neo",
    "gpt_neox",
    "llama",
    "llama3",
    "mistral",
    "qwen2",
    "roberta",
    "distilbert",
    "bart",
    "marian",
    "t5",
    "t5-v1_1",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// A reference tensor as its values and shape.
fn tensor(refs: &SafeTensors, name: &str) -> (Vec<f32>, Vec<usize>) {
    let t = refs.tensor(name).unwrap_or_else(|_| panic!("reference tensor {name}"));
    (t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(), t.shape().to_vec())
}

/// Every position's probabilities of every token (top k = the whole vocabulary) against
/// `want` (T, V); the largest difference.
fn assert_probs(got: &Predictions, want: &[f32], vocab: usize, label: &str) -> f32 {
    let row = &got.rows[0];
    assert_eq!(row.predictions.len() * vocab, want.len(), "{label}: positions");
    let mut worst = 0f32;
    for (t, candidates) in row.predictions.iter().enumerate() {
        let candidates = candidates.as_ref().unwrap_or_else(|| panic!("{label}: position {t} has predictions"));
        assert_eq!(candidates.len(), vocab, "{label}: every token listed");
        assert!(candidates.windows(2).all(|w| w[0].p >= w[1].p), "{label}: position {t} best first");
        for c in candidates {
            let w = want[t * vocab + c.id as usize];
            let d = (c.p - w).abs();
            assert!(d <= TOL, "{label}: position {t}, token {}: got {}, transformers {w}", c.id, c.p);
            worst = worst.max(d);
        }
    }
    worst
}

fn request(doc: &Value) -> Request {
    let text = doc["text"].as_str().unwrap().to_string();
    let targets = doc["target"].as_str().map(|t| vec![t.to_string()]).unwrap_or_default();
    Request { texts: vec![text], targets, ..Request::default() }
}

#[test]
fn predictions_lens_and_ablation_equal_transformers_for_every_family_with_a_head() {
    for name in WITH_HEADS {
        let dir = root().join("tests/fixtures/hf").join(name);
        let model = load(&dir);
        let doc: Value = serde_json::from_slice(&read(&dir.join("predict.json"))).unwrap();
        let bytes = read(&dir.join("predict.safetensors"));
        let refs = SafeTensors::deserialize(&bytes).unwrap();
        let (probs, shape) = tensor(&refs, "probs");
        let (positions, vocab) = (shape[0], shape[1]);
        let request = request(&doc);
        let all = PredictOptions { top_k: vocab, lens: Some(None), ..PredictOptions::default() };
        let got = model.predict(&request, &all).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got.rows[0].tokens.len(), positions, "{name}: the positions predicted at");
        let worst = assert_probs(&got, &probs, vocab, &format!("{name} predictions"));
        // the lens: each layer's top token and the probability it gives the last layer's
        let (lens, lens_shape) = tensor(&refs, "lens");
        let layers = lens_shape[0];
        let guesses = got.rows[0].lens.as_ref().expect("the lens was asked");
        assert_eq!(guesses.len(), layers, "{name}: one lens row per layer");
        for (l, row) in guesses.iter().enumerate() {
            for (t, g) in row.iter().enumerate() {
                let g = g.as_ref().unwrap_or_else(|| panic!("{name}: lens at layer {l}, position {t}"));
                let at = |id: u32| lens[(l * positions + t) * vocab + id as usize];
                let final_top = got.rows[0].predictions[t].as_ref().unwrap()[0].id;
                let label = format!("{name} lens layer {l} position {t}");
                assert!((g.top.p - at(g.top.id)).abs() <= TOL, "{label}: p of its top token");
                assert!((g.p_final - at(final_top)).abs() <= TOL, "{label}: p of the last layer's top token");
                let best = (0..vocab as u32).map(at).fold(0f32, f32::max);
                assert!(best - g.top.p <= TOL, "{label}: its top token is transformers' top");
            }
        }
        // the lens of one position (every layer's row through the head at once) is that column
        let t = positions - 1;
        let one = PredictOptions { top_k: 1, lens: Some(Some(t)), ..PredictOptions::default() };
        let alone = model.predict(&request, &one).unwrap().rows.remove(0).lens.unwrap();
        for (l, (row, whole)) in alone.iter().zip(guesses).enumerate() {
            let (g, w) = (row[t].as_ref().unwrap(), whole[t].as_ref().unwrap());
            assert_eq!(g.top.id, w.top.id, "{name} lens of position {t} alone, layer {l}");
            assert!((g.top.p - w.top.p).abs() <= 1e-6 && (g.p_final - w.p_final).abs() <= 1e-6, "{name} layer {l}");
            assert!(row.iter().enumerate().all(|(u, g)| g.is_some() == (u == t)), "{name}: only position {t}");
        }
        // heads off: the pre-hook's zeros, every later layer recomputed
        let spec = doc["ablate"].as_str().unwrap();
        let off = PredictOptions { top_k: vocab, ablate: model.heads(spec).unwrap(), ..PredictOptions::default() };
        let ablated = model.predict(&request, &off).unwrap();
        let (want, _) = tensor(&refs, "ablated");
        assert_probs(&ablated, &want, vocab, &format!("{name} with {spec} off"));
        assert_ne!(ablated.rows[0].predictions, got.rows[0].predictions, "{name}: turning heads off changes something");
        eprintln!("{name}: predictions within {worst:.1e}");
    }
}

#[test]
fn models_without_a_head_are_refused_by_name_and_their_attention_still_runs() {
    for (name, missing) in [("bert", "cls.predictions"), ("xlm-roberta", "lm_head.dense"), ("electra", "discriminator")]
    {
        let model = load(&root().join("tests/fixtures/hf").join(name));
        let request = Request { texts: vec!["The animal was tired.".into()], ..Request::default() };
        let err = model.predict(&request, &PredictOptions { top_k: 5, ..PredictOptions::default() }).unwrap_err();
        assert!(matches!(&err, Error::NoOutputHead { .. }), "{name}: {err}");
        assert!(err.to_string().contains(missing), "{name}: the message names what is missing: {err}");
        model.run(&request).unwrap_or_else(|e| panic!("{name}: attention without a head: {e}"));
        // ablation needs no head: the attention of later layers changes
        let off = Request { ablate: Some("0.0".into()), ..request.clone() };
        let (plain, ablated) = (model.run(&request).unwrap(), model.run(&off).unwrap());
        let layer = |run: &headmap::Run, l| run.places[0].rows[0].layer(l).unwrap();
        assert_eq!(layer(&plain, 0), layer(&ablated, 0), "{name}: the ablated head's own layer looks the same");
        assert_ne!(layer(&plain, 1), layer(&ablated, 1), "{name}: a later layer attends differently");
    }
}

#[test]
fn a_view_run_that_keeps_its_output_predicts_what_predict_does() {
    for name in WITH_HEADS {
        let model = load(&root().join("tests/fixtures/hf").join(name));
        let doc: Value =
            serde_json::from_slice(&read(&root().join("tests/fixtures/hf").join(name).join("predict.json"))).unwrap();
        let spec = doc["ablate"].as_str().unwrap().to_string();
        for ablate in [None, Some(spec)] {
            let request = Request { ablate: ablate.clone(), output: true, ..request(&doc) };
            let run = model.run_weights(&request).unwrap();
            let heads = ablate.as_deref().map(|s| model.heads(s).unwrap()).unwrap_or_default();
            let options = PredictOptions { top_k: 5, ablate: heads, ..PredictOptions::default() };
            let want = model.predict(&request, &options).unwrap();
            assert_eq!(model.predictions_of(&run, None, 5).unwrap(), want, "{name}, {ablate:?} off: the same bits");
        }
        // a batch: the first text's positions are its own; the longer second's pad the first
        let mut two = request(&doc);
        two.texts.push(format!("{} And so on.", two.texts[0]));
        two.targets =
            two.targets.iter().cloned().chain(two.targets.iter().map(|t| format!("{t} And so on."))).collect();
        let two_run = model.run_weights(&Request { output: true, ..two.clone() }).unwrap();
        let batch = model.predictions_of(&two_run, None, 3).unwrap();
        let first_only = model.predictions_of(&two_run, Some(0), 3).unwrap();
        assert_eq!(first_only.rows, batch.rows[..1], "{name}: one row asked, the same row");
        assert!(matches!(model.predictions_of(&two_run, Some(2), 3), Err(Error::NoSuch { .. })), "{name}: no row 2");
        let first =
            Request { texts: two.texts[..1].to_vec(), targets: two.targets.iter().take(1).cloned().collect(), ..two };
        let alone = model.predict(&first, &PredictOptions { top_k: 3, ..PredictOptions::default() }).unwrap();
        // natively matrixmultiply's sums may round apart with the rows around them: 1e-5
        let (row, want) = (&batch.rows[0], &alone.rows[0]);
        for (t, (got, want)) in row.predictions.iter().zip(&want.predictions).enumerate() {
            let (got, want) = (got.as_ref().unwrap(), want.as_ref().unwrap());
            let close = got.iter().zip(want).all(|(g, w)| g.id == w.id && (g.p - w.p).abs() <= 1e-5);
            assert!(close, "{name}: row 0 of a batch, position {t}: {got:?} alone {want:?}");
        }
        // (an encoder–decoder's shorter target, shifted right behind the start token, keeps
        // one more position in a batch: the one after its last token, as transformers' labels)
        let pad = &row.predictions[want.predictions.len() + usize::from(model.info().encoder_decoder)..];
        assert!(pad.iter().all(Option::is_none), "{name}: none at PAD");
    }
    // without a head, a run asked for its output is a view's run, and predicting is refused
    let bert = load(&root().join("tests/fixtures/hf/bert"));
    let request = Request { texts: vec!["The animal was tired.".into()], output: true, ..Request::default() };
    let run = bert.run_weights(&request).unwrap();
    assert!(run.hidden.iter().all(|h| h.encoder.is_none()), "no output kept for nothing to read it");
    assert!(matches!(bert.predictions_of(&run, None, 5), Err(Error::NoOutputHead { .. })));
}

fn induction() -> Model {
    load(&root().join("www/models/headmap-tiny-induction"))
}

#[test]
fn patching_equals_hooks_in_transformers() {
    let doc: Value =
        serde_json::from_slice(&read(&root().join("tests/fixtures/predict/induction-patch.json"))).unwrap();
    let s = |k: &str| doc[k].as_str().unwrap().to_string();
    let request = PatchRequest {
        clean: s("clean"),
        corrupt: s("corrupt"),
        answer: s("answer"),
        wrong: s("wrong"),
        ..PatchRequest::default()
    };
    // told after each group of heads patched side by side, one per thread
    let mut told = 0;
    let got = induction().patch(&request, |done, total| {
        assert!(
            total == 8 && done > told && done - told <= headmap::par::threads().max(1),
            "{told} then {done} of {total}"
        );
        told = done;
        true
    });
    assert_eq!(told, 8, "the last progress is every head");
    let got = got.unwrap();
    let close = |a: f32, b: &Value, label: &str| {
        let b = b.as_f64().unwrap() as f32;
        assert!((a - b).abs() <= 1e-3 * b.abs().max(1.0), "{label}: got {a}, transformers {b}");
    };
    close(got.clean_diff, &doc["clean_diff"], "clean logit difference");
    close(got.corrupt_diff, &doc["corrupt_diff"], "corrupted logit difference");
    for (l, row) in got.map.iter().enumerate() {
        for (h, &v) in row.iter().enumerate() {
            close(v, &doc["map"][l][h], &format!("patched layer {l} head {h}"));
        }
    }
    // Stop: the work ends after the head that said so
    let stopped = induction().patch(&request, |done, _| done < 3).unwrap();
    assert_eq!(stopped.map[0][..3], got.map[0][..3]);
    assert_eq!(stopped.map[1], [0.0; 4], "heads after Stop are not run");
}

#[test]
fn patching_refuses_what_it_cannot_compare() {
    let model = induction();
    let base = PatchRequest {
        clean: "고양이 공원 노래".into(),
        corrupt: "고양이 공원".into(),
        answer: "노래".into(),
        wrong: "길".into(),
        ..PatchRequest::default()
    };
    assert_eq!(model.patch(&base, |_, _| true).unwrap_err(), Error::LengthsDiffer { clean: 4, corrupt: 3 });
    let two = PatchRequest { answer: "노래 길".into(), corrupt: "고양이 길 노래".into(), ..base.clone() };
    let err = model.patch(&two, |_, _| true).unwrap_err();
    assert_eq!(err, Error::AnswerNotOneToken { word: "노래 길".into(), tokens: vec!["노래".into(), "길".into()] });
    assert_eq!(model.heads("2.0").unwrap_err(), Error::NoSuch { what: "layer".into(), index: 2, count: 2 });
    assert_eq!(model.heads("1.4").unwrap_err(), Error::NoSuch { what: "head".into(), index: 4, count: 4 });
    assert!(matches!(model.heads("cross:0.0").unwrap_err(), Error::PlaceAbsent { .. }));
}

#[test]
fn the_induction_circuit_ablation_changes_what_the_model_copies() {
    // the measurement in small: a random repeat of the model's words, its second copy
    let text = "고양이 공원 노래 꽃 강 가방 길 개 그림 공 고양이 공원 노래 꽃 강 가방 길 개 그림 공";
    let model = induction();
    let request = Request { texts: vec![text.into()], ..Request::default() };
    let accuracy = |spec: &str, how: Ablation| {
        let options =
            PredictOptions { top_k: 1, ablate: model.heads(spec).unwrap(), ablation: how, ..PredictOptions::default() };
        let row = model.predict(&request, &options).unwrap().rows.remove(0);
        let n = (row.tokens.len() - 1) / 2; // <bos> r r
        let copied = (row.tokens.len() - n..row.tokens.len() - 1)
            .filter(|&t| row.predictions[t].as_ref().unwrap()[0].token == row.tokens[t + 1])
            .count();
        copied as f32 / (n - 1) as f32
    };
    assert_eq!(accuracy("", Ablation::Zero), 1.0, "the model copies the second half");
    assert_eq!(accuracy("1.0,1.1,1.3", Ablation::Zero), 0.0, "the induction heads off");
    assert_eq!(accuracy("0.3", Ablation::Zero), 0.0, "the previous-token head off");
    assert_eq!(accuracy("0.0", Ablation::Zero), 1.0, "another head off");
}

#[test]
fn patching_runs_at_every_place_of_an_encoder_decoder() {
    let model = load(&root().join("tests/fixtures/hf/bart"));
    let base = PatchRequest {
        clean: "The cat was tired.".into(),
        corrupt: "The dog was tired.".into(),
        target: Some("It was tired.".into()),
        // the fixture's vocabulary is a few hundred pieces: letters are tokens
        answer: "I".into(),
        wrong: "T".into(),
        ..PatchRequest::default()
    };
    for place in [Place::EncoderSelf, Place::DecoderSelf, Place::Cross] {
        let got = model.patch(&PatchRequest { place: Some(place), ..base.clone() }, |_, _| true).unwrap();
        let info = model.info().place(place).unwrap();
        assert_eq!((got.map.len(), got.map[0].len()), (info.layers, info.heads), "{place:?}: the map's shape");
        assert!(got.map.iter().flatten().all(|v| v.is_finite()), "{place:?}: every head patched");
        assert_eq!(got.place, place);
    }
    // the same text clean and corrupted: nothing to bring back, every head 0
    let same = PatchRequest { corrupt: base.clean.clone(), ..base };
    let got = model.patch(&same, |_, _| true).unwrap();
    assert!(got.map.iter().flatten().all(|&v| v == 0.0));
}
