//! headmap: the per-head attention weights of a Transformer, step by step.
//!
//! The data flows one way, and each module imports only from modules earlier in it:
//!
//! ```text
//! text → tokens (tokenize) → embeddings + positions (models::toy)
//!      → per layer Q = XW_Q, K = XW_K, V = XW_V (attention::multi_head)
//!      → scores QKᵀ → ÷√d_k → mask → softmax → weights·V (attention::sdpa, attention::mask)
//!      → heads concatenated → W_O
//!      → wasm boundary (wasm, the only file that knows JavaScript)
//! ```
//!
//! Every attention call returns its weights with its output, shaped `(H, Tq, Tk)` per layer:
//! H heads, Tq query positions, Tk key positions. A trace of every step of one head is there
//! when asked for.

pub mod attention;
pub mod bench;
pub mod cost;
pub mod error;
pub mod examples;
pub mod models;
pub mod nn;
pub mod rng;
pub mod stats;
pub mod svg;
pub mod tokenize;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use attention::mask::{Mask, MaskKind};
pub use attention::multi_head::{concat_heads, split_heads, MultiHeadAttention, MultiHeadOutput};
pub use attention::sdpa::{scaled_dot_product_attention, softmax_rows, trace, weighted_sum, Attention, Trace};
pub use cost::Cost;
pub use error::{Error, Result};
pub use models::run::AttentionRun;
pub use models::toy::{ToyConfig, ToyModel, ToyRun};
