//! headmap: the per-head attention weights of a Transformer, step by step.
//!
//! The data flows one way, and each module imports only from modules earlier in it
//! (`tests/layout.rs` holds the crate to this order):
//!
//! ```text
//! leaves, used all along: math (exp, erf), rng (the toy's weights), cost (what a block costs),
//!        stats (numbers off weights), examples (the seed sentences), svg (a head as a picture),
//!        gemm (the matrix kernels) → error (the one error type) → par (threads)
//! text → tokens (tokenize) → embeddings + positions (nn, models)
//!      → per layer Q = XW_Q, K = XW_K, V = XW_V, Q and K turned by position in rotary models,
//!        key/value heads shared in grouped-query ones (attention::multi_head,
//!        attention::position, attention::rotary)
//!      → scores QKᵀ → ÷√d_k (or the model's own scale) → + position bias (T5's relative one,
//!        attention::relative) → mask → softmax → weights·V (attention::sdpa, attention::mask)
//!      → heads concatenated → W_O
//!      → a Run: per place, per batch row, weights (L, H, Tq, Tk), kept or recomputed from each
//!        layer's inputs when asked (run)
//!      ← made by a model (models: the toy, the Hugging Face families in models::families, the
//!        one list of them in models::registry) or read from a file with no model (import)
//!      → exports (export: JSON, CSV, safetensors)
//!      → what heads do: scores per head, token-to-token mass, the induction probe (heads,
//!        heads::probe), rollout (rollout), queries and keys in one picture (qk)
//!      → a small model trained here, its heads forming (train)
//!      → the fixed benchmark workload (bench)
//!      → wasm boundary (wasm, the only module that knows JavaScript)
//! ```
//!
//! Every model — the untrained toy and the real Hugging Face families — is a
//! [`Model`]: `model.run(&request)` gives a [`Run`], `model.trace(…)` every step of one head.

pub mod attention;
#[cfg(feature = "bench")]
pub mod bench;
pub mod cost;
pub mod error;
pub mod examples;
pub mod export;
#[cfg(any(not(target_arch = "wasm32"), feature = "hf", feature = "bench"))]
pub mod gemm;
#[cfg(feature = "hf")]
pub mod heads;
#[cfg(feature = "hf")]
pub mod import;
pub mod math;
#[cfg(not(target_arch = "wasm32"))]
pub mod memory;
pub mod models;
pub mod nn;
pub mod par;
#[cfg(all(feature = "python", not(target_arch = "wasm32")))]
mod python;
#[cfg(feature = "hf")]
pub mod qk;
pub mod rng;
#[cfg(feature = "hf")]
pub mod rollout;
pub mod run;
pub mod stats;
#[cfg(feature = "cli")]
pub mod svg;
pub mod tokenize;
#[cfg(feature = "hf")]
pub mod train;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use attention::mask::{Mask, MaskKind};
pub use attention::multi_head::MultiHeadAttention;
pub use attention::place::Place;
pub use attention::sdpa::scaled_dot_product_attention;
#[cfg(feature = "hf")]
pub use error::FileProblem;
pub use error::{Error, Result};
pub use models::toy::ToyConfig;
pub use models::Model;
pub use run::{ModelInfo, PlaceRun, Request, Run};
