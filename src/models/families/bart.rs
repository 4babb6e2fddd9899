//! Encoder–decoder models: BART (`BartModel`) and Marian (`MarianMTModel`, e.g. opus-mt-ko-en),
//! mirroring transformers' `models/bart/modeling_bart.py` and `models/marian/modeling_marian.py`.
//! All three places of the paper's table on a real model: encoder self-attention, decoder
//! masked self-attention and cross-attention, in the post-LN layers of `transformer`.
//!
//! They differ in their embeddings: BART learns positions (offset by 2) and normalises the
//! embeddings; Marian scales tokens by √d_model and adds fixed sinusoids, sines in the first
//! half of each vector and cosines in the second.

use std::sync::Arc;

use ndarray::{s, Array2};
use serde::Deserialize;

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::models::config::{activation, check_sizes, Loading};
use crate::models::decoding::{tokens_read, Generation, LayerCache, Step};
use crate::models::encoder_decoder::{EncoderDecoder, Stacks};
use crate::models::head::OutputHead;
use crate::models::network::{Loaded, Stacked, Unembed};
use crate::models::transformer::{self, DecoderLayer, DecoderPlaces, EncoderLayer};
use crate::models::weights::Vars;
use crate::nn::{self, Activation, FeedForward, LayerNorm};
use crate::run::{PlaceInfo, Row, RowAttention, Settings, Until};
use crate::tokenize::MAX_TOKENS;

const LAYER_NORM_EPS: f32 = 1e-5;

/// `config.json` of a BART or Marian model, with BART's defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BartConfig {
    pub model_type: String,
    pub vocab_size: usize,
    pub decoder_vocab_size: Option<usize>,
    pub d_model: usize,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub encoder_attention_heads: usize,
    pub decoder_attention_heads: usize,
    pub encoder_ffn_dim: usize,
    pub decoder_ffn_dim: usize,
    pub activation_function: String,
    pub max_position_embeddings: usize,
    pub scale_embedding: bool,
    pub normalize_before: bool,
    pub add_final_layer_norm: bool,
    pub pad_token_id: Option<u32>,
    pub decoder_start_token_id: Option<u32>,
    pub eos_token_id: Option<u32>,
    pub forced_eos_token_id: Option<u32>,
    pub bad_words_ids: Option<Vec<Vec<u32>>>,
}

impl Default for BartConfig {
    fn default() -> Self {
        BartConfig {
            model_type: "bart".into(),
            vocab_size: 50265,
            decoder_vocab_size: None,
            d_model: 1024,
            encoder_layers: 12,
            decoder_layers: 12,
            encoder_attention_heads: 16,
            decoder_attention_heads: 16,
            encoder_ffn_dim: 4096,
            decoder_ffn_dim: 4096,
            activation_function: "gelu".into(),
            max_position_embeddings: 1024,
            scale_embedding: false,
            normalize_before: false,
            add_final_layer_norm: false,
            pad_token_id: Some(1),
            decoder_start_token_id: Some(2),
            eos_token_id: Some(2),
            forced_eos_token_id: None,
            bad_words_ids: None,
        }
    }
}

impl BartConfig {
    pub fn is_marian(&self) -> bool {
        self.model_type == "marian"
    }
}

/// Token and position embeddings of one side.
struct Embeddings {
    tokens: Arc<Array2<f32>>, // (V, D) embed_tokens, or shared; the decoder's shared with a tied head
    positions: Array2<f32>,   // (P, D), already offset for BART
    norm: Option<LayerNorm>,  // BART's layernorm_embedding
    /// √d_model with `scale_embedding` (transformers' `embed_scale`), else 1.
    embed_scale: f32,
}

impl Embeddings {
    fn forward(&self, ids: &[u32]) -> Result<Array2<f32>> {
        self.forward_at(ids, 0)
    }

    /// Tokens at positions `first..`.
    fn forward_at(&self, ids: &[u32], first: usize) -> Result<Array2<f32>> {
        let x = nn::embed_at(&self.tokens, &self.positions, ids, self.embed_scale, first)?; // (T, D)
        Ok(match &self.norm {
            Some(norm) => norm.forward(x.view()),
            None => x,
        })
    }
}

/// BART's and Marian's stacks: each side's embeddings and post-LN layers, and the head.
struct BartStacks {
    encoder_embeddings: Embeddings,
    decoder_embeddings: Embeddings,
    encoder: Vec<EncoderLayer>, // encoder.layers.N
    decoder: Vec<DecoderLayer>, // decoder.layers.N
    /// `lm_head` (V, D), tied to the decoder's token embeddings unless lm_head.weight exists,
    /// and `final_logits_bias` (V,); post-LN, so no final norm.
    unembed: Unembed,
}

