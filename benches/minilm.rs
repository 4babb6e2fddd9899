//! all-MiniLM-L6-v2 natively: load time, and forward time (all 6 layers, every head's
//! weights kept) at 16, 128 and 512 tokens. Figures, not assertions; the browser's come from
//! `node scripts/bench/page.mjs`. Run: `cargo bench --features hf --bench minilm`.

use std::time::Instant;

use headmap::models::hf::ModelFiles;
use headmap::run::{Batch, Row, Settings};
use headmap::tokenize::Token;
use headmap::Model;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    headmap::memory::keep_freed();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let read = |f: &str| {
        std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup)", dir.join(f).display()))
    };
    let mut loads = Vec::new();
    let mut model = None;
    for _ in 0..5 {
        let start = Instant::now();
        let (config, weights, tokenizer) = (read("config.json"), read("model.safetensors"), read("tokenizer.json"));
        let files =
            ModelFiles { config: &config, weights: &weights, tokenizer: Some(&tokenizer), ..ModelFiles::default() };
        model = Some(Model::from_files(&files).unwrap_or_else(|e| panic!("{e}")));
        loads.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let model = model.expect("loaded");
    println!("all-MiniLM-L6-v2 native: load {:.1} ms (median of 5, files read included)", median(loads));
    for n in [16usize, 128, 512] {
        // [CLS] the the … [SEP]: exactly n tokens
        let mut ids = vec![1996u32; n];
        ids[0] = 101;
        ids[n - 1] = 102;
        let row =
            Row { tokens: ids.iter().map(|id| Token::word(&id.to_string())).collect(), valid: vec![true; n], ids };
        let batch = Batch { sources: vec![row], targets: Vec::new() };
        let reps = if n <= 128 { 11 } else { 5 };
        let times: Vec<f64> = (0..reps)
            .map(|_| {
                let start = Instant::now();
                let run = model.run_batch(&batch, &Settings::trained()).unwrap_or_else(|e| panic!("{e}"));
                std::hint::black_box(&run);
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        println!("  forward {n:>4} tokens: {:8.1} ms (median of {reps})", median(times));
    }
}
