//! A trained model as the files of a Hugging Face folder, so that it opens like any other:
//! `config.json` of a GPT-2 (`GPT2LMHeadModel`), `model.safetensors` in the names that class
//! saves, with each block's MLP present and zero (an attention-only block is a GPT-2 block whose
//! MLP adds nothing), and a word-level `tokenizer.json` whose tokens are the ids' numbers
//! (`0 … V−1`, split at spaces), so a reader types `3 17 5 3 17 5` to ask about a repeat.

use safetensors::tensor::{Dtype, TensorView};
use serde_json::json;

use super::params::Layout;
use crate::error::{Error, Result};
use crate::models::hf::ModelFiles;
use crate::models::Model;

/// The three files of a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointFiles {
    pub config: Vec<u8>,
    pub weights: Vec<u8>,
    pub tokenizer: Vec<u8>,
}

/// GPT-2's MLP width, 4·d_model, kept so transformers' defaults read the files as written.
fn inner(layout: &Layout) -> usize {
    4 * layout.config.n_embd
}

impl CheckpointFiles {
    /// The files of `weights` (laid out by `layout`), the weights in f32.
    pub fn new(layout: &Layout, weights: &[f32]) -> Result<Self> {
        if weights.len() != layout.len {
            return Err(Error::shape("the trainer's weights", &[weights.len()], &[layout.len]));
        }
        Ok(CheckpointFiles {
            config: config(layout),
            weights: safetensors(layout, weights)?,
            tokenizer: tokenizer(layout),
        })
    }

    /// The model they make, as the command line or the page would load them.
    pub fn model(&self) -> Result<Model> {
        Model::from_files(&ModelFiles {
            config: &self.config,
            weights: &self.weights,
            tokenizer: Some(&self.tokenizer),
            ..ModelFiles::default()
        })
    }

    /// The files by name, as a folder holds them.
    pub fn named(&self) -> [(&'static str, &[u8]); 3] {
        [("config.json", &self.config), ("model.safetensors", &self.weights), ("tokenizer.json", &self.tokenizer)]
    }
}

fn config(layout: &Layout) -> Vec<u8> {
    let c = layout.config;
    let doc = json!({
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": c.vocab_size,
        "n_positions": c.n_positions,
        "n_ctx": c.n_positions,
        "n_embd": c.n_embd,
        "n_layer": c.n_layer,
        "n_head": c.n_head,
        "n_inner": inner(layout),
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "resid_pdrop": 0.0,
        "embd_pdrop": 0.0,
        "attn_pdrop": 0.0,
        "tie_word_embeddings": c.tie_word_embeddings,
        "bos_token_id": null,
        "eos_token_id": null,
        "headmap_trained": { "attention_only": true },
    });
    serde_json::to_vec_pretty(&doc).expect("a JSON value writes")
}

/// Every tensor GPT2LMHeadModel saves: the trained ones, then each block's `ln_2` (1 and 0)
/// and MLP (0), which an attention-only block passes through unchanged.
fn safetensors(layout: &Layout, weights: &[f32]) -> Result<Vec<u8>> {
    let bytes = |values: &[f32]| values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let (d, inner) = (layout.config.n_embd, inner(layout));
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = layout
        .named()
        .into_iter()
        .map(|(name, slot, vector)| {
            let shape = if vector { vec![slot.len()] } else { vec![slot.rows, slot.cols] };
            let name = if name == "lm_head.weight" { name } else { format!("transformer.{name}") };
            (name, shape, bytes(&weights[slot.offset..slot.offset + slot.len()]))
        })
        .collect();
    for l in 0..layout.config.n_layer {
        let h = |part: &str| format!("transformer.h.{l}.{part}");
        tensors.extend([
            (h("ln_2.weight"), vec![d], bytes(&vec![1.0; d])),
            (h("ln_2.bias"), vec![d], bytes(&vec![0.0; d])),
            (h("mlp.c_fc.weight"), vec![d, inner], bytes(&vec![0.0; d * inner])),
            (h("mlp.c_fc.bias"), vec![inner], bytes(&vec![0.0; inner])),
            (h("mlp.c_proj.weight"), vec![inner, d], bytes(&vec![0.0; inner * d])),
            (h("mlp.c_proj.bias"), vec![d], bytes(&vec![0.0; d])),
        ]);
    }
    let written = |e: &dyn std::fmt::Display| Error::Write { reason: e.to_string() };
    let views = tensors
        .iter()
        .map(|(name, shape, data)| {
            Ok((name.clone(), TensorView::new(Dtype::F32, shape.clone(), data).map_err(|e| written(&e))?))
        })
        .collect::<Result<Vec<_>>>()?;
    safetensors::serialize(views, None).map_err(|e| written(&e))
}

/// Token `i` is spelt `i`; words are split at whitespace and anything else is not a token.
fn tokenizer(layout: &Layout) -> Vec<u8> {
    let vocab: serde_json::Map<String, serde_json::Value> =
        (0..layout.config.vocab_size).map(|i| (i.to_string(), json!(i))).collect();
    let doc = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": { "type": "WhitespaceSplit" },
        "post_processor": null,
        "decoder": null,
        "model": { "type": "WordLevel", "vocab": vocab, "unk_token": "<unk>" },
    });
    serde_json::to_vec_pretty(&doc).expect("a JSON value writes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{TrainSettings, Trainer};
    use crate::Request;

    #[test]
    fn a_trained_model_opens_as_gpt2_and_its_attention_is_the_trainers() {
        for tied in [false, true] {
            let mut trainer = Trainer::new(TrainSettings { batch_size: 4, tied, ..TrainSettings::default() }).unwrap();
            for _ in 0..5 {
                trainer.step().unwrap();
            }
            let files = CheckpointFiles::new(&trainer.layout, &trainer.weights).unwrap();
            let model = files.model().unwrap();
            assert_eq!(model.info().architecture, "gpt2");
            let ids = [3u32, 17, 5, 9, 3, 17, 5, 9];
            let text = ids.map(|i| i.to_string()).join(" ");
            let run = model.run(&Request { texts: vec![text], ..Request::default() }).unwrap();
            let row = &run.places[0].rows[0];
            let pieces: Vec<String> = row.queries.iter().map(|t| t.piece.clone()).collect();
            assert_eq!(pieces, ids.map(|i| i.to_string()), "a token per number, no special token added");
            let ours = super::super::grad::attention(&trainer.layout, &trainer.weights, &ids);
            for (l, layer) in ours.iter().enumerate() {
                for h in 0..trainer.settings.heads {
                    let theirs = row.head(l, h).unwrap();
                    let diff = (&layer.index_axis(ndarray::Axis(0), h) - &theirs)
                        .mapv(f32::abs)
                        .fold(0.0f32, |m, &v| m.max(v));
                    assert!(diff < 1e-6, "layer {l} head {h}, tied {tied}: {diff}");
                }
            }
            let unknown = model.run(&Request { texts: vec!["3 x 5".into()], ..Request::default() });
            assert!(unknown.is_err(), "a word that is no token is refused");
        }
    }

    #[test]
    fn weights_of_another_layout_are_refused_not_read_past() {
        let trainer = Trainer::new(TrainSettings::default()).unwrap();
        for len in [0, trainer.weights.len() - 1, trainer.weights.len() + 1] {
            let weights = vec![0.0; len];
            assert!(
                matches!(CheckpointFiles::new(&trainer.layout, &weights), Err(Error::Shape { .. })),
                "{len} weights"
            );
        }
    }
}
