//! Scaled dot-product attention, its masks, and multi-head attention built from it.

pub mod mask;
pub mod multi_head;
pub mod sdpa;
