//! BERT (`BertModel`): bert-base, MiniLM, KLUE-BERT …, mirroring transformers'
//! `models/bert/modeling_bert.py`. Post-LN encoder layers, GELU, token types (all type 0
//! here: one sentence per row).

use ndarray::Array2;
use serde::Deserialize;

use super::layers::{self, Activation};
use super::run::{self_attention_mask, AttentionRun, LayerAttention, Row, RowTokens};
use super::weights::Weights;
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::error::{Error, Result};
use crate::nn::{LayerNorm, Linear};

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

struct BertLayer {
    attention: MultiHeadAttention, // attention.self.{query,key,value} + attention.output.dense
    attention_norm: LayerNorm,     // attention.output.LayerNorm
    intermediate: Linear,          // intermediate.dense
    output: Linear,                // output.dense
    output_norm: LayerNorm,        // output.LayerNorm
}

pub struct Bert {
    pub config: BertConfig,
    word: Array2<f32>,     // (V, D)
    position: Array2<f32>, // (P, D)
    token_type: Array2<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<BertLayer>,
    activation: Activation,
}

impl Bert {
    pub fn load(w: Weights, config: BertConfig) -> Result<Self> {
        if config.position_embedding_type != "absolute" {
            return Err(Error::file(
                "config.json",
                format!(
                    "position_embedding_type `{}` is not supported (only absolute)",
                    config.position_embedding_type
                ),
            ));
        }
        let w = w.with_prefix_of("embeddings.word_embeddings.weight", &["", "bert."])?;
        let (d, eps) = (config.hidden_size, config.layer_norm_eps as f32);
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let p = format!("encoder.layer.{i}");
                Ok(BertLayer {
                    attention: layers::attention(
                        &w,
                        [
                            &format!("{p}.attention.self.query"),
                            &format!("{p}.attention.self.key"),
                            &format!("{p}.attention.self.value"),
                            &format!("{p}.attention.output.dense"),
                        ],
                        d,
                        config.num_attention_heads,
                    )?,
                    attention_norm: layers::layer_norm(&w, &format!("{p}.attention.output.LayerNorm"), d, eps)?,
                    intermediate: layers::linear(&w, &format!("{p}.intermediate.dense"), d, config.intermediate_size)?,
                    output: layers::linear(&w, &format!("{p}.output.dense"), config.intermediate_size, d)?,
                    output_norm: layers::layer_norm(&w, &format!("{p}.output.LayerNorm"), d, eps)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Bert {
            word: w.matrix("embeddings.word_embeddings.weight", [config.vocab_size, d])?,
            position: w.matrix("embeddings.position_embeddings.weight", [config.max_position_embeddings, d])?,
            token_type: w.matrix("embeddings.token_type_embeddings.weight", [config.type_vocab_size, d])?,
            embedding_norm: layers::layer_norm(&w, "embeddings.LayerNorm", d, eps)?,
            activation: Activation::parse(&config.hidden_act)?,
            layers,
            config,
        })
    }

    /// Encoder self-attention with the padding mask it was trained with (or, to see what
    /// changes, another `mask`), and the last hidden states per row.
    pub fn forward(&self, rows: &[Row], mask: MaskKind) -> Result<(AttentionRun, Vec<Array2<f32>>)> {
        let mut run = AttentionRun::new(mask, true);
        let mut hidden = Vec::with_capacity(rows.len());
        for row in rows {
            let mut x = layers::embed_with_positions(&self.word, &self.position, &row.ids, 1.0)?; // (T, D)
            x += &self.token_type.row(0);
            let mut x = self.embedding_norm.forward(x.view());
            let row_mask = self_attention_mask(mask, &row.valid)?;
            let mut layers_out = Vec::with_capacity(self.layers.len());
            for layer in &self.layers {
                let a = layer.attention.forward(x.view(), x.view(), row_mask.as_ref(), true)?;
                let x1 = layer.attention_norm.forward((&x + &a.output).view()); // (T, D)
                let f = layers::feed_forward(x1.view(), &layer.intermediate, &layer.output, self.activation)?;
                let next = layer.output_norm.forward((&x1 + &f).view());
                layers_out.push(LayerAttention { weights: a.weights, x_q: x.clone(), x_kv: x });
                x = next;
            }
            let tokens =
                RowTokens { queries: &row.labels, keys: &row.labels, query_valid: &row.valid, key_valid: &row.valid };
            run.push_row(tokens, layers_out, row_mask);
            hidden.push(x);
        }
        Ok((run, hidden))
    }

    pub fn block(&self, layer: usize) -> Option<&MultiHeadAttention> {
        self.layers.get(layer).map(|l| &l.attention)
    }

    pub fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }
}
