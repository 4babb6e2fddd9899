//! Queries and keys against transformers: every head's Q and K as `qk::layer_vectors` gives
//! them equal the ones transformers' attention forward multiplies (after RoPE, with the
//! shared key head of a grouped-query model, before the division and T5's bias) within 1e-4,
//! for every place, layer and head of eleven tiny fixtures; their scores are the run's, and
//! with the run's bias and mask they give transformers' weights. The joint embedding's PCA
//! and correlations equal NumPy's. References: tests/fixtures/qk/, written by
//! scripts/dev/make_qk_fixtures.py. Needs `--features hf`.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use headmap::qk::{self, joint, Corpus};
use headmap::run::{Batch, Row, RowAttention, Run, Settings};
use headmap::tokenize::Token;
use headmap::{Model, Place, Request};
use ndarray::{Array2, ArrayD, ArrayView2, Axis, Ix2};
use safetensors::SafeTensors;
use serde_json::Value;

const TOL: f32 = 1e-4;

/// Every family the fixtures hold: absolute positions, no scaling (GPT-Neo, T5), rotary
/// (Llama, Llama 3's scaled frequencies, Qwen2 with biases, Mistral's window), partial and odd
/// rotary (GPT-NeoX), grouped-query (Llama 4/2, Qwen2 4/2, Mistral 4/1, Llama 3 2/1), and
/// encoder–decoders in all three places (T5, BART).
const FIXTURES: [&str; 11] =
    ["bert", "gpt2", "gpt_neo", "llama", "llama3", "qwen2", "mistral", "gpt_neox", "gpt_neox-odd-rotary", "t5", "bart"];

