//! Models whose attention headmap shows: the toy Transformer, and (with the `hf` feature)
//! BERT, GPT-2, BART and Marian models as Hugging Face publishes them.

pub mod run;
pub mod toy;

#[cfg(feature = "hf")]
pub mod bart;
#[cfg(feature = "hf")]
pub mod bert;
#[cfg(feature = "hf")]
pub mod gpt2;
#[cfg(feature = "hf")]
pub mod hf;
#[cfg(feature = "hf")]
pub mod layers;
#[cfg(feature = "hf")]
pub mod weights;
