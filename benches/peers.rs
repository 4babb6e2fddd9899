//! headmap's native half of `scripts/bench/peers`: all-MiniLM-L6-v2's forward (all 6 layers,
//! every head's weights kept) on token ids given from outside, so onnxruntime and PyTorch
//! (`scripts/bench/peer-harness/native.py`) time the same ids in the same run, interleaved with this one.
//! Figures, never assertions.
//!
//! ```text
//! peers serve IDS.json [--weights-only]
//!                          reads commands on stdin, one answer line each:
//!                            run N             → the forward's milliseconds at N tokens
//!                            run N ROWS        → the same for a padded batch of ROWS rows of
//!                                                N tokens, the last one's final token PAD
//!                            weights N PATH    → writes the weights (L, H, T, T) as f32 LE, "ok"
//!                          --weights-only: runs as `Model::run_weights` does (no last hidden
//!                          state: the last layer stops at its weights)
//! peers loop N COUNT       COUNT forwards at N tokens ([CLS] the … [SEP]), for a profiler
//! peers                    (cargo bench) 20 forwards at 16, 128 and 512 tokens: min/median/max
//! ```

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Instant;

use headmap::models::hf::ModelFiles;
use headmap::run::{Batch, Row, Settings};
use headmap::tokenize::Token;
use headmap::Model;

fn load() -> Model {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let read = |f: &str| {
        std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup)", dir.join(f).display()))
    };
    let (config, weights, tokenizer) = (read("config.json"), read("model.safetensors"), read("tokenizer.json"));
    let files = ModelFiles { config: &config, weights: &weights, tokenizer: Some(&tokenizer), ..ModelFiles::default() };
    Model::from_files(&files).unwrap_or_else(|e| panic!("{e}"))
}

/// One unpadded row of `ids`, as `Model::run` would build it.
fn batch(ids: &[u32]) -> Batch {
    let n = ids.len();
    let row = Row {
        tokens: ids.iter().map(|id| Token::word(&id.to_string())).collect(),
        valid: vec![true; n],
        ids: ids.to_vec(),
    };
    Batch { sources: vec![row], targets: Vec::new() }
}

/// `rows` rows of `ids`, the last one's final token PAD (id 0, masked): a padded batch, which
/// runs row by row (`par::map_batch`), not stacked.
fn padded(ids: &[u32], rows: usize) -> Batch {
    let mut sources = vec![batch(ids).sources.remove(0); rows];
    if let Some(last) = sources.last_mut() {
        let n = last.ids.len();
        last.ids[n - 1] = 0;
        last.valid[n - 1] = false;
    }
    Batch { sources, targets: Vec::new() }
}

/// `[CLS] the … [SEP]`, exactly n tokens.
fn the_ids(n: usize) -> Vec<u32> {
    let mut ids = vec![1996u32; n];
    ids[0] = 101;
    ids[n - 1] = 102;
    ids
}

/// One forward, timed from the ids to the run holding every weight (dropping it is not).
fn forward_ms(model: &Model, batch: &Batch, settings: &Settings) -> (f64, headmap::Run) {
    let start = Instant::now();
    let run = model.run_batch(batch, settings).unwrap_or_else(|e| panic!("{e}"));
    let ms = start.elapsed().as_secs_f64() * 1e3;
    (ms, std::hint::black_box(run))
}

/// Answers `run N [ROWS]` and `weights N PATH` on the ids of `ids_path` ({"16": [101, …], …}).
fn serve(model: &Model, ids_path: &str, settings: &Settings) {
    let text = std::fs::read_to_string(ids_path).unwrap_or_else(|e| panic!("{ids_path}: {e}"));
    let ids: HashMap<String, Vec<u32>> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{ids_path}: {e}"));
    let batches: HashMap<&str, Batch> = ids.iter().map(|(n, ids)| (n.as_str(), batch(ids))).collect();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer = match words[..] {
            ["run", n] => format!("{}", forward_ms(model, &batches[n], settings).0),
            ["run", n, rows] => {
                let rows = rows.parse().ok().filter(|&r| r > 0).expect("run N ROWS: ROWS a count from 1");
                format!("{}", forward_ms(model, &padded(&batches[n].sources[0].ids, rows), settings).0)
            }
            ["weights", n, path] => {
                let (_, run) = forward_ms(model, &batches[n], settings);
                let weights = run.places[0].rows[0].weights().expect("weights"); // (L, H, T, T)
                let bytes: Vec<u8> = weights.iter().flat_map(|w| w.to_le_bytes()).collect();
                std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
                "ok".to_string()
            }
            ["quit"] => break,
            _ => format!("unknown command {line:?}"),
        };
        writeln!(out, "{answer}").and_then(|_| out.flush()).expect("stdout");
    }
}

fn main() {
    headmap::memory::keep_freed();
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let model = load();
    match args.first().map(String::as_str) {
        Some("serve") => {
            let hidden = !args.iter().any(|a| a == "--weights-only");
            serve(&model, args.get(1).expect("peers serve IDS.json"), &Settings { hidden, ..Settings::trained() })
        }
        Some("loop") => {
            let n: usize = args.get(1).and_then(|a| a.parse().ok()).expect("peers loop N COUNT");
            let count: usize = args.get(2).and_then(|a| a.parse().ok()).expect("peers loop N COUNT");
            let b = batch(&the_ids(n));
            let mut times: Vec<f64> = (0..count).map(|_| forward_ms(&model, &b, &Settings::trained()).0).collect();
            times.sort_by(f64::total_cmp);
            println!("{n} tokens: median {:.2} ms of {count}", times[count / 2]);
        }
        _ => {
            println!("all-MiniLM-L6-v2 forward natively, every weight kept (20 runs after 3 warm-ups)");
            for n in [16usize, 128, 512] {
                let b = batch(&the_ids(n));
                let mut times: Vec<f64> =
                    (0..23).map(|_| forward_ms(&model, &b, &Settings::trained()).0).skip(3).collect();
                times.sort_by(f64::total_cmp);
                println!("  {n:>4} tokens: median {:8.2} ms, min {:8.2}, max {:8.2}", times[10], times[0], times[19]);
            }
        }
    }
}
