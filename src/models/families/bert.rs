//! BERT (`BertModel`): bert-base, MiniLM, KLUE-BERT …, mirroring transformers'
//! `models/bert/modeling_bert.py`. Its layer is the post-LN encoder layer of `transformer`
//! with GELU; token types are all type 0 here (one sentence per row).
//!
//! RoBERTa, XLM-RoBERTa and ELECTRA (`roberta.rs`, `electra.rs`) share these layers, this
//! config and these embeddings' names; only where positions start and how wide the embeddings
//! are differ. All run as an `encoder_only` network.

use std::sync::Arc;

use serde::Deserialize;

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::models::config::{activation, check_sizes, Loading};
use crate::models::encoder_only::{masked_lm_head, EncoderEmbeddings, EncoderOnly, MaskedLmNames, Positions};
use crate::models::network::Loaded;
use crate::models::transformer::EncoderLayer;
use crate::models::weights::Vars;
use crate::nn::FeedForward;
use crate::run::PlaceInfo;

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

    /// `embeddings.*` under `root`, of width `width`, every token type 0.
    pub(crate) fn embeddings(&self, root: &Vars, width: usize, positions: Positions) -> Result<EncoderEmbeddings> {
        let e = root.pp("embeddings");
        Ok(EncoderEmbeddings {
            word: Arc::new(e.matrix("word_embeddings.weight", [self.vocab_size, width])?),
            position: e.matrix("position_embeddings.weight", [self.max_position_embeddings, width])?,
            positions,
            token_type: Some(e.matrix("token_type_embeddings.weight", [self.type_vocab_size, width])?),
            norm: e.layer_norm("LayerNorm", width, self.layer_norm_eps as f32)?,
            project: None,
        })
    }
}

/// The registry's loader for `bert`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let c: BertConfig = m.config()?;
    let pad = m.pad(c.vocab_size, c.pad_token_id.unwrap_or(0))?;
    c.check()?;
    let w = m.weights.with_prefix_of("embeddings.word_embeddings.weight", &["", "bert."])?;
    let root = w.root();
    let layers = c.layers(&root)?;
    let embeddings = c.embeddings(&root, c.hidden_size, Positions::FromZero)?;
    let names = MaskedLmNames {
        dense: "cls.predictions.transform.dense",
        norm: "cls.predictions.transform.LayerNorm",
        bias: &["cls.predictions.bias", "cls.predictions.decoder.bias"],
    };
    let act = activation("hidden_act", &c.hidden_act)?;
    let head = masked_lm_head(&w, &names, &embeddings.word, act, c.layer_norm_eps as f32)?;
    Ok(Loaded { net: Box::new(EncoderOnly::new("bert", c.place(), c.hidden_size, embeddings, layers, head)), pad })
}
