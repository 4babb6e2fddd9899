//! headmap: the per-head attention weights of a Transformer, step by step.
//!
//! The data flows one way, and each module imports only from modules earlier in it:
//!
//! ```text
//! text → tokens (tokenize) → embeddings + positions (nn, models)
//!      → per layer Q = XW_Q, K = XW_K, V = XW_V, Q and K turned by position in rotary models,
//!        key/value heads shared in grouped-query ones (attention::multi_head, attention::rotary)
//!      → scores QKᵀ → ÷√d_k (or the model's own scale) → + position bias (T5's relative one,
//!        attention::relative) → mask → softmax → weights·V (attention::sdpa, attention::mask)
//!      → heads concatenated → W_O
//!      → a Run: per place, per batch row, weights (L, H, Tq, Tk), kept or recomputed from each
//!        layer's inputs when asked (models::run)
//!      → statistics and exports (stats, export)
//!      → what heads do: scores per head, token-to-token mass, the induction probe, rollout
//!        (heads, models::probe, rollout)
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
#[cfg(all(target_arch = "wasm32", any(feature = "hf", feature = "bench")))]
pub mod gemm;
#[cfg(feature = "hf")]
pub mod heads;
#[cfg(feature = "hf")]
pub mod import;
pub mod math;
pub mod models;
pub mod nn;
pub mod par;
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