impl Stacks for BartStacks {
    fn encode(
        &self,
        src: &Row,
        mask: &Arc<Mask>,
        settings: &Settings,
        record: Option<&mut RowAttention>,
        until: Until,
    ) -> Result<Stacked> {
        let x = self.encoder_embeddings.forward(&src.ids)?; // (Ts, D)
        transformer::encode(&self.encoder, x, mask, settings, record, until)
    }

    fn decode(
        &self,
        tgt: &Row,
        memory: &Arc<Array2<f32>>,
        places: DecoderPlaces,
        settings: &Settings,
        until: Until,
    ) -> Result<Stacked> {
        let y = self.decoder_embeddings.forward(&tgt.ids)?; // (Tt, D)
        transformer::decode(&self.decoder, y, memory, places, settings, until)
    }

    fn unembed(&self) -> &Unembed {
        &self.unembed
    }

    fn decoder_caches(&self, memory: &Array2<f32>) -> Result<Vec<LayerCache>> {
        transformer::decoder_caches(&self.decoder, memory)
    }

    fn decode_step(
        &self,
        ids: &[u32],
        caches: &mut [LayerCache],
        cross_mask: &Mask,
        settings: &Settings,
    ) -> Result<Step> {
        let first = tokens_read(caches);
        let y = self.decoder_embeddings.forward_at(ids, first)?; // (n, D)
        transformer::decode_step(&self.decoder, y, caches, cross_mask, settings)
    }
}

