//! An untrained encoder–decoder Transformer as in "Attention Is All You Need" (§3.1), built
//! from a seed so it needs no download.
//!
//! Its weights are random: its heads show how attention is computed and masked, not what a
//! trained model has learnt. Real models live beside this file.
//!
//! ```text
//! encoder layer:  x → self-attention (padding mask) → Add & Norm → FFN → Add & Norm
//! decoder layer:  y → masked self-attention (causal + padding) → Add & Norm = y₁
//!                 y₁ → cross-attention (Q from y₁, K·V from the encoder output) → Add & Norm
//!                 → FFN → Add & Norm
//! ```

use ndarray::{Array1, Array2};
use serde::Serialize;

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::{HeadTrace, MultiHeadAttention};
use crate::error::{Error, Result};
use crate::models::run::{AttentionRun, LayerAttention, RowTokens};
use crate::nn::{FeedForward, LayerNorm, Linear};
use crate::rng::SplitMix64;
use crate::tokenize::split_words;

/// The token that fills shorter rows of a batch up to the longest one.
pub const PAD: &str = "[PAD]";

/// The most sentences in one padded batch.
pub const MAX_BATCH: usize = 8;

const LAYER_NORM_EPS: f32 = 1e-5;

/// The toy model's shape and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ToyConfig {
    pub d_model: usize,
    pub heads: usize,
    pub d_ff: usize,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub seed: u64,
}

impl ToyConfig {
    /// The paper's base model: d_model 512, h 8 (d_k = d_v = 64), d_ff 2048, N = 6.
    pub fn paper_base(seed: u64) -> Self {
        ToyConfig { d_model: 512, heads: 8, d_ff: 2048, encoder_layers: 6, decoder_layers: 6, seed }
    }

    /// Small enough for a widget on a phone: d_model 64, h 4, two layers each side.
    pub fn small(seed: u64) -> Self {
        ToyConfig { d_model: 64, heads: 4, d_ff: 256, encoder_layers: 2, decoder_layers: 2, seed }
    }

    pub fn preset(name: &str, seed: u64) -> Result<Self> {
        match name {
            "base" => Ok(Self::paper_base(seed)),
            "small" => Ok(Self::small(seed)),
            other => Err(Error::setting("preset", format!("unknown preset `{other}`: use base or small"))),
        }
    }

    pub fn d_k(&self) -> usize {
        self.d_model / self.heads
    }

    pub fn validate(&self) -> Result<()> {
        if self.d_model == 0 || self.d_model > 1024 {
            return Err(Error::setting("d_model", format!("{} is outside 1..=1024", self.d_model)));
        }
        if self.heads == 0 || self.d_model % self.heads != 0 {
            return Err(Error::HeadsDoNotDivide { d_model: self.d_model, heads: self.heads });
        }
        if self.d_ff == 0 || self.d_ff > 4096 {
            return Err(Error::setting("d_ff", format!("{} is outside 1..=4096", self.d_ff)));
        }
        for (name, n) in [("encoder_layers", self.encoder_layers), ("decoder_layers", self.decoder_layers)] {
            if !(1..=12).contains(&n) {
                return Err(Error::setting(name, format!("{n} is outside 1..=12")));
            }
        }
        Ok(())
    }
}

struct EncoderLayer {
    self_attn: MultiHeadAttention,
    norm1: LayerNorm,
    ffn: FeedForward,
    norm2: LayerNorm,
}

struct DecoderLayer {
    self_attn: MultiHeadAttention,
    norm1: LayerNorm,
    cross_attn: MultiHeadAttention,
    norm2: LayerNorm,
    ffn: FeedForward,
    norm3: LayerNorm,
}

/// The toy Transformer. Building the paper's base size takes a moment (44 M weights).
pub struct ToyModel {
    pub config: ToyConfig,
    encoder: Vec<EncoderLayer>,
    decoder: Vec<DecoderLayer>,
}

/// The toy model's runs are plain [`AttentionRun`]s.
pub type ToyRun = AttentionRun;

