//! The matrix products of one all-MiniLM-L6-v2 layer at T tokens, laid out as headmap lays
//! them out (`x.dot(&w)` for the linear maps, a head's column slice of Q times the transposed
//! slice of K, the weights times a slice of V), each timed as `ndarray`'s `dot`.
//!
//! In wasm the page calls the plain exports below (no wasm-bindgen: nothing crosses but
//! numbers) and times `gemm_run` with `performance.now()`.

use ndarray::{s, Array2};

/// MiniLM: d_model 384, 12 heads of 32, feed-forward 1536.
pub const D: usize = 384;
pub const D_K: usize = 32;
pub const D_FF: usize = 1536;

/// The shapes of one layer's products, and how often each runs per layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// T×384 · 384×384: Q, K, V and the output projection (4 per layer)
    Square,
    /// T×384 · 384×1536: the feed-forward's first map (1 per layer)
    Up,
    /// T×1536 · 1536×384: the feed-forward's second map (1 per layer)
    Down,
    /// T×32 · 32×T, Q's head slice times K's transposed (12 per layer)
    Scores,
    /// T×T · T×32, the weights times V's head slice (12 per layer)
    Mix,
}

impl Shape {
    pub const ALL: [Shape; 5] = [Shape::Square, Shape::Up, Shape::Down, Shape::Scores, Shape::Mix];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Square => "Tx384.384x384",
            Shape::Up => "Tx384.384x1536",
            Shape::Down => "Tx1536.1536x384",
            Shape::Scores => "Tx32.32xT",
            Shape::Mix => "TxT.Tx32",
        }
    }

    pub fn per_layer(self) -> usize {
        match self {
            Shape::Square => 4,
            Shape::Up | Shape::Down => 1,
            Shape::Scores | Shape::Mix => D / D_K,
        }
    }

    /// (m, k, n) at `t` tokens.
    pub fn mkn(self, t: usize) -> (usize, usize, usize) {
        match self {
            Shape::Square => (t, D, D),
            Shape::Up => (t, D, D_FF),
            Shape::Down => (t, D_FF, D),
            Shape::Scores => (t, D_K, t),
            Shape::Mix => (t, t, D_K),
        }
    }

    pub fn flops(self, t: usize) -> f64 {
        let (m, k, n) = self.mkn(t);
        2.0 * (m * k * n) as f64
    }
}

/// Inputs for one shape, filled with small deterministic values.
pub struct Case {
    shape: Shape,
    a: Array2<f32>,
    b: Array2<f32>,
}

fn filled(rows: usize, cols: usize, seed: usize) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(i, j)| ((i * 31 + j * 17 + seed) % 97) as f32 / 97.0 - 0.5)
}

impl Case {
    pub fn new(shape: Shape, t: usize) -> Self {
        let (a, b) = match shape {
            Shape::Square => (filled(t, D, 1), filled(D, D, 2)),
            Shape::Up => (filled(t, D, 1), filled(D, D_FF, 2)),
            Shape::Down => (filled(t, D_FF, 1), filled(D_FF, D, 2)),
            // Q and K (T, 384): a head reads 32 strided columns, as multi_head.rs slices them
            Shape::Scores => (filled(t, D, 1), filled(t, D, 2)),
            // the weights (T, T) and V (T, 384), of which a head reads 32 columns
            Shape::Mix => (filled(t, t, 1), filled(t, D, 2)),
        };
        Case { shape, a, b }
    }

    /// One product, as headmap computes it; returns a value so it cannot be skipped.
    pub fn run(&self) -> f32 {
        let out = match self.shape {
            Shape::Square | Shape::Up | Shape::Down => self.a.dot(&self.b),
            Shape::Scores => {
                let q = self.a.slice(s![.., 0..D_K]); // (T, d_k)
                let k = self.b.slice(s![.., 0..D_K]); // (T, d_k)
                q.dot(&k.t()) // (T, T)
            }
            Shape::Mix => self.a.dot(&self.b.slice(s![.., 0..D_K])), // (T, d_k)
        };
        out[[0, 0]]
    }
}

/// Every product of a whole forward at `t` tokens, `layers` times each layer's: the time a
/// forward would take if it ran at the GEMM's speed and did nothing else. Timed in the same
/// rounds as the forwards, so the share is measured under the same noise.
pub struct Forward {
    cases: Vec<(Case, usize)>,
}

impl Forward {
    pub fn new(t: usize, layers: usize) -> Self {
        Forward { cases: Shape::ALL.iter().map(|&s| (Case::new(s, t), s.per_layer() * layers)).collect() }
    }

    pub fn run(&self) -> f32 {
        self.cases.iter().map(|(case, count)| (0..*count).map(|_| case.run()).sum::<f32>()).sum()
    }
}

/// The exports the benchmark page calls: `gemm_new(shape, t)` → a case, `gemm_run(case, reps)`
/// runs its product `reps` times, `gemm_free(case)` (shapes numbered as [`Shape::ALL`]);
/// `forward_new(t, layers)` and `forward_run` for a whole forward's products.
#[cfg(target_arch = "wasm32")]
mod exports {
    use super::{Case, Forward, Shape};

    #[no_mangle]
    pub extern "C" fn forward_new(t: u32, layers: u32) -> *mut Forward {
        Box::into_raw(Box::new(Forward::new(t as usize, layers as usize)))
    }

    /// # Safety
    /// `forward` comes from `forward_new` and was not freed.
    #[no_mangle]
    pub unsafe extern "C" fn forward_run(forward: *const Forward) -> f32 {
        (*forward).run()
    }

    #[no_mangle]
    pub extern "C" fn gemm_new(shape: u32, t: u32) -> *mut Case {
        let shape = Shape::ALL[(shape as usize).min(Shape::ALL.len() - 1)];
        Box::into_raw(Box::new(Case::new(shape, t as usize)))
    }

    /// # Safety
    /// `case` comes from `gemm_new` and was not freed.
    #[no_mangle]
    pub unsafe extern "C" fn gemm_run(case: *const Case, reps: u32) -> f32 {
        let case = &*case;
        (0..reps).map(|_| case.run()).sum()
    }

    /// # Safety
    /// `case` comes from `gemm_new` and is freed once.
    #[no_mangle]
    pub unsafe extern "C" fn gemm_free(case: *mut Case) {
        drop(Box::from_raw(case));
    }
}