fn root(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

struct Fixture {
    name: &'static str,
    doc: Value,
    bytes: Vec<u8>,
}

impl Fixture {
    fn read(name: &'static str) -> Self {
        let dir = root("tests/fixtures/qk");
        let doc = serde_json::from_slice(&common::read(&dir.join(format!("{name}.json")))).unwrap();
        Fixture { name, doc, bytes: common::read(&dir.join(format!("{name}.safetensors"))) }
    }

    fn model(&self) -> Model {
        common::load(&root(self.doc["model"].as_str().unwrap()))
    }

    fn tensor(&self, key: &str) -> ArrayD<f32> {
        let refs = SafeTensors::deserialize(&self.bytes).unwrap();
        let t = refs.tensor(key).unwrap_or_else(|_| panic!("{}: no tensor {key}", self.name));
        let data = t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        ArrayD::from_shape_vec(t.shape().to_vec(), data).unwrap()
    }

    fn places(&self) -> Vec<(Place, f32)> {
        let divisors = self.doc["divisor"].as_object().unwrap();
        divisors.iter().map(|(p, d)| (Place::parse(p).unwrap(), d.as_f64().unwrap() as f32)).collect()
    }

    /// The fixture's ids run as they are, one unpadded row (and its decoder ids), every place kept.
    fn run(&self, model: &Model) -> Run {
        let row = |key: &str| {
            self.doc.get(key).map(|ids| {
                let ids: Vec<u32> = ids.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
                Row {
                    tokens: ids.iter().map(|id| Token::word(&id.to_string())).collect(),
                    valid: vec![true; ids.len()],
                    ids,
                }
            })
        };
        let batch =
            Batch { sources: row("ids").into_iter().collect(), targets: row("decoder_ids").into_iter().collect() };
        model.run_batch(&batch, &Settings::trained()).unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}

/// One (Tq, Tk)-like slice [layer, head] of an (L, H, R, C) reference.
fn slice(t: &ArrayD<f32>, layer: usize, head: usize) -> Array2<f32> {
    t.index_axis(Axis(0), layer).index_axis(Axis(0), head).to_owned().into_dimensionality::<Ix2>().unwrap()
}

/// The largest |got − want|, failing with `label` past `tol`.
fn close(got: ArrayView2<f32>, want: ArrayView2<f32>, tol: f32, label: &str) -> f32 {
    assert_eq!(got.dim(), want.dim(), "{label}: shapes differ");
    let mut worst = 0f32;
    for ((at, g), w) in got.indexed_iter().zip(want.iter()) {
        let d = (g - w).abs();
        assert!(d <= tol, "{label}{at:?}: got {g}, reference {w} (|Δ| {d} > {tol})");
        worst = worst.max(d);
    }
    worst
}

/// Softmax over the keys `allowed` lets through, 0 elsewhere, in f64.
fn masked_softmax(scores: ArrayView2<f64>, allowed: impl Fn(usize, usize) -> bool) -> Array2<f64> {
    let mut out = Array2::zeros(scores.dim());
    for (i, row) in scores.rows().into_iter().enumerate() {
        let keys: Vec<usize> = (0..row.len()).filter(|&j| allowed(i, j)).collect();
        let max = keys.iter().map(|&j| row[j]).fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = keys.iter().map(|&j| (row[j] - max).exp()).sum();
        for &j in &keys {
            out[[i, j]] = (row[j] - max).exp() / sum;
        }
    }
    out
}

#[derive(Default, Debug)]
struct Worst {
    q: f32,
    k: f32,
    scores: f32,
    weights: f32,
}

/// Every place, layer and head of one fixture.
fn check_vectors(fixture: &Fixture) -> Worst {
    let model = fixture.model();
    let run = fixture.run(&model);
    let mut worst = Worst::default();
    for (place, divisor) in fixture.places() {
        let row = run.place(place).unwrap().row(0).unwrap();
        let (q_ref, k_ref) =
            (fixture.tensor(&format!("{}.q", place.name())), fixture.tensor(&format!("{}.k", place.name())));
        let w_ref = fixture.tensor(&format!("{}.weights", place.name()));
        assert_eq!(
            (row.layers(), row.heads()),
            (q_ref.shape()[0], q_ref.shape()[1]),
            "{} {}",
            fixture.name,
            place.name()
        );
        for layer in 0..row.layers() {
            let heads = qk::layer_vectors(row, layer).unwrap();
            let mask = row.mask(layer).unwrap();
            for (h, v) in heads.iter().enumerate() {
                let label = |what: &str| format!("{} {} layer {layer} head {h} {what}", fixture.name, place.name());
                worst.q = worst.q.max(close(v.queries.view(), slice(&q_ref, layer, h).view(), TOL, &label("q")));
                worst.k = worst.k.max(close(v.keys.view(), slice(&k_ref, layer, h).view(), TOL, &label("k")));
                assert!((v.divisor - divisor).abs() < 1e-6, "{}: divisor {} vs {divisor}", label(""), v.divisor);
                let trace = row.trace(layer, h).unwrap();
                let scores = v.scores();
                worst.scores = worst.scores.max(close(scores.view(), trace.steps.scaled.view(), TOL, &label("scores")));
                // our vectors, our bias and our mask give transformers' weights
                let mut biased = scores.mapv(f64::from);
                if let Some(bias) = &trace.steps.position_bias {
                    biased += &bias.mapv(f64::from);
                }
                let weights = masked_softmax(biased.view(), |i, j| mask.allows(i, j)).mapv(|x| x as f32);
                let want = slice(&w_ref, layer, h);
                worst.weights = worst.weights.max(close(weights.view(), want.view(), TOL, &label("weights")));
            }
        }
    }
    worst
}

#[test]
fn queries_and_keys_equal_transformers_in_every_family_place_layer_and_head() {
    for name in FIXTURES {
        let w = check_vectors(&Fixture::read(name));
        println!(
            "{name}: largest |Δ| q {:.1e}, k {:.1e}, scores {:.1e}, weights {:.1e}",
            w.q, w.k, w.scores, w.weights
        );
    }
}

#[test]
fn grouped_query_heads_share_their_key_head() {
    // llama: 4 query heads over 2 key/value heads, so heads 0, 1 read one key and 2, 3 another
    let fixture = Fixture::read("llama");
    let model = fixture.model();
    let run = fixture.run(&model);
    let heads = qk::layer_vectors(run.place(Place::DecoderSelf).unwrap().row(0).unwrap(), 1).unwrap();
    assert_eq!(heads[0].keys, heads[1].keys);
    assert_eq!(heads[2].keys, heads[3].keys);
    assert_ne!(heads[1].keys, heads[2].keys);
    assert_ne!(heads[0].queries, heads[1].queries);
}

/// The corpus of one fixture row at `layer`.
fn corpus_of(row: &RowAttention, layer: usize) -> Corpus {
    let mut corpus = Corpus::new();
    corpus.add(row, layer).unwrap();
    corpus
}

#[test]
fn the_picture_equals_numpy_s_pca_and_correlations() {
    let mut checked = 0;
    for name in FIXTURES {
        let fixture = Fixture::read(name);
        let model = fixture.model();
        let run = fixture.run(&model);
        let (mut coords, mut explained_worst, mut correlation_worst, mut scale) = (0f32, 0f32, 0f32, 0f32);
        for reference in fixture.doc["pca"].as_array().unwrap() {
            let place = Place::parse(reference["place"].as_str().unwrap()).unwrap();
            let (layer, head) =
                (reference["layer"].as_u64().unwrap() as usize, reference["head"].as_u64().unwrap() as usize);
            let label = format!("{name} {} layer {layer} head {head}", place.name());
            let corpus = corpus_of(run.place(place).unwrap().row(0).unwrap(), layer);
            let picture = corpus.picture(head).unwrap();
            let want = common::matrix(&reference["coords"]);
            // each axis's sign is arbitrary in an SVD: turn ours to NumPy's before comparing
            let mut got = picture.coords.clone();
            for (mut axis, w) in got.axis_iter_mut(Axis(1)).zip(want.axis_iter(Axis(1))) {
                if axis.dot(&w) < 0.0 {
                    axis.mapv_inplace(|x| -x);
                }
            }
            coords = coords.max(close(got.view(), want.view(), TOL, &format!("{label} coords")));
            let explained = common::flat(&reference["explained"]);
            let correlation = common::flat(&reference["correlation"]);
            for (i, (g, w)) in picture.explained.iter().zip(&explained).enumerate() {
                explained_worst = explained_worst.max(near(*g, *w, &format!("{label} explained[{i}]")));
            }
            for (i, (g, w)) in picture.correlation.iter().zip(&correlation).enumerate() {
                let g = g.unwrap_or_else(|| panic!("{label}: no correlation[{i}]"));
                correlation_worst = correlation_worst.max(near(g, *w, &format!("{label} correlation[{i}]")));
            }
            scale = scale.max(near(picture.scale, reference["scale"].as_f64().unwrap(), &format!("{label} scale")));
            checked += 1;
        }
        println!(
            "{name}: largest |Δ| from NumPy: coords {coords:.1e}, explained {explained_worst:.1e}, \
             correlations {correlation_worst:.1e}, scale {scale:.1e}"
        );
    }
    assert_eq!(checked, 15, "one head per place of every fixture");
}

fn near(got: f32, want: f64, label: &str) -> f32 {
    let d = (f64::from(got) - want).abs();
    assert!(d <= f64::from(TOL), "{label}: got {got}, NumPy {want} (|Δ| {d})");
    d as f32
}

/// Per query row of `corpus`, the key rows its sentence's mask lets it see.
fn keys_per_query(corpus: &Corpus) -> BTreeMap<usize, Vec<usize>> {
    let mut keys: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, j) in corpus.pairs() {
        keys.entry(i).or_default().push(j);
    }
    keys
}

/// Softmax of q·k over `keys`, the products in f64 so only the vectors' own rounding counts.
fn softmax_row(q: ArrayView2<f32>, k: ArrayView2<f32>, i: usize, keys: &[usize]) -> Vec<f64> {
    let dots: Vec<f64> =
        keys.iter().map(|&j| q.row(i).iter().zip(k.row(j)).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum()).collect();
    let max = dots.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = dots.iter().map(|d| (d - max).exp()).sum();
    dots.iter().map(|d| (d - max).exp() / sum).collect()
}

/// Over a padded corpus of three sentences, the joint embedding keeps every query's softmax
/// over the keys its sentence lets it see, in every head of `layer` at every place.
fn check_softmax_kept(model: &Model, request: &Request, layer: usize, label: &str) {
    let run = model.run(request).unwrap();
    for place in &run.places {
        let mut corpus = Corpus::new();
        for row in &place.rows {
            corpus.add(row, layer).unwrap();
        }
        assert_eq!(corpus.sentences.len(), 3);
        let keys = keys_per_query(&corpus);
        assert_eq!(keys.len(), corpus.size().0, "{label}: every valid query sees a key");
        for head in 0..corpus.heads() {
            let (q, k) = corpus.vectors(head).unwrap();
            let j = joint::normalize(q, k);
            for (&i, keys) in &keys {
                let (before, after) =
                    (softmax_row(q, k, i, keys), softmax_row(j.queries.view(), j.keys.view(), i, keys));
                for (a, b) in before.iter().zip(&after) {
                    assert!((a - b).abs() < 1e-5, "{label} {} head {head} query {i}: {a} vs {b}", place.place.name());
                }
            }
        }
    }
}

#[test]
fn the_joint_embedding_keeps_every_softmax_of_a_real_corpus() {
    let texts =
        ["The animal didn't cross the street.", "동물이 길을 건너지 않았다.", "Attention is all you need, they said."];
    let request = Request { texts: texts.map(String::from).to_vec(), ..Request::default() };
    let minilm = root("models/all-MiniLM-L6-v2");
    assert!(minilm.join("model.safetensors").exists(), "models/all-MiniLM-L6-v2 is missing: run scripts/setup");
    check_softmax_kept(&common::load(&minilm), &request, 3, "MiniLM");
    check_softmax_kept(&common::load(&root("tests/fixtures/hf/llama")), &request, 1, "llama");
    let targets = ["It was tired.", "그것은 피곤했다.", "Yes."].map(String::from).to_vec();
    check_softmax_kept(&common::load(&root("tests/fixtures/hf/t5")), &Request { targets, ..request }, 1, "t5");
}

#[test]
fn a_corpus_leaves_padding_out_and_keeps_its_sentences_apart() {
    let model = common::load(&root("tests/fixtures/hf/bert"));
    let request = Request { texts: vec!["a".into(), "a b c d e f".into()], ..Request::default() };
    let run = model.run(&request).unwrap();
    let place = run.place(Place::EncoderSelf).unwrap();
    let mut corpus = Corpus::new();
    for row in &place.rows {
        corpus.add(row, 0).unwrap();
    }
    let valid: Vec<usize> = place.rows.iter().map(|r| r.query_valid.iter().filter(|&&v| v).count()).collect();
    assert!(valid[0] < place.rows[0].size().0, "the short row is padded");
    assert_eq!(corpus.size(), (valid[0] + valid[1], valid[0] + valid[1]));
    // no pair crosses from one sentence to the other
    let first = &corpus.sentences[0];
    assert!(corpus.pairs().all(|(i, j)| first.queries.contains(&i) == first.keys.contains(&j)));
    assert_eq!(corpus.pairs().count(), valid[0] * valid[0] + valid[1] * valid[1]);
}

#[test]
fn a_run_through_one_layer_gives_that_layer_s_vectors_and_stops_there() {
    // every family shape: an encoder, a rotary decoder, an encoder–decoder in each place
    for (name, place) in [
        ("bert", Place::EncoderSelf),
        ("llama", Place::DecoderSelf),
        ("t5", Place::EncoderSelf),
        ("t5", Place::DecoderSelf),
        ("t5", Place::Cross),
    ] {
        let model = common::load(&root(&format!("tests/fixtures/hf/{name}")));
        let whole = Request { texts: vec!["The animal was tired.".into()], place: Some(place), ..Request::default() };
        let full = model.run(&whole).unwrap();
        let layers = full.place(place).unwrap().layers();
        for layer in 0..layers {
            let through = model.run(&Request { through_layer: Some(layer), ..whole.clone() }).unwrap();
            let row = &through.place(place).unwrap().rows[0];
            assert_eq!(row.layers(), layer + 1, "{name} {place:?}: the run stops after layer {layer}");
            let (a, b) = (
                qk::layer_vectors(&full.place(place).unwrap().rows[0], layer).unwrap(),
                qk::layer_vectors(row, layer).unwrap(),
            );
            for (x, y) in a.iter().zip(&b) {
                assert_eq!((&x.queries, &x.keys), (&y.queries, &y.keys), "{name} {place:?} layer {layer}");
            }
        }
        // a layer past the last runs them all
        let past = model.run(&Request { through_layer: Some(99), ..whole.clone() }).unwrap();
        assert_eq!(past.place(place).unwrap().rows[0].layers(), layers);
    }
}