/// The registry's loader for `bart` and `marian`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let config: BartConfig = m.config()?;
    let c = &config;
    let pad = m.pad(c.vocab_size, c.pad_token_id.unwrap_or(1))?;
    let decoder_vocab = c.decoder_vocab_size.unwrap_or(c.vocab_size);
    check_sizes(&[
        ("vocab_size", c.vocab_size),
        ("decoder_vocab_size", decoder_vocab),
        ("d_model", c.d_model),
        ("encoder_layers", c.encoder_layers),
        ("decoder_layers", c.decoder_layers),
        ("encoder_attention_heads", c.encoder_attention_heads),
        ("decoder_attention_heads", c.decoder_attention_heads),
        ("encoder_ffn_dim", c.encoder_ffn_dim),
        ("decoder_ffn_dim", c.decoder_ffn_dim),
        ("max_position_embeddings", c.max_position_embeddings),
    ])?;
    let forced_eos = m.token("forced_eos_token_id", c.forced_eos_token_id, decoder_vocab)?;
    // the decoder starts from its start token, else PAD: either must be in its own vocabulary
    let start = match m.token("decoder_start_token_id", c.decoder_start_token_id, decoder_vocab)? {
        Some(start) => start,
        None => m.token("pad_token_id", c.pad_token_id, decoder_vocab)?.unwrap_or(0),
    };
    for (setting, on) in [("normalize_before", c.normalize_before), ("add_final_layer_norm", c.add_final_layer_norm)] {
        if on {
            let problem = FileProblem::unsupported(setting, true, "pre-LN variants such as mBART are not supported");
            return Err(Error::file("config.json", problem));
        }
    }
    let w = m.weights.with_prefix_of("encoder.layers.0.self_attn.q_proj.weight", &["", "model."])?;
    let root = w.root();
    let d = c.d_model;
    let act = activation("activation_function", &c.activation_function)?;
    let encoder = (0..c.encoder_layers)
        .map(|i| {
            let l = root.pp("encoder.layers").pp(i);
            Ok(EncoderLayer {
                self_attn: attention(&l.pp("self_attn"), d, c.encoder_attention_heads)?,
                self_attn_norm: l.layer_norm("self_attn_layer_norm", d, LAYER_NORM_EPS)?,
                ffn: ffn(&l, d, c.encoder_ffn_dim, act)?,
                final_norm: l.layer_norm("final_layer_norm", d, LAYER_NORM_EPS)?,
            })
        })
        .collect::<Result<_>>()?;
    let decoder = (0..c.decoder_layers)
        .map(|i| {
            let l = root.pp("decoder.layers").pp(i);
            Ok(DecoderLayer {
                self_attn: attention(&l.pp("self_attn"), d, c.decoder_attention_heads)?,
                self_attn_norm: l.layer_norm("self_attn_layer_norm", d, LAYER_NORM_EPS)?,
                cross_attn: attention(&l.pp("encoder_attn"), d, c.decoder_attention_heads)?,
                cross_attn_norm: l.layer_norm("encoder_attn_layer_norm", d, LAYER_NORM_EPS)?,
                ffn: ffn(&l, d, c.decoder_ffn_dim, act)?,
                final_norm: l.layer_norm("final_layer_norm", d, LAYER_NORM_EPS)?,
            })
        })
        .collect::<Result<_>>()?;
    let embed_scale = if c.scale_embedding { (d as f32).sqrt() } else { 1.0 };
    let side = |name: &str, vocab: usize| -> Result<Embeddings> {
        let side = root.pp(name);
        let tokens = Arc::new(if side.has("embed_tokens.weight") {
            side.matrix("embed_tokens.weight", [vocab, d])?
        } else {
            root.matrix(root.first_of(&["shared.weight"])?, [vocab, d])?
        });
        let max = c.max_position_embeddings;
        let (positions, norm) = if c.is_marian() {
            let positions = if side.has("embed_positions.weight") {
                side.matrix("embed_positions.weight", [max, d])?
            } else {
                // only the positions a text can reach: a damaged config's huge maximum
                // must not allocate a huge table
                marian_sinusoids(max.min(MAX_TOKENS), d)
            };
            (positions, None)
        } else {
            // BART's learned positions start at row 2
            let table = side.matrix("embed_positions.weight", [max + 2, d])?;
            (table.slice(s![2.., ..]).to_owned(), Some(side.layer_norm("layernorm_embedding", d, LAYER_NORM_EPS)?))
        };
        Ok(Embeddings { tokens, positions, norm, embed_scale })
    };
    let decoder_embeddings = side("decoder", decoder_vocab)?;
    let lm_head = match w.root_matrix("lm_head.weight", [decoder_vocab, d]) {
        Some(head) => Arc::new(head?),
        None => Arc::clone(&decoder_embeddings.tokens),
    };
    let final_logits_bias = match w.root_matrix("final_logits_bias", [1, decoder_vocab]) {
        Some(bias) => Some(bias?.row(0).to_owned()),
        None => None,
    };
    let head = OutputHead { bias: final_logits_bias, ..OutputHead::plain(lm_head) };
    let stacks = BartStacks {
        encoder_embeddings: side("encoder", c.vocab_size)?,
        decoder_embeddings,
        encoder,
        decoder,
        unembed: Unembed::new(None, Ok(head)),
    };
    let (enc, dec) = (c.encoder_attention_heads, c.decoder_attention_heads);
    let places = [
        PlaceInfo::new(Place::EncoderSelf, MaskKind::Padding, c.encoder_layers, enc, d / enc),
        PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.decoder_layers, dec, d / dec),
        PlaceInfo::new(Place::Cross, MaskKind::Cross, c.decoder_layers, dec, d / dec),
    ];
    let generation = Generation {
        eos: c.eos_token_id,
        forced_eos,
        banned: c.bad_words_ids.iter().flatten().filter(|w| w.len() == 1).map(|w| w[0]).collect(),
    };
    let (max, architecture) = (c.max_position_embeddings, c.model_type.as_str());
    let net = EncoderDecoder::new(architecture, places, d, max, start, stacks, generation);
    Ok(Loaded { net: Box::new(net), pad })
}

/// Four projections `q_proj`, `k_proj`, `v_proj`, `out_proj` under `scope`.
fn attention(scope: &Vars, d: usize, heads: usize) -> Result<Arc<MultiHeadAttention>> {
    Ok(Arc::new(MultiHeadAttention::new(
        scope.linear("q_proj", d, d)?,
        scope.linear("k_proj", d, d)?,
        scope.linear("v_proj", d, d)?,
        scope.linear("out_proj", d, d)?,
        heads,
    )?))
}

fn ffn(layer: &Vars, d: usize, d_ff: usize, activation: Activation) -> Result<FeedForward> {
    Ok(FeedForward { inner: layer.linear("fc1", d, d_ff)?, outer: layer.linear("fc2", d_ff, d)?, activation })
}

/// Marian's fixed positions: for k < D/2, sin(p / 10000^(2k/D)) in column k and the cosine
/// in column D/2 + k (not interleaved as in the paper).
fn marian_sinusoids(positions: usize, d: usize) -> Array2<f32> {
    let half = d.div_ceil(2);
    Array2::from_shape_fn((positions, d), |(p, j)| {
        let (k, sine) = if j < half { (j, true) } else { (j - half, false) };
        let angle = p as f64 / 10000f64.powf(2.0 * k as f64 / d as f64);
        (if sine { angle.sin() } else { angle.cos() }) as f32
    })
}
