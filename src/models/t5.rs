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

use super::config::{activation, check_sizes, Loading};
use super::network::{place_mask, Loaded, Network};
use super::run::{attend, Batch, Hidden, PlaceInfo, PlaceRun, Row, RowAttention, Run, Settings};
use super::weights::{Vars, Weights};
use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::{HeadShape, MultiHeadAttention};
use crate::attention::place::Place;
use crate::attention::relative::RelativePositionBias;
use crate::attention::sdpa::Scale;
use crate::error::{Error, FileProblem, Result};
use crate::nn::{self, Activation, FeedForward, GatedFeedForward, RmsNorm};
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
    pub eos_token_id: Option<super::config::TokenIds>,
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
            eos_token_id: Some(super::config::TokenIds::One(1)),
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
            ["gated", act] => (true, *act),
            [act] => (false, *act),
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

/// T5's feed-forward block: `wo(act(wi(x)))`, or gated `wo(act(wi_0(x)) ⊙ wi_1(x))`.
enum T5FeedForward {
    Plain(FeedForward),
    Gated(GatedFeedForward),
}

impl T5FeedForward {
    fn load(scope: &Vars, d: usize, d_ff: usize, gated: bool, activation: Activation) -> Result<Self> {
        Ok(if gated {
            T5FeedForward::Gated(GatedFeedForward {
                gate: scope.linear_no_bias("wi_0", d, d_ff)?,
                up: scope.linear_no_bias("wi_1", d, d_ff)?,
                down: scope.linear_no_bias("wo", d_ff, d)?,
                activation,
            })
        } else {
            T5FeedForward::Plain(FeedForward {
                inner: scope.linear_no_bias("wi", d, d_ff)?,
                outer: scope.linear_no_bias("wo", d_ff, d)?,
                activation,
            })
        })
    }

    fn forward(&self, x: ndarray::ArrayView2<f32>) -> Result<Array2<f32>> {
        match self {
            T5FeedForward::Plain(f) => f.forward(x),
            T5FeedForward::Gated(f) => f.forward(x),
        }
    }
}

/// `{encoder,decoder}.block.N`: self-attention, (decoder only) cross-attention, feed-forward,
/// each after its own norm and added back.
struct Block {
    self_norm: RmsNorm,                                // layer.0.layer_norm
    self_attn: Arc<MultiHeadAttention>,                // layer.0.SelfAttention
    cross: Option<(RmsNorm, Arc<MultiHeadAttention>)>, // layer.1.{layer_norm, EncDecAttention}
    ff_norm: RmsNorm,                                  // layer.{1,2}.layer_norm
    ff: T5FeedForward,                                 // layer.{1,2}.DenseReluDense
}

struct Stack {
    blocks: Vec<Block>,
    final_layer_norm: RmsNorm,
}

pub struct T5 {
    pub config: T5Config,
    shared: Array2<f32>, // (V, D)
    encoder: Stack,
    decoder: Stack,
    /// The head for greedy decoding, (V, D), and what the decoder's output is scaled by first.
    lm_head: Option<Array2<f32>>,
    output_scale: f32,
}

