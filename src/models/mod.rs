//! Models whose attention headmap shows.

pub mod toy;
