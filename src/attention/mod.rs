//! Scaled dot-product attention, its masks, the places it is used, and multi-head attention
//! built from it, with the position schemes real models add (`position`): rotary embeddings
//! on Q and K, T5's relative position bias on the scores.

pub mod mask;
pub mod multi_head;
pub mod place;
pub mod position;
#[cfg(feature = "hf")]
pub mod relative;
#[cfg(feature = "hf")]
pub mod rotary;
pub mod sdpa;
