//! BERT (`BertModel`): bert-base, MiniLM, KLUE-BERT …, mirroring transformers'
//! `models/bert/modeling_bert.py`. Its layer is the post-LN encoder layer of `transformer`
//! with GELU; token types are all type 0 here (one sentence per row).

use ndarray::Array2;
use serde::Deserialize;

use super::hf::{activation, check_sizes};
use super::run::{Batch, Hidden, PlaceInfo, PlaceRun, RowAttention, Run, Settings};
use super::transformer::{self, EncoderLayer};
use super::weights::Weights;
use super::{place_mask, Network};
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::nn::{self, FeedForward, LayerNorm};

/// `config.json` of a BERT model, with transformers' defaults.
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
    pub pad_token_id: Option<u32>,
    pub position_embedding_type: String,
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
            pad_token_id: Some(0),
            position_embedding_type: "absolute".into(),
        }
    }
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
    pub fn load(w: Weights, config: BertConfig) -> Result<Self> {
        let c = &config;
        check_sizes(&[
            ("vocab_size", c.vocab_size),
            ("hidden_size", c.hidden_size),
            ("num_hidden_layers", c.num_hidden_layers),
            ("num_attention_heads", c.num_attention_heads),
            ("intermediate_size", c.intermediate_size),
            ("max_position_embeddings", c.max_position_embeddings),
            ("type_vocab_size", c.type_vocab_size),
        ])?;
        if c.position_embedding_type != "absolute" {
            let problem = FileProblem::unsupported(
                "position_embedding_type",
                &c.position_embedding_type,
                "headmap reads absolute positions only",
            );
            return Err(Error::file("config.json", problem));
        }
        let w = w.with_prefix_of("embeddings.word_embeddings.weight", &["", "bert."])?;
        let root = w.root();
        let (d, eps) = (c.hidden_size, c.layer_norm_eps as f32);
        let act = activation("hidden_act", &c.hidden_act)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| {
                let l = root.pp("encoder.layer").pp(i);
                let attention = l.pp("attention");
                Ok(EncoderLayer {
                    self_attn: MultiHeadAttention::new(
                        attention.pp("self").linear("query", d, d)?,
                        attention.pp("self").linear("key", d, d)?,
                        attention.pp("self").linear("value", d, d)?,
                        attention.pp("output").linear("dense", d, d)?,
                        c.num_attention_heads,
                    )?,
                    self_attn_norm: attention.pp("output").layer_norm("LayerNorm", d, eps)?,
                    ffn: FeedForward {
                        inner: l.pp("intermediate").linear("dense", d, c.intermediate_size)?,
                        outer: l.pp("output").linear("dense", c.intermediate_size, d)?,
                        activation: act,
                    },
                    final_norm: l.pp("output").layer_norm("LayerNorm", d, eps)?,
                })
            })
            .collect::<Result<_>>()?;
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
        let c = &self.config;
        let heads = c.num_attention_heads;
        vec![PlaceInfo {
            place: Place::EncoderSelf,
            mask: MaskKind::Padding,
            layers: c.num_hidden_layers,
            heads,
            d_k: c.hidden_size / heads,
        }]
    }

    fn d_model(&self) -> usize {
        self.config.hidden_size
    }

    fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }

    /// Encoder self-attention with the padding mask it was trained with (or a what-if mask).
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        let info = &self.places()[0];
        let mut place = PlaceRun::new(info, settings);
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for row in &batch.sources {
            let mut x = nn::embed_with_positions(&self.word, &self.position, &row.ids, 1.0)?; // (T, D)
            x += &self.token_type.row(0);
            let x = self.embedding_norm.forward(x.view());
            let mask = place_mask(place.mask, row, row)?;
            let mut record = RowAttention::new(row, row, info.layers, info.heads);
            let out = transformer::encode(&self.layers, x, &mask, settings.scale, Some(&mut record))?;
            place.rows.push(record);
            hidden.push(Hidden { encoder: Some(out), decoder: None });
        }
        Ok(Run { places: vec![place], hidden })
    }

    fn block(&self, place: Place, layer: usize) -> Option<&MultiHeadAttention> {
        (place == Place::EncoderSelf).then(|| self.layers.get(layer).map(|l| &l.self_attn)).flatten()
    }
}
