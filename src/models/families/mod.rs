//! The Hugging Face families, one file each: a loader that reads a family's `config.json` and
//! weights into one of the shared networks of `models` (`encoder_only`, `decoder_only`,
//! `encoder_decoder`). A family imports those networks, `config`, `weights` and `rope`, never
//! the registry, `hf` or [`super::Model`]; `registry` lists every family here.

pub mod bart;
pub mod bert;
pub mod distilbert;
pub mod electra;
pub mod gpt2;
pub mod gpt_neo;
pub mod gpt_neox;
pub mod llama;
pub mod roberta;
pub mod t5;
