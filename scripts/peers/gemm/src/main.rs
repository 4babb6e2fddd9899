//! The native half: every shape at 16, 128 and 512 tokens, one JSON line each with the median,
//! min and max of `reps` timed products (after a warm-up) and GFLOP/s at the median.
//! Usage: headmap-peers-gemm [reps]

use std::time::Instant;

use headmap_peers_gemm::{Case, Shape};

fn main() {
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
