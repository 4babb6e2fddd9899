//! The native matrix kernels against ndarray's product (matrixmultiply) on MiniLM's shapes, in
//! one process: GFLOP/s at the median of many calls, min and max beside it, and the ratio of
//! times. Figures, not assertions. Run: `cargo bench --bench gemm` (HEADMAP_GEMM plays no part:
//! every kernel the CPU has is timed).

use std::time::Instant;

use headmap::gemm::x86::{product_with, Kernel};
use ndarray::{s, Array2, ArrayView2};

fn random(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    let mut rng = headmap::rng::SplitMix64::new(seed);
    Array2::from_shape_simple_fn((rows, cols), || rng.next_signed())
}

/// min, median and max of `reps` timings of `f`, in ms, after two warm-ups.
fn time(reps: usize, mut f: impl FnMut()) -> [f64; 3] {
    f();
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    [t[0], t[reps / 2], t[reps - 1]]
}

fn main() {
    let kernels: Vec<Kernel> = [Kernel::Avx512, Kernel::Avx2].into_iter().filter(|k| k.available()).collect();
    println!(
        "shape                      | portable GFLOP/s (min–max) | {}",
        kernels.iter().map(|k| format!("{} GFLOP/s, time ÷ portable", k.name())).collect::<Vec<_>>().join(" | ")
    );
    for t in [1usize, 16, 25, 128, 512] {
        let wide = random(1536, 1536, 3);
        let shapes: Vec<(String, Array2<f32>, ArrayView2<f32>)> = vec![
            (format!("{t}×384 · 384×384"), random(t, 384, 1), wide.slice(s![..384, ..384])),
            (format!("{t}×384 · 384×1536"), random(t, 384, 1), wide.slice(s![..384, ..])),
            (format!("{t}×1536 · 1536×384"), random(t, 1536, 1), wide.slice(s![.., ..384])),
            (format!("{t}×{t} · {t}×32 (weights·V)"), random(t, t, 1), wide.slice(s![..t, ..32])),
        ];
        for (name, x, w) in shapes {
            let flops = 2.0 * (x.nrows() * x.ncols() * w.ncols()) as f64;
            let reps = ((2e9 / flops) as usize).clamp(21, 2001);
            let mut y = Array2::zeros((x.nrows(), w.ncols()));
            let base = time(reps, || ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, &mut y));
            let gf = |ms: f64| flops / ms / 1e6;
            let mut line = format!("{name:<26} | {:6.1} ({:.1}–{:.1})", gf(base[1]), gf(base[2]), gf(base[0]));
            for &k in &kernels {
                let own = time(reps, || {
                    product_with(k, x.view(), w, &mut y.view_mut());
                });
                line +=
                    &format!(" | {:6.1} ({:.1}–{:.1}), {:.2}", gf(own[1]), gf(own[2]), gf(own[0]), own[1] / base[1]);
            }
            println!("{line}");
        }
    }
}
