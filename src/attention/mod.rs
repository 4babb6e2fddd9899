//! Scaled dot-product attention, its masks, the places it is used, and multi-head attention
//! built from it.

pub mod mask;
pub mod multi_head;
pub mod place;
pub mod sdpa;