impl T5 {
    fn load(w: Weights, config: T5Config) -> Result<Self> {
        let c = &config;
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
        let w = w.with_prefix_of("encoder.final_layer_norm.weight", &["", "model.", "transformer."])?;
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
            Ok(block.scaled(Scale::None))
        };
        let stack = |name: &str, layers: usize, decoder: bool| -> Result<Stack> {
            let s = root.pp(name);
            let table_name = "block.0.layer.0.SelfAttention.relative_attention_bias.weight";
            let table = s.matrix(table_name, [c.relative_attention_num_buckets, c.num_heads])?;
            let bias = Arc::new(RelativePositionBias::new(table, !decoder, c.relative_attention_max_distance).map_err(|_| {
                let reason = "it must be beyond the exact buckets (a quarter of the buckets in the encoder, half in the decoder)";
                Error::file("config.json", FileProblem::impossible("relative_attention_max_distance", c.relative_attention_max_distance, reason))
            })?);
            let blocks = (0..layers)
                .map(|i| {
                    let b = s.pp("block").pp(i).pp("layer");
                    let ff = if decoder { 2 } else { 1 };
                    Ok(Block {
                        self_norm: b.pp(0).rms_norm("layer_norm", d, eps)?,
                        self_attn: Arc::new(attention(&b.pp(0).pp("SelfAttention"))?.biased(Arc::clone(&bias))),
                        cross: if decoder {
                            Some((
                                b.pp(1).rms_norm("layer_norm", d, eps)?,
                                Arc::new(attention(&b.pp(1).pp("EncDecAttention"))?),
                            ))
                        } else {
                            None
                        },
                        ff_norm: b.pp(ff).rms_norm("layer_norm", d, eps)?,
                        ff: T5FeedForward::load(&b.pp(ff).pp("DenseReluDense"), d, c.d_ff, gated, act)?,
                    })
                })
                .collect::<Result<_>>()?;
            Ok(Stack { blocks, final_layer_norm: s.rms_norm("final_layer_norm", d, eps)? })
        };
        let shared_name = root.first_of(&["shared.weight", "encoder.embed_tokens.weight"])?;
        let shared = root.matrix(shared_name, [c.vocab_size, d])?;
        let scaled = c.scale_decoder_outputs.unwrap_or(c.tie_word_embeddings != Some(false));
        let lm_head = match w.root_matrix("lm_head.weight", [c.vocab_size, d]) {
            Some(head) => Some(head?),
            None => None,
        };
        Ok(T5 {
            encoder: stack("encoder", c.num_layers, false)?,
            decoder: stack("decoder", c.decoder_layers(), true)?,
            output_scale: if scaled { (d as f32).powf(-0.5) } else { 1.0 },
            lm_head,
            shared,
            config,
        })
    }

    /// The encoder's output (Ts, D) for `src`, recording its self-attention.
    fn encode(
        &self,
        src: &Row,
        mask: &Arc<Mask>,
        scale: bool,
        mut record: Option<&mut RowAttention>,
    ) -> Result<Array2<f32>> {
        if src.ids.len() > MAX_TOKENS {
            return Err(Error::TooLong { tokens: src.ids.len(), max: MAX_TOKENS });
        }
        let mut x = nn::embed(&self.shared, &src.ids)?; // (Ts, D)
        for block in &self.encoder.blocks {
            let h = Arc::new(block.self_norm.forward(x.view()));
            x += &attend(&block.self_attn, &h, &h, mask, scale, record.as_deref_mut())?;
            x += &block.ff.forward(block.ff_norm.forward(x.view()).view())?;
        }
        Ok(self.encoder.final_layer_norm.forward(x.view()))
    }

    /// The decoder's output (Tt, D) for `tgt` over `memory`, recording both its places.
    fn decode(
        &self,
        tgt: &Row,
        memory: &Arc<Array2<f32>>,
        masks: (&Arc<Mask>, &Arc<Mask>),
        scale: bool,
        records: (Option<&mut RowAttention>, Option<&mut RowAttention>),
    ) -> Result<Array2<f32>> {
        let (mut self_record, mut cross_record) = records;
        let mut y = nn::embed(&self.shared, &tgt.ids)?; // (Tt, D)
        for block in &self.decoder.blocks {
            let h = Arc::new(block.self_norm.forward(y.view()));
            y += &attend(&block.self_attn, &h, &h, masks.0, scale, self_record.as_deref_mut())?;
            if let Some((norm, cross)) = &block.cross {
                let h = Arc::new(norm.forward(y.view()));
                y += &attend(cross, &h, memory, masks.1, scale, cross_record.as_deref_mut())?;
            }
            y += &block.ff.forward(block.ff_norm.forward(y.view()).view())?;
        }
        Ok(self.decoder.final_layer_norm.forward(y.view()))
    }

    fn eos(&self) -> Option<u32> {
        self.config.eos_token_id.as_ref().map(super::config::TokenIds::first)
    }
}

