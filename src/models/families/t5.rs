//! T5 (`t5`: t5-small, t5-v1_1, flan-t5), mirroring transformers' `models/t5/modeling_t5.py`.
//! All three places — encoder self-attention, decoder masked self-attention, cross-attention —
//! in pre-norm blocks, with two things the paper's Transformer does not have:
//!
//! - no ÷√d_k: T5 folds the scale into its initialisation, so its scores reach the softmax
//!   unscaled (the scaling lesson's live counterexample);
//! - no position embeddings: each self-attention score gets a learnt bias chosen by the
//!   distance from query to key ([`RelativePositionBias`]), owned by the first layer of each
//!   stack and reused by every later layer. Cross-attention has none.
//!
//! Norms are RMS norms without a bias (`T5LayerNorm`); the feed-forward block is ReLU
//! (`relu`) or gated (`gated-gelu`: t5-v1_1, flan-t5). Heads are `d_kv` wide, and
//! `num_heads · d_kv` may differ from `d_model`.

use std::sync::Arc;

use ndarray::Array2;
use serde::Deserialize;

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::{HeadShape, MultiHeadAttention};
use crate::attention::place::Place;
use crate::attention::position::PositionScheme;
use crate::attention::relative::RelativePositionBias;
use crate::attention::sdpa::ScoreScale;
use crate::error::{Error, FileProblem, Result};
use crate::models::config::{activation, check_sizes, Loading, TokenIds};
use crate::models::decoding::{Generation, LayerCache, Step};
use crate::models::encoder_decoder::{EncoderDecoder, Stacks};
use crate::models::head::OutputHead;
use crate::models::network::{Loaded, Stacked, Unembed};
use crate::models::pre_norm::{Memory, PreNormBlock, PreNormStack};
use crate::models::transformer::DecoderPlaces;
use crate::models::weights::Vars;
use crate::nn::{self, Activation, FeedForward, GatedFeedForward, Mlp, Norm};
use crate::run::{PlaceInfo, Row, RowAttention, Settings, Until};
use crate::tokenize::MAX_TOKENS;

/// `config.json` of a T5 model, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct T5Config {
    pub vocab_size: usize,
    pub d_model: usize,
    pub d_kv: usize,
    pub d_ff: usize,
    pub num_layers: usize,
    pub num_decoder_layers: Option<usize>,
    pub num_heads: usize,
    pub relative_attention_num_buckets: usize,
    pub relative_attention_max_distance: usize,
    pub layer_norm_epsilon: f64,
    pub feed_forward_proj: String,
    pub is_encoder_decoder: bool,
    pub is_decoder: bool,
    pub pad_token_id: Option<u32>,
    pub eos_token_id: Option<TokenIds>,
    pub decoder_start_token_id: Option<u32>,
    pub tie_word_embeddings: Option<bool>,
    /// What transformers 5 saves in place of `tie_word_embeddings`: whether the decoder's
    /// output is scaled by d_model^-½ before the (tied) head.
    pub scale_decoder_outputs: Option<bool>,
}

impl Default for T5Config {
    fn default() -> Self {
        T5Config {
            vocab_size: 32128,
            d_model: 512,
            d_kv: 64,
            d_ff: 2048,
            num_layers: 6,
            num_decoder_layers: None,
            num_heads: 8,
            relative_attention_num_buckets: 32,
            relative_attention_max_distance: 128,
            layer_norm_epsilon: 1e-6,
            feed_forward_proj: "relu".into(),
            is_encoder_decoder: true,
            is_decoder: false,
            pad_token_id: Some(0),
            eos_token_id: Some(TokenIds::One(1)),
            decoder_start_token_id: None,
            tie_word_embeddings: None,
            scale_decoder_outputs: None,
        }
    }
}

impl T5Config {
    pub fn decoder_layers(&self) -> usize {
        self.num_decoder_layers.unwrap_or(self.num_layers)
    }

    /// `relu`, `gated-gelu` (GELU's tanh form, as transformers maps it), `gated-<act>`, `<act>`.
    fn feed_forward(&self) -> Result<(bool, Activation)> {
        let parts: Vec<&str> = self.feed_forward_proj.split('-').collect();
        let (gated, name) = match parts.as_slice() {
            ["gated", "gelu"] => (true, "gelu_new"),
            ["gated", act] if !act.is_empty() => (true, *act),
            [act] if !act.is_empty() => (false, *act),
            _ => {
                let reason = "it must be `<activation>` or `gated-<activation>`";
                return Err(Error::file(
                    "config.json",
                    FileProblem::impossible("feed_forward_proj", &self.feed_forward_proj, reason),
                ));
            }
        };
        Ok((gated, activation("feed_forward_proj", name)?))
    }
}