impl ToyModel {
    pub fn new(config: ToyConfig) -> Result<Self> {
        config.validate()?;
        let encoder = (0..config.encoder_layers)
            .map(|i| {
                let name = format!("encoder.{i}");
                Ok(EncoderLayer {
                    self_attn: attention_block(&config, &format!("{name}.self_attn"))?,
                    norm1: LayerNorm::identity(config.d_model, LAYER_NORM_EPS),
                    ffn: feed_forward(&config, &format!("{name}.ffn"))?,
                    norm2: LayerNorm::identity(config.d_model, LAYER_NORM_EPS),
                })
            })
            .collect::<Result<_>>()?;
        let decoder = (0..config.decoder_layers)
            .map(|i| {
                let name = format!("decoder.{i}");
                Ok(DecoderLayer {
                    self_attn: attention_block(&config, &format!("{name}.self_attn"))?,
                    norm1: LayerNorm::identity(config.d_model, LAYER_NORM_EPS),
                    cross_attn: attention_block(&config, &format!("{name}.cross_attn"))?,
                    norm2: LayerNorm::identity(config.d_model, LAYER_NORM_EPS),
                    ffn: feed_forward(&config, &format!("{name}.ffn"))?,
                    norm3: LayerNorm::identity(config.d_model, LAYER_NORM_EPS),
                })
            })
            .collect::<Result<_>>()?;
        Ok(ToyModel { config, encoder, decoder })
    }

    /// Runs a batch and keeps the attention of the place `kind` names.
    ///
    /// `sources` feed the encoder; `targets` feed the decoder and default to the sources (an
    /// untrained model has nothing better to write). `None` and `Padding` show encoder
    /// self-attention, `Causal` decoder self-attention, `Cross` decoder queries over encoder keys.
    pub fn run(&self, sources: &[&str], targets: &[&str], kind: MaskKind, scale: bool) -> Result<ToyRun> {
        if sources.is_empty() {
            return Err(Error::EmptyText);
        }
        if sources.len() > MAX_BATCH {
            return Err(Error::setting(
                "texts",
                format!("{} sentences, more than the batch maximum of {MAX_BATCH}", sources.len()),
            ));
        }
        if !targets.is_empty() && targets.len() != sources.len() {
            return Err(Error::setting(
                "targets",
                format!("{} targets for {} sources: give one per source, or none", targets.len(), sources.len()),
            ));
        }
        let (src_tokens, src_valid) = tokenize_batch(sources)?;
        let (tgt_tokens, tgt_valid) =
            if targets.is_empty() { (src_tokens.clone(), src_valid.clone()) } else { tokenize_batch(targets)? };

        let mut run = AttentionRun::new(kind, scale);
        for b in 0..sources.len() {
            let ts = src_tokens[b].len();
            let padding = Mask::key_padding(ts, &src_valid[b]);
            let encoder_mask = (kind != MaskKind::None).then_some(padding);
            let src = self.embed(&src_tokens[b]); // (Ts, D)
            let encoded = self.encode(src, encoder_mask.as_ref(), scale)?;
            let (queries, keys, query_valid, key_valid, layers, mask) = match kind {
                MaskKind::None | MaskKind::Padding => {
                    (&src_tokens[b], &src_tokens[b], &src_valid[b], &src_valid[b], encoded.layers, encoder_mask)
                }
                MaskKind::Causal | MaskKind::Cross => {
                    let tt = tgt_tokens[b].len();
                    let self_mask = Mask::causal(tt).and(&Mask::key_padding(tt, &tgt_valid[b]))?;
                    let cross_mask = Mask::key_padding(tt, &src_valid[b]);
                    let tgt = self.embed(&tgt_tokens[b]); // (Tt, D)
                    let decoded = self.decode(tgt, &encoded.output, &self_mask, &cross_mask, scale)?;
                    if kind == MaskKind::Causal {
                        (
                            &tgt_tokens[b],
                            &tgt_tokens[b],
                            &tgt_valid[b],
                            &tgt_valid[b],
                            decoded.self_layers,
                            Some(self_mask),
                        )
                    } else {
                        (
                            &tgt_tokens[b],
                            &src_tokens[b],
                            &tgt_valid[b],
                            &src_valid[b],
                            decoded.cross_layers,
                            Some(cross_mask),
                        )
                    }
                }
            };
            run.push_row(RowTokens { queries, keys, query_valid, key_valid }, layers, mask);
        }
        Ok(run)
    }

    /// Every step of one head of one layer of a run: X, Q, K, V, scores, scaled, masked,
    /// weights and the head's output.
    pub fn trace(&self, run: &ToyRun, row: usize, layer: usize, head: usize) -> Result<HeadTrace> {
        run.check(row, layer)?;
        let block = match run.kind {
            MaskKind::None | MaskKind::Padding => &self.encoder[layer].self_attn,
            MaskKind::Causal => &self.decoder[layer].self_attn,
            MaskKind::Cross => &self.decoder[layer].cross_attn,
        };
        run.trace(block, row, layer, head)
    }

