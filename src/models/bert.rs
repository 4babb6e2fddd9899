//! BERT (`BertModel`): bert-base, MiniLM, KLUE-BERT …, mirroring transformers'
//! `models/bert/modeling_bert.py`. Its layer is the post-LN encoder layer of `transformer`
//! with GELU; token types are all type 0 here (one sentence per row).
//!
//! RoBERTa, XLM-RoBERTa and ELECTRA (`roberta.rs`, `electra.rs`) share these layers and this
//! config; only their embeddings differ.

use std::sync::Arc;

use ndarray::Array2;
use serde::Deserialize;

use super::config::{activation, check_sizes, Loading};
use super::network::{place_mask, Loaded, Network};
use super::run::{Batch, Hidden, PlaceInfo, PlaceRun, Row, Run, Settings};
use super::transformer::{self, EncoderLayer};
use super::weights::{Vars, Weights};
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::nn::{self, FeedForward, LayerNorm};

/// `config.json` of a BERT model (and of RoBERTa, XLM-RoBERTa and ELECTRA, which use the same
/// names), with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    /// Absent: each family's own default (BERT and ELECTRA 0, RoBERTa and XLM-R 1).
    pub pad_token_id: Option<u32>,
    pub position_embedding_type: String,
    pub is_decoder: bool,
    pub add_cross_attention: bool,
}

impl Default for BertConfig {
    fn default() -> Self {
        BertConfig {
            vocab_size: 30522,
            hidden_size: 768,
            num_hidden_layers: 12,
            num_attention_heads: 12,
            intermediate_size: 3072,
            hidden_act: "gelu".into(),
            max_position_embeddings: 512,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
            pad_token_id: None,
            position_embedding_type: "absolute".into(),
            is_decoder: false,
            add_cross_attention: false,
        }
    }
}

impl BertConfig {
    /// Fails on impossible sizes and on the switches headmap does not implement.
    pub(crate) fn check(&self) -> Result<()> {
        check_sizes(&[
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
            ("max_position_embeddings", self.max_position_embeddings),
            ("type_vocab_size", self.type_vocab_size),
        ])?;
        if self.position_embedding_type != "absolute" {
            // transformers 5 ignores this key and would run a relative checkpoint as absolute
            let problem = FileProblem::unsupported(
                "position_embedding_type",
                &self.position_embedding_type,
                "headmap reads absolute positions only",
            );
            return Err(Error::file("config.json", problem));
        }
        for (setting, on, reason) in [
            ("is_decoder", self.is_decoder, "headmap reads this family as an encoder only"),
            ("add_cross_attention", self.add_cross_attention, "headmap reads this family as an encoder only"),
        ] {
            if on {
                return Err(Error::file("config.json", FileProblem::unsupported(setting, true, reason)));
            }
        }
        Ok(())
    }

    /// The one place: encoder self-attention with padding.
    pub(crate) fn place(&self) -> PlaceInfo {
        let heads = self.num_attention_heads;
        PlaceInfo::new(Place::EncoderSelf, MaskKind::Padding, self.num_hidden_layers, heads, self.hidden_size / heads)
    }

    /// The encoder layers under `root` (`encoder.layer.N`).
    pub(crate) fn layers(&self, root: &Vars) -> Result<Vec<EncoderLayer>> {
        let (d, eps) = (self.hidden_size, self.layer_norm_eps as f32);
        let act = activation("hidden_act", &self.hidden_act)?;
        (0..self.num_hidden_layers)
            .map(|i| {
                let l = root.pp("encoder.layer").pp(i);
                let attention = l.pp("attention");
                Ok(EncoderLayer {
                    self_attn: Arc::new(MultiHeadAttention::new(
                        attention.pp("self").linear("query", d, d)?,
                        attention.pp("self").linear("key", d, d)?,
                        attention.pp("self").linear("value", d, d)?,
                        attention.pp("output").linear("dense", d, d)?,
                        self.num_attention_heads,
                    )?),
                    self_attn_norm: attention.pp("output").layer_norm("LayerNorm", d, eps)?,
                    ffn: FeedForward {
                        inner: l.pp("intermediate").linear("dense", d, self.intermediate_size)?,
                        outer: l.pp("output").linear("dense", self.intermediate_size, d)?,
                        activation: act,
                    },
                    final_norm: l.pp("output").layer_norm("LayerNorm", d, eps)?,
                })
            })
            .collect()
    }
}

/// Runs every source row of `batch` through post-LN encoder `layers` from the embeddings
/// `embed` gives it, recording encoder self-attention (padding mask, or a what-if).
pub(crate) fn encode_rows(
    info: &PlaceInfo,
    layers: &[EncoderLayer],
    batch: &Batch,
    settings: &Settings,
    embed: impl Fn(&Row) -> Result<Array2<f32>>,
) -> Result<Run> {
    let mut place = PlaceRun::new(info, settings);
    let mut hidden = Vec::with_capacity(batch.sources.len());
    for row in &batch.sources {
        let x = embed(row)?; // (T, D)
        let mask = place_mask(place.mask, row, row)?;
        let mut record = place.record(row, row);
        let out = transformer::encode(layers, x, &mask, settings.scale, Some(&mut record), settings.until())?;
        place.rows.push(record);
        hidden.push(Hidden { encoder: out, decoder: None });
    }
    Ok(Run { places: vec![place], hidden })
}

pub struct Bert {
    pub config: BertConfig,
    word: Array2<f32>,       // (V, D) embeddings.word_embeddings
    position: Array2<f32>,   // (P, D) embeddings.position_embeddings
    token_type: Array2<f32>, // (2, D) embeddings.token_type_embeddings
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>, // encoder.layer.N
}

impl Bert {
    fn load(w: Weights, config: BertConfig) -> Result<Self> {
        let c = &config;
        c.check()?;
        let w = w.with_prefix_of("embeddings.word_embeddings.weight", &["", "bert."])?;
        let root = w.root();
        let (d, eps) = (c.hidden_size, c.layer_norm_eps as f32);
        let layers = c.layers(&root)?;
        let embeddings = root.pp("embeddings");
        Ok(Bert {
            word: embeddings.matrix("word_embeddings.weight", [c.vocab_size, d])?,
            position: embeddings.matrix("position_embeddings.weight", [c.max_position_embeddings, d])?,
            token_type: embeddings.matrix("token_type_embeddings.weight", [c.type_vocab_size, d])?,
            embedding_norm: embeddings.layer_norm("LayerNorm", d, eps)?,
            layers,
            config,
        })
    }
}

impl Network for Bert {
    fn architecture(&self) -> &str {
        "bert"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        vec![self.config.place()]
    }

    fn d_model(&self) -> usize {
        self.config.hidden_size
    }

    fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }

    /// Encoder self-attention with the padding mask it was trained with (or a what-if mask).
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        encode_rows(&self.config.place(), &self.layers, batch, settings, |row| {
            let mut x = nn::embed_with_positions(&self.word, &self.position, &row.ids, 1.0)?; // (T, D)
            x += &self.token_type.row(0);
            Ok(self.embedding_norm.forward(x.view()))
        })
    }
}

/// The registry's loader for `bert`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: BertConfig = m.config()?;
    let pad = m.pad(cfg.vocab_size, cfg.pad_token_id.unwrap_or(0))?;
    Ok(Loaded { net: Box::new(Bert::load(m.weights, cfg)?), pad })
}