/// T5's feed-forward block `DenseReluDense`: `wo(act(wi(x)))`, or gated
/// `wo(act(wi_0(x)) ⊙ wi_1(x))`.
fn feed_forward(scope: &Vars, d: usize, d_ff: usize, gated: bool, activation: Activation) -> Result<Mlp> {
    Ok(if gated {
        Mlp::Gated(GatedFeedForward {
            gate: scope.linear_no_bias("wi_0", d, d_ff)?,
            up: scope.linear_no_bias("wi_1", d, d_ff)?,
            down: scope.linear_no_bias("wo", d_ff, d)?,
            activation,
        })
    } else {
        Mlp::Plain(FeedForward {
            inner: scope.linear_no_bias("wi", d, d_ff)?,
            outer: scope.linear_no_bias("wo", d_ff, d)?,
            activation,
        })
    })
}

/// T5's stacks over the shared embeddings, and the head for greedy decoding.
struct T5Stacks {
    shared: Arc<Array2<f32>>, // (V, D)
    encoder: PreNormStack,
    decoder: PreNormStack,
    /// `lm_head.weight` when the file has one, else the shared embeddings; the decoder's output
    /// is first scaled by d_model^-½ unless the config unties them (t5-v1_1, flan-t5). The
    /// decoder's final norm is already in its output, and in the lens's.
    unembed: Unembed,
}

impl Stacks for T5Stacks {
    fn encode(
        &self,
        src: &Row,
        mask: &Arc<Mask>,
        settings: &Settings,
        record: Option<&mut RowAttention>,
        until: Until,
    ) -> Result<Stacked> {
        if src.ids.len() > MAX_TOKENS {
            return Err(Error::TooLong { tokens: src.ids.len(), max: MAX_TOKENS });
        }
        let x = nn::embed(&self.shared, &src.ids)?; // (Ts, D)
        let masks = vec![Arc::clone(mask); self.encoder.blocks.len()];
        self.encoder.run(x, &masks, settings, record, None, until)
    }

    fn decode(
        &self,
        tgt: &Row,
        memory: &Arc<Array2<f32>>,
        places: DecoderPlaces,
        settings: &Settings,
        until: Until,
    ) -> Result<Stacked> {
        let DecoderPlaces { self_mask, cross_mask, self_record, cross_record } = places;
        let y = nn::embed(&self.shared, &tgt.ids)?; // (Tt, D)
        let masks = vec![Arc::clone(self_mask); self.decoder.blocks.len()];
        let memory = Memory { states: memory, mask: cross_mask, record: cross_record };
        self.decoder.run(y, &masks, settings, self_record, Some(memory), until)
    }

    fn unembed(&self) -> &Unembed {
        &self.unembed
    }

    fn decoder_caches(&self, memory: &Array2<f32>) -> Result<Vec<LayerCache>> {
        self.decoder.caches(Some(memory))
    }

    fn decode_step(
        &self,
        ids: &[u32],
        caches: &mut [LayerCache],
        cross_mask: &Mask,
        settings: &Settings,
    ) -> Result<Step> {
        let y = nn::embed(&self.shared, ids)?; // (n, D): T5 says where tokens are in its bias alone
        self.decoder.step(y, caches, &[], Some(cross_mask), settings)
    }
}

