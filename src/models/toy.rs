//! An untrained encoder–decoder Transformer as in "Attention Is All You Need" (§3.1), built
//! from a seed so it needs no download.
//!
//! Its weights are random: its heads show how attention is computed and masked, not what a
//! trained model has learnt. Its layers are the post-LN layers of `transformer`, the same
//! computation as BART's; its tokens are words (UAX #29), embedded by their spelling.

use std::sync::Arc;

use ndarray::{Array1, Array2};
use serde::Serialize;

use super::network::{place_mask, Network, NetworkInfo};
use super::transformer::{self, DecoderLayer, DecoderPlaces, EncoderLayer};
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::nn::{Activation, FeedForward, LayerNorm, Linear};
use crate::rng::SplitMix64;
use crate::run::{Batch, Hidden, PlaceInfo, PlaceRun, Run, Settings, Until};
use crate::tokenize::{Token, MAX_TOKENS};

const LAYER_NORM_EPS: f32 = 1e-5;

/// The toy model's shape and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToyConfig {
    pub d_model: usize,
    pub heads: usize,
    pub d_ff: usize,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub seed: u64,
}

impl ToyConfig {
    pub const PRESETS: [&'static str; 2] = ["small", "base"];

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
            other => Err(Error::unknown("preset", other, &Self::PRESETS)),
        }
    }

    pub fn d_k(&self) -> usize {
        self.d_model / self.heads
    }

    pub fn validate(&self) -> Result<()> {
        if !(1..=1024).contains(&self.d_model) {
            return Err(Error::out_of_range("d_model", self.d_model, 1, 1024));
        }
        if self.heads == 0 || !self.d_model.is_multiple_of(self.heads) {
            return Err(Error::HeadsDoNotDivide { d_model: self.d_model, heads: self.heads });
        }
        if !(1..=4096).contains(&self.d_ff) {
            return Err(Error::out_of_range("d_ff", self.d_ff, 1, 4096));
        }
        for (name, n) in [("layers", self.encoder_layers), ("layers", self.decoder_layers)] {
            if !(1..=12).contains(&n) {
                return Err(Error::out_of_range(name, n, 1, 12));
            }
        }
        Ok(())
    }
}

/// The toy Transformer's network. Building the paper's base size takes a moment (44 M weights).
pub struct ToyNet {
    pub config: ToyConfig,
    info: NetworkInfo,
    encoder: Vec<EncoderLayer>,
    decoder: Vec<DecoderLayer>,
}

impl ToyNet {
    pub fn new(config: ToyConfig) -> Result<Self> {
        config.validate()?;
        let norm = || LayerNorm::identity(config.d_model, LAYER_NORM_EPS);
        let encoder = (0..config.encoder_layers)
            .map(|i| {
                let name = format!("encoder.{i}");
                Ok(EncoderLayer {
                    self_attn: attention_block(&config, &format!("{name}.self_attn"))?,
                    self_attn_norm: norm(),
                    ffn: feed_forward(&config, &format!("{name}.ffn"))?,
                    final_norm: norm(),
                })
            })
            .collect::<Result<_>>()?;
        let decoder = (0..config.decoder_layers)
            .map(|i| {
                let name = format!("decoder.{i}");
                Ok(DecoderLayer {
                    self_attn: attention_block(&config, &format!("{name}.self_attn"))?,
                    self_attn_norm: norm(),
                    cross_attn: attention_block(&config, &format!("{name}.cross_attn"))?,
                    cross_attn_norm: norm(),
                    ffn: feed_forward(&config, &format!("{name}.ffn"))?,
                    final_norm: norm(),
                })
            })
            .collect::<Result<_>>()?;
        let places = [
            (Place::EncoderSelf, config.encoder_layers),
            (Place::DecoderSelf, config.decoder_layers),
            (Place::Cross, config.decoder_layers),
        ]
        .into_iter()
        .map(|(place, layers)| PlaceInfo::new(place, place.paper_mask(), layers, config.heads, config.d_k()))
        .collect();
        let info = NetworkInfo {
            architecture: "toy".into(),
            places,
            d_model: config.d_model,
            max_tokens: MAX_TOKENS,
            decoder_start: None,
        };
        Ok(ToyNet { config, info, encoder, decoder })
    }