impl Network for T5 {
    fn architecture(&self) -> &str {
        "t5"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        let c = &self.config;
        let (h, d_k) = (c.num_heads, c.d_kv);
        vec![
            PlaceInfo::new(Place::EncoderSelf, MaskKind::Padding, c.num_layers, h, d_k),
            PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.decoder_layers(), h, d_k),
            PlaceInfo::new(Place::Cross, MaskKind::Cross, c.decoder_layers(), h, d_k),
        ]
    }

    fn d_model(&self) -> usize {
        self.config.d_model
    }

    /// Relative positions have no table to run out of.
    fn max_tokens(&self) -> usize {
        MAX_TOKENS
    }

    fn decoder_start(&self) -> Option<u32> {
        Some(self.config.decoder_start_token_id.or(self.config.pad_token_id).unwrap_or(0))
    }

    /// Teacher forcing: `batch.sources` feed the encoder, `batch.targets` (shifted right
    /// behind the start token) the decoder.
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        if batch.targets.len() != batch.sources.len() {
            return Err(Error::TargetsMismatch { targets: batch.targets.len(), texts: batch.sources.len() });
        }
        let mut places: Vec<PlaceRun> = self.places().iter().map(|info| PlaceRun::new(info, settings)).collect();
        let needs_decoder = settings.keeps(Place::DecoderSelf) || settings.keeps(Place::Cross);
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for (src, tgt) in batch.sources.iter().zip(&batch.targets) {
            let padding = place_mask(places[0].mask, src, src)?;
            let mut enc_row = settings.keeps(Place::EncoderSelf).then(|| places[0].record(src, src));
            let memory = Arc::new(self.encode(src, &padding, settings.scale, enc_row.as_mut())?);
            places[0].rows.extend(enc_row);
            let mut out = Hidden::default();
            if needs_decoder {
                let causal = place_mask(places[1].mask, tgt, tgt)?;
                let cross = place_mask(places[2].mask, tgt, src)?;
                let mut self_row = settings.keeps(Place::DecoderSelf).then(|| places[1].record(tgt, tgt));
                let mut cross_row = settings.keeps(Place::Cross).then(|| places[2].record(tgt, src));
                let y = self.decode(
                    tgt,
                    &memory,
                    (&causal, &cross),
                    settings.scale,
                    (self_row.as_mut(), cross_row.as_mut()),
                )?;
                places[1].rows.extend(self_row);
                places[2].rows.extend(cross_row);
                out.decoder = Some(y);
            }
            out.encoder = Some(Arc::unwrap_or_clone(memory));
            hidden.push(out);
        }
        places.retain(|p| settings.keeps(p.place));
        Ok(Run { places, hidden })
    }

    /// Greedy decoding as `generate(num_beams=1, do_sample=False)`: from the start token, the
    /// most likely next token until `eos_token_id` or `max_new_tokens`. The head is
    /// `lm_head.weight` when the file has one, else the shared embeddings; the decoder's output
    /// is first scaled by d_model^-½ unless the config unties them (t5-v1_1, flan-t5).
    fn greedy(&self, source: &Row, max_new_tokens: usize) -> Result<Vec<u32>> {
        let start = self.decoder_start().unwrap_or(0);
        let padding = Arc::new(MaskKind::Padding.build(&source.valid, &source.valid)?);
        let memory = Arc::new(self.encode(source, &padding, true, None)?);
        let head = self.lm_head.as_ref().unwrap_or(&self.shared); // (V, D)
        let mut ids = vec![start];
        for _ in 0..max_new_tokens {
            let tgt = Row { tokens: Vec::new(), valid: vec![true; ids.len()], ids: ids.clone() };
            let causal = Arc::new(MaskKind::Causal.build(&tgt.valid, &tgt.valid)?);
            let cross = Arc::new(MaskKind::Cross.build(&tgt.valid, &source.valid)?);
            let y = self.decode(&tgt, &memory, (&causal, &cross), true, (None, None))?;
            let last = &y.row(y.nrows() - 1) * self.output_scale; // (D,)
            let logits = head.dot(&last); // (V,)
            let best =
                logits.iter().enumerate().fold((0, f32::NEG_INFINITY), |b, (i, &l)| if l > b.1 { (i, l) } else { b });
            let next = best.0 as u32;
            ids.push(next);
            if Some(next) == self.eos() {
                break;
            }
        }
        Ok(ids)
    }
}

/// The registry's loader for `t5`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: T5Config = m.config()?;
    let pad = m.pad(cfg.vocab_size, cfg.pad_token_id.unwrap_or(0))?;
    Ok(Loaded { net: Box::new(T5::load(m.weights, cfg)?), pad })
}
