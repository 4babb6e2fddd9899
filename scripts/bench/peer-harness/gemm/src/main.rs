//! The native half: every shape at 16, 128 and 512 tokens, one JSON line each with the median,
//! min and max of `reps` timed products (after a warm-up) and GFLOP/s at the median.
//! Usage: headmap-peers-gemm [reps]
//!
//! `headmap-peers-gemm serve LAYERS` instead answers `run T` on stdin with the milliseconds of
//! all of a forward's products at T tokens (scripts/bench/peer-harness/native.py times it among the forwards).

use std::io::{BufRead, Write};
use std::time::Instant;

use headmap_peers_gemm::{Case, Forward, Shape};

fn serve(layers: usize) {
    let mut forwards = std::collections::HashMap::new();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let t: usize = match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["run", t] => t.parse().expect("run T"),
            _ => panic!("unknown command {line:?}"),
        };
        let forward = forwards.entry(t).or_insert_with(|| Forward::new(t, layers));
        let start = Instant::now();
        std::hint::black_box(forward.run());
        writeln!(out, "{}", start.elapsed().as_secs_f64() * 1e3).and_then(|_| out.flush()).expect("stdout");
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return serve(std::env::args().nth(2).and_then(|l| l.parse().ok()).unwrap_or(6));
    }
    let reps: usize = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(20);
    for t in [16usize, 128, 512] {
        for shape in Shape::ALL {
            let case = Case::new(shape, t);
            // small products are timed in batches so the clock's resolution does not matter
            let inner = (2e6 / shape.flops(t)).ceil().max(1.0) as usize;
            let mut sink = 0.0f32;
            for _ in 0..3 * inner {
                sink += case.run();
            }
            let mut ms: Vec<f64> = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    for _ in 0..inner {
                        sink += case.run();
                    }
                    start.elapsed().as_secs_f64() * 1e3 / inner as f64
                })
                .collect();
            std::hint::black_box(sink);
            ms.sort_by(f64::total_cmp);
            let median = ms[ms.len() / 2];
            println!(
                "{{\"t\":{t},\"shape\":\"{}\",\"perLayer\":{},\"flops\":{},\"median\":{median},\"min\":{},\"max\":{},\"gflops\":{}}}",
                shape.name(),
                shape.per_layer(),
                shape.flops(t),
                ms[0],
                ms[ms.len() - 1],
                shape.flops(t) / median / 1e6
            );
        }
    }
}
