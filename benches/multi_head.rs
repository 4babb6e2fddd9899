//! Native half of the wasm/native benchmark: one multi-head self-attention block
//! (d_model 512, h 8) at n = 64 … 2048 tokens. Prints one JSON line per size; run through
//! `scripts/bench/multi-head`, which runs the wasm half in Node and prints the ratios.

use std::time::Instant;

use headmap::bench::MultiHeadCase;

fn main() {
    let sizes: Vec<usize> = match std::env::var("HEADMAP_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
        Err(_) => vec![64, 256, 1024, 2048],
    };
    for n in sizes {
        let case = match MultiHeadCase::new(n, 512, 8) {
            Ok(case) => case,
            Err(e) => {
                eprintln!("bench n={n}: {e}");
                std::process::exit(1);
            }
        };
        let reps = repetitions(n);
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            let out = case.run();
            times.push(start.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(&out);
        }
        times.sort_by(f64::total_cmp);
        println!("{{\"side\":\"native\",\"n\":{n},\"reps\":{reps},\"median_ms\":{:.3}}}", times[reps / 2]);
    }
}

/// Fewer repetitions where one takes long; always odd, so the median is one measurement.
fn repetitions(n: usize) -> usize {
    match n {
        0..=256 => 21,
        257..=1024 => 7,
        _ => 3,
    }
}