    /// Token embeddings, fixed per token spelling and seed, plus sinusoidal positions (§3.5).
    pub fn embed(&self, tokens: &[Token]) -> Array2<f32> {
        let d = self.config.d_model;
        let mut x = Array2::zeros((tokens.len(), d)); // (T, D)
        for (pos, token) in tokens.iter().enumerate() {
            let mut rng = SplitMix64::for_name(self.config.seed, &format!("embed:{}", token.piece));
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
}

impl Network for ToyNet {
    fn info(&self) -> &NetworkInfo {
        &self.info
    }

    /// The toy feeds its decoder the target as it is (it has no start token), defaulting to
    /// the source: an untrained model has nothing better to write.
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        let places = &self.info.places;
        let [enc_info, self_info, cross_info] = [&places[0], &places[1], &places[2]];
        let mut encoder = PlaceRun::new(enc_info, settings);
        let mut decoder = PlaceRun::new(self_info, settings);
        let mut cross = PlaceRun::new(cross_info, settings);
        let needs_decoder = settings.keeps(Place::DecoderSelf) || settings.keeps(Place::Cross);
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for (b, src) in batch.sources.iter().enumerate() {
            // 1. encoder self-attention
            let padding = place_mask(encoder.mask, src, src)?;
            let mut enc_row = settings.keeps(Place::EncoderSelf).then(|| encoder.record(src, src));
            // the decoder's cross-attention reads the whole encoder output
            let until = if needs_decoder { Until::Output } else { settings.until() };
            let x = self.embed(&src.tokens);
            let memory = transformer::encode(&self.encoder, x, &padding, settings, enc_row.as_mut(), until)?.output;
            encoder.rows.extend(enc_row);
            // 2. decoder masked self-attention, then cross-attention over the encoder output
            let mut out = Hidden::default();
            match memory {
                Some(memory) if needs_decoder => {
                    let tgt = batch.targets.get(b).unwrap_or(src);
                    let self_mask = place_mask(decoder.mask, tgt, tgt)?;
                    let cross_mask = place_mask(cross.mask, tgt, src)?;
                    let mut self_row = settings.keeps(Place::DecoderSelf).then(|| decoder.record(tgt, tgt));
                    let mut cross_row = settings.keeps(Place::Cross).then(|| cross.record(tgt, src));
                    let memory = std::sync::Arc::new(memory);
                    let places = DecoderPlaces {
                        self_mask: &self_mask,
                        cross_mask: &cross_mask,
                        self_record: self_row.as_mut(),
                        cross_record: cross_row.as_mut(),
                    };
                    let y = self.embed(&tgt.tokens);
                    let stacked = transformer::decode(&self.decoder, y, &memory, places, settings, settings.until())?;
                    out.decoder = stacked.output;
                    out.residuals = stacked.residuals;
                    out.encoder = Some(std::sync::Arc::unwrap_or_clone(memory));
                    decoder.rows.extend(self_row);
                    cross.rows.extend(cross_row);
                }
                memory => out.encoder = memory,
            }
            hidden.push(out);
        }
        let places = [encoder, decoder, cross].into_iter().filter(|p| settings.keeps(p.place)).collect();
        Ok(Run { places, hidden, ..Run::default() })
    }
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

fn attention_block(cfg: &ToyConfig, name: &str) -> Result<Arc<MultiHeadAttention>> {
    let d = cfg.d_model;
    Ok(Arc::new(MultiHeadAttention::new(
        linear(cfg, &format!("{name}.w_q"), d, d)?,
        linear(cfg, &format!("{name}.w_k"), d, d)?,
        linear(cfg, &format!("{name}.w_v"), d, d)?,
        linear(cfg, &format!("{name}.w_o"), d, d)?,
        cfg.heads,
    )?))
}

fn feed_forward(cfg: &ToyConfig, name: &str) -> Result<FeedForward> {
    Ok(FeedForward {
        inner: linear(cfg, &format!("{name}.inner"), cfg.d_model, cfg.d_ff)?,
        outer: linear(cfg, &format!("{name}.outer"), cfg.d_ff, cfg.d_model)?,
        activation: Activation::Relu,
    })
}
