//! Threads change the time, never the weights: every family's fixture (the ones
//! `tests/hf_parity.rs` holds to transformers within 1e-4) gives the same weights and hidden
//! states, bit for bit, with 1, 2 and 3 threads, with every split taken however small the work
//! (`par::split_everything`), on its reference cases' padded batches, in pools of their own and
//! from the test's thread beside the global pool (`par::beside`). With the default thread count
//! (the machine's cores, 2 here) `hf_parity` itself runs the threaded code.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::Path;

use common::{load, read};
use headmap::{par, Request, Run};
use serde_json::Value;

const FAMILIES: &[&str] = &[
    "bert",
    "roberta",
    "xlm-roberta",
    "distilbert",
    "electra",
    "minilm",
    "gpt2",
    "gpt_neo",
    "gpt_neox",
    "gpt_neox-odd-rotary",
    "llama",
    "llama3",
    "mistral",
    "qwen2",
    "t5",
    "t5-v1_1",
    "bart",
    "marian",
    "tiny-ko-en",
];

/// The reference cases' texts (and targets) as requests, each a padded batch.
fn requests(dir: &Path) -> Vec<Request> {
    let reference: Value = serde_json::from_slice(&read(&dir.join("reference.json"))).unwrap();
    let strings = |case: &Value, key: &str| -> Vec<String> {
        case.get(key).map_or(Vec::new(), |v| v.as_array().unwrap().iter().map(|t| t.as_str().unwrap().into()).collect())
    };
    reference["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let texts = if case.get("texts").is_some() { strings(case, "texts") } else { strings(case, "sources") };
            Request { texts, targets: strings(case, "targets"), ..Request::default() }
        })
        .collect()
}

/// Every weight and hidden state of `run`, in one order.
fn values(run: &Run) -> Vec<u32> {
    let mut out = Vec::new();
    for place in &run.places {
        for row in &place.rows {
            out.extend(row.weights().unwrap().iter().map(|w| w.to_bits()));
            // every head pooled to a few pixels, in bands of pixel rows on the threads
            for layer in 0..row.layers() {
                for head in 0..row.heads() {
                    out.extend(row.pooled(layer, head, 3, 2).unwrap().iter().map(|w| w.to_bits()));
                }
            }
        }
    }
    for h in &run.hidden {
        for m in [&h.encoder, &h.decoder].into_iter().flatten() {
            out.extend(m.iter().map(|x| x.to_bits()));
        }
    }
    out
}

#[test]
fn every_family_gives_the_same_bits_on_one_two_and_three_threads() {
    par::split_everything(true);
    let pools: Vec<_> = [1, 2, 3].into_iter().map(|n| (n, par::pool(n).unwrap())).collect();
    for name in FAMILIES {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("tests/fixtures/hf").join(name);
        // two references run models kept elsewhere: the default model and the trained one
        let model = match *name {
            "minilm" => load(&root.join("models/all-MiniLM-L6-v2")),
            "tiny-ko-en" => load(&root.join("www/models/headmap-tiny-ko-en")),
            _ => load(&dir),
        };
        for (n, request) in requests(&dir).iter().enumerate() {
            let runs: Vec<_> = pools
                .iter()
                .map(|(threads, pool)| {
                    assert_eq!(pool.install(par::threads), *threads);
                    // pooled inside the pool too: its bands split by the pool's threads
                    let run = pool.install(|| model.run(request).map(|run| values(&run)));
                    (threads, run.unwrap_or_else(|e| panic!("{name} case {n}: {e}")))
                })
                .collect();
            let (_, one) = &runs[0];
            assert!(!one.is_empty(), "{name} case {n}: nothing computed");
            for (threads, got) in &runs[1..] {
                assert!(got == one, "{name} case {n}: {threads} threads differ from one");
            }
            // from this thread, outside the pools: the forward stays here, and the global
            // pool's threads help with its splits as they wake
            let here = model.run(request).map(|run| values(&run)).unwrap_or_else(|e| panic!("{name} case {n}: {e}"));
            assert!(here == *one, "{name} case {n}: run beside the global pool's threads differs from one thread");
        }
    }
}

#[test]
fn a_thread_count_that_cannot_be_had_is_refused_by_name() {
    // the global pool starts once; asking it for another count afterwards is an error
    let now = par::threads();
    let other = if now == 1 { 2 } else { 1 };
    let err = par::set_threads(other).unwrap_err();
    assert!(err.to_string().contains("thread"), "{err}");
}
