//! RoBERTa (`roberta`: roberta-base, klue/roberta) and XLM-RoBERTa (`xlm-roberta`:
//! xlm-roberta-base, multilingual and Korean encoders), mirroring transformers'
//! `models/roberta/modeling_roberta.py` (XLM-R's file is the same arithmetic under other
//! names). BERT's layers and config; only the positions differ: they count from the padding
//! id, so the first token sits at row `pad_token_id + 1` of the position table and PAD tokens
//! at row `pad_token_id`.

use ndarray::{Array2, Axis};

use super::bert::{encode_rows, BertConfig};
use super::config::Loading;
use super::network::{Loaded, Network};
use super::run::{Batch, PlaceInfo, Run, Settings};
use super::transformer::EncoderLayer;
use super::weights::Weights;
use crate::error::{Error, Result};
use crate::nn::{self, LayerNorm};

pub struct Roberta {
    pub config: BertConfig,
    model_type: String,
    pad: u32,
    word: Array2<f32>,       // (V, D) embeddings.word_embeddings
    position: Array2<f32>,   // (P, D) embeddings.position_embeddings, P = max text + pad + 1
    token_type: Array2<f32>, // (types, D) embeddings.token_type_embeddings
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>, // encoder.layer.N
}

impl Roberta {
    /// `model_type` is `roberta` or `xlm-roberta`, `pad` the padding id positions count from;
    /// checkpoints saved from a task model nest the base model under `roberta.`.
    fn load(w: Weights, config: BertConfig, model_type: &str, pad: u32) -> Result<Self> {
        let c = &config;
        c.check()?;
        let prefixes = ["", "roberta.", "xlm_roberta.", "bert."];
        let w = w.with_prefix_of("embeddings.word_embeddings.weight", &prefixes)?;
        let root = w.root();
        let (d, eps) = (c.hidden_size, c.layer_norm_eps as f32);
        let layers = c.layers(&root)?;
        let embeddings = root.pp("embeddings");
        Ok(Roberta {
            word: embeddings.matrix("word_embeddings.weight", [c.vocab_size, d])?,
            position: embeddings.matrix("position_embeddings.weight", [c.max_position_embeddings, d])?,
            token_type: embeddings.matrix("token_type_embeddings.weight", [c.type_vocab_size, d])?,
            embedding_norm: embeddings.layer_norm("LayerNorm", d, eps)?,
            layers,
            model_type: model_type.to_string(),
            pad,
            config,
        })
    }

    /// transformers' `create_position_ids_from_input_ids`: each non-PAD token gets pad + 1 + how
    /// many non-PAD tokens precede it, a PAD token gets pad.
    fn position_ids(&self, ids: &[u32]) -> Vec<u32> {
        let mut count = 0;
        ids.iter()
            .map(|&id| {
                if id == self.pad {
                    self.pad
                } else {
                    count += 1;
                    self.pad + count
                }
            })
            .collect()
    }
}

impl Network for Roberta {
    fn architecture(&self) -> &str {
        &self.model_type
    }

    fn places(&self) -> Vec<PlaceInfo> {
        vec![self.config.place()]
    }

    fn d_model(&self) -> usize {
        self.config.hidden_size
    }

    /// The positions left after the padding offset.
    fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings.saturating_sub(self.pad as usize + 1).max(1)
    }

    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        encode_rows(&self.config.place(), &self.layers, batch, settings, |row| {
            let positions = self.position_ids(&row.ids);
            if positions.iter().any(|&p| p as usize >= self.position.nrows()) {
                return Err(Error::TooLong { tokens: row.ids.len(), max: self.max_tokens() });
            }
            let mut x = nn::embed(&self.word, &row.ids)?; // (T, D)
            x += &nn::embed(&self.position, &positions)?;
            x += &self.token_type.row(0).insert_axis(Axis(0));
            Ok(self.embedding_norm.forward(x.view()))
        })
    }
}

/// transformers' `pad_token_id` for RoBERTa and XLM-R when the config names none.
const PAD_TOKEN_ID: u32 = 1;

/// The registry's loader for `roberta` and `xlm-roberta`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: BertConfig = m.config()?;
    let pad = m.pad(cfg.vocab_size, cfg.pad_token_id.unwrap_or(PAD_TOKEN_ID))?;
    Ok(Loaded { net: Box::new(Roberta::load(m.weights, cfg, m.model_type, pad)?), pad })
}