/// The registry's loader for `t5`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let config: T5Config = m.config()?;
    let c = &config;
    let pad = m.pad(c.vocab_size, c.pad_token_id.unwrap_or(0))?;
    // PAD, the fallback, was checked by `pad` above
    let start =
        m.token("decoder_start_token_id", c.decoder_start_token_id, c.vocab_size)?.or(c.pad_token_id).unwrap_or(0);
    check_sizes(&[
        ("vocab_size", c.vocab_size),
        ("d_model", c.d_model),
        ("d_kv", c.d_kv),
        ("d_ff", c.d_ff),
        ("num_layers", c.num_layers),
        ("num_decoder_layers", c.decoder_layers()),
        ("num_heads", c.num_heads),
        ("relative_attention_num_buckets", c.relative_attention_num_buckets),
        ("relative_attention_max_distance", c.relative_attention_max_distance),
    ])?;
    if c.is_decoder || !c.is_encoder_decoder {
        let (setting, value) = if c.is_decoder { ("is_decoder", true) } else { ("is_encoder_decoder", false) };
        let problem = FileProblem::unsupported(setting, value, "headmap reads T5 as an encoder–decoder");
        return Err(Error::file("config.json", problem));
    }
    let (gated, act) = c.feed_forward()?;
    let w = m.weights.with_prefix_of("encoder.final_layer_norm.weight", &["", "model.", "transformer."])?;
    let root = w.root();
    let (d, eps) = (c.d_model, c.layer_norm_epsilon as f32);
    let shape = HeadShape { heads: c.num_heads, kv_heads: c.num_heads, head_dim: c.d_kv };
    let inner = c.num_heads * c.d_kv;
    let attention = |scope: &Vars| -> Result<MultiHeadAttention> {
        let block = MultiHeadAttention::with_shape(
            scope.linear_no_bias("q", d, inner)?,
            scope.linear_no_bias("k", d, inner)?,
            scope.linear_no_bias("v", d, inner)?,
            scope.linear_no_bias("o", inner, d)?,
            shape,
        )?;
        Ok(block.with_score_scale(ScoreScale::None))
    };
    // `{encoder,decoder}.block.N.layer`: 0 self-attention, (decoder) 1 cross-attention, then
    // the feed-forward, each with its `layer_norm`
    let stack = |name: &str, layers: usize, decoder: bool| -> Result<PreNormStack> {
        let s = root.pp(name);
        let table_name = "block.0.layer.0.SelfAttention.relative_attention_bias.weight";
        let table = s.matrix(table_name, [c.relative_attention_num_buckets, c.num_heads])?;
        let max_distance = c.relative_attention_max_distance;
        let bias = Arc::new(RelativePositionBias::new(table, !decoder, max_distance).map_err(|_| {
            let reason =
                "it must be beyond the exact buckets (a quarter of the buckets in the encoder, half in the decoder)";
            Error::file("config.json", FileProblem::impossible("relative_attention_max_distance", max_distance, reason))
        })?);
        let blocks = (0..layers)
            .map(|i| {
                let b = s.pp("block").pp(i).pp("layer");
                let ff = if decoder { 2 } else { 1 };
                Ok(PreNormBlock {
                    ln_1: Norm::Rms(b.pp(0).rms_norm("layer_norm", d, eps)?),
                    attn: Arc::new(
                        attention(&b.pp(0).pp("SelfAttention"))?
                            .with_positions(PositionScheme::RelativeBias(Arc::clone(&bias))),
                    ),
                    cross: if decoder {
                        Some((
                            Norm::Rms(b.pp(1).rms_norm("layer_norm", d, eps)?),
                            Arc::new(attention(&b.pp(1).pp("EncDecAttention"))?),
                        ))
                    } else {
                        None
                    },
                    ln_2: Norm::Rms(b.pp(ff).rms_norm("layer_norm", d, eps)?),
                    mlp: feed_forward(&b.pp(ff).pp("DenseReluDense"), d, c.d_ff, gated, act)?,
                    parallel: false,
                })
            })
            .collect::<Result<_>>()?;
        let place = if decoder { Place::DecoderSelf } else { Place::EncoderSelf };
        Ok(PreNormStack { place, blocks, final_norm: Norm::Rms(s.rms_norm("final_layer_norm", d, eps)?) })
    };
    let shared_name = root.first_of(&["shared.weight", "encoder.embed_tokens.weight"])?;
    let shared = Arc::new(root.matrix(shared_name, [c.vocab_size, d])?);
    let scaled = c.scale_decoder_outputs.unwrap_or(c.tie_word_embeddings != Some(false));
    let lm_head = match w.root_matrix("lm_head.weight", [c.vocab_size, d]) {
        Some(head) => Arc::new(head?),
        None => Arc::clone(&shared),
    };
    let head = OutputHead { scale: if scaled { (d as f32).powf(-0.5) } else { 1.0 }, ..OutputHead::plain(lm_head) };
    let decoder = stack("decoder", c.decoder_layers(), true)?;
    let stacks = T5Stacks {
        encoder: stack("encoder", c.num_layers, false)?,
        unembed: Unembed::new(Some(decoder.final_norm.clone()), Ok(head)),
        decoder,
        shared,
    };
    let (h, d_k) = (c.num_heads, c.d_kv);
    let places = [
        PlaceInfo::new(Place::EncoderSelf, MaskKind::Padding, c.num_layers, h, d_k),
        PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.decoder_layers(), h, d_k),
        PlaceInfo::new(Place::Cross, MaskKind::Cross, c.decoder_layers(), h, d_k),
    ];
    let generation = Generation { eos: c.eos_token_id.as_ref().map(TokenIds::first), ..Generation::default() };
    // relative positions have no table to run out of
    let net = EncoderDecoder::new("t5", places, d, MAX_TOKENS, start, stacks, generation);
    Ok(Loaded { net: Box::new(net), pad })
}