    /// Token embeddings, fixed per token string and seed, plus sinusoidal positions (§3.5).
    pub fn embed(&self, tokens: &[String]) -> Array2<f32> {
        let d = self.config.d_model;
        let mut x = Array2::zeros((tokens.len(), d)); // (T, D)
        for (pos, token) in tokens.iter().enumerate() {
            let mut rng = SplitMix64::for_name(self.config.seed, &format!("embed:{token}"));
            for i in 0..d {
                // uniform on [-√3, √3): variance 1, like N(0, 1/d) embeddings times √d_model
                let e = 3f32.sqrt() * rng.next_signed();
                let angle = pos as f32 / 10000f32.powf((i - i % 2) as f32 / d as f32);
                let p = if i % 2 == 0 { angle.sin() } else { angle.cos() };
                x[[pos, i]] = e + p;
            }
        }
        x
    }

    fn encode(&self, mut x: Array2<f32>, mask: Option<&Mask>, scale: bool) -> Result<Encoded> {
        let mut layers = Vec::with_capacity(self.encoder.len());
        for layer in &self.encoder {
            let a = layer.self_attn.forward(x.view(), x.view(), mask, scale)?;
            let x1 = layer.norm1.forward((&x + &a.output).view()); // (Ts, D)
            let f = layer.ffn.forward(x1.view())?;
            let next = layer.norm2.forward((&x1 + &f).view());
            layers.push(LayerAttention { weights: a.weights, x_q: x.clone(), x_kv: x });
            x = next;
        }
        Ok(Encoded { output: x, layers })
    }

    fn decode(
        &self,
        mut y: Array2<f32>,
        memory: &Array2<f32>,
        self_mask: &Mask,
        cross_mask: &Mask,
        scale: bool,
    ) -> Result<Decoded> {
        let mut self_layers = Vec::with_capacity(self.decoder.len());
        let mut cross_layers = Vec::with_capacity(self.decoder.len());
        for layer in &self.decoder {
            let a = layer.self_attn.forward(y.view(), y.view(), Some(self_mask), scale)?;
            let y1 = layer.norm1.forward((&y + &a.output).view()); // (Tt, D)
            let c = layer.cross_attn.forward(y1.view(), memory.view(), Some(cross_mask), scale)?;
            let y2 = layer.norm2.forward((&y1 + &c.output).view());
            let f = layer.ffn.forward(y2.view())?;
            let next = layer.norm3.forward((&y2 + &f).view());
            self_layers.push(LayerAttention { weights: a.weights, x_q: y.clone(), x_kv: y });
            cross_layers.push(LayerAttention { weights: c.weights, x_q: y1, x_kv: memory.clone() });
            y = next;
        }
        Ok(Decoded { self_layers, cross_layers })
    }
}

struct Encoded {
    output: Array2<f32>, // (Ts, D)
    layers: Vec<LayerAttention>,
}

struct Decoded {
    self_layers: Vec<LayerAttention>,
    cross_layers: Vec<LayerAttention>,
}

/// Tokenizes every text and pads the shorter rows with [`PAD`].
fn tokenize_batch(texts: &[&str]) -> Result<(Vec<Vec<String>>, Vec<Vec<bool>>)> {
    let rows = texts.iter().map(|t| split_words(t)).collect::<Result<Vec<_>>>()?;
    let longest = rows.iter().map(Vec::len).max().unwrap_or(0);
    let valid = rows.iter().map(|r| (0..longest).map(|i| i < r.len()).collect()).collect();
    let padded = rows
        .into_iter()
        .map(|mut r| {
            r.resize(longest, PAD.to_string());
            r
        })
        .collect();
    Ok((padded, valid))
}

/// Glorot-uniform weights, as untrained PyTorch-style layers start.
fn glorot(seed: u64, name: &str, d_in: usize, d_out: usize) -> Array2<f32> {
    let mut rng = SplitMix64::for_name(seed, name);
    let limit = (6.0 / (d_in + d_out) as f32).sqrt();
    Array2::from_shape_simple_fn((d_in, d_out), || limit * rng.next_signed())
}

fn linear(cfg: &ToyConfig, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
    Linear::new(name, glorot(cfg.seed, name, d_in, d_out), Some(Array1::zeros(d_out)))
}

fn attention_block(cfg: &ToyConfig, name: &str) -> Result<MultiHeadAttention> {
    let d = cfg.d_model;
    MultiHeadAttention::new(
        linear(cfg, &format!("{name}.w_q"), d, d)?,
        linear(cfg, &format!("{name}.w_k"), d, d)?,
        linear(cfg, &format!("{name}.w_v"), d, d)?,
        linear(cfg, &format!("{name}.w_o"), d, d)?,
        cfg.heads,
    )
}

fn feed_forward(cfg: &ToyConfig, name: &str) -> Result<FeedForward> {
    Ok(FeedForward {
        inner: linear(cfg, &format!("{name}.inner"), cfg.d_model, cfg.d_ff)?,
        outer: linear(cfg, &format!("{name}.outer"), cfg.d_ff, cfg.d_model)?,
    })
}
