//! Encoder–decoder models: BART (`BartModel`) and Marian (`MarianMTModel`, e.g. opus-mt-ko-en),
//! mirroring transformers' `models/bart/modeling_bart.py` and `models/marian/modeling_marian.py`.
//! All three places of the paper's table on a real model: encoder self-attention, decoder
//! masked self-attention and cross-attention. Post-LN layers in both.
//!
//! They differ in their embeddings: BART learns positions (offset by 2) and normalises the
//! embeddings; Marian scales tokens by √d_model and adds fixed sinusoids, sines in the first
//! half of each vector and cosines in the second.

use ndarray::{s, Array2};
use serde::Deserialize;

use super::layers::{self, Activation};
use super::run::{AttentionRun, LayerAttention, Row, RowTokens};
use super::weights::Weights;
use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::MultiHeadAttention;
use crate::error::{Error, Result};
use crate::nn::{LayerNorm, Linear};

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

struct EncoderLayer {
    self_attn: MultiHeadAttention,
    self_attn_layer_norm: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    final_layer_norm: LayerNorm,
}

struct DecoderLayer {
    self_attn: MultiHeadAttention,
    self_attn_layer_norm: LayerNorm,
    encoder_attn: MultiHeadAttention,
    encoder_attn_layer_norm: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    final_layer_norm: LayerNorm,
}

/// Token and position embeddings of one side.
struct Embeddings {
    tokens: Array2<f32>,     // (V, D)
    positions: Array2<f32>,  // (P, D), already offset for BART
    norm: Option<LayerNorm>, // BART's layernorm_embedding
    scale: f32,
}

impl Embeddings {
    fn forward(&self, ids: &[u32]) -> Result<Array2<f32>> {
        let x = layers::embed_with_positions(&self.tokens, &self.positions, ids, self.scale)?; // (T, D)
        Ok(match &self.norm {
            Some(norm) => norm.forward(x.view()),
            None => x,
        })
    }
}

/// What one encoder–decoder run gives: the three places, and the hidden states.
pub struct Seq2SeqRun {
    pub encoder: AttentionRun,
    pub decoder: AttentionRun,
    pub cross: AttentionRun,
    pub encoder_hidden: Vec<Array2<f32>>,
    pub decoder_hidden: Vec<Array2<f32>>,
}

pub struct Bart {
    pub config: BartConfig,
    lm_head: Array2<f32>, // (V, D): tied to the decoder's token embeddings unless lm_head.weight exists
    final_logits_bias: Option<ndarray::Array1<f32>>, // (V,)
    encoder_embeddings: Embeddings,
    decoder_embeddings: Embeddings,
    encoder: Vec<EncoderLayer>,
    decoder: Vec<DecoderLayer>,
    activation: Activation,
}

impl Bart {
    pub fn load(w: Weights, config: BartConfig) -> Result<Self> {
        if config.normalize_before || config.add_final_layer_norm {
            return Err(Error::file(
                "config.json",
                "pre-LN variants (normalize_before, add_final_layer_norm: mBART) are not supported",
            ));
        }
        let w = w.with_prefix_of("encoder.layers.0.self_attn.q_proj.weight", &["", "model."])?;
        let d = config.d_model;
        let marian = config.model_type == "marian";
        let attn = |p: &str, heads: usize| {
            layers::attention(
                &w,
                [&format!("{p}.q_proj"), &format!("{p}.k_proj"), &format!("{p}.v_proj"), &format!("{p}.out_proj")],
                d,
                heads,
            )
        };
        let norm = |p: &str| layers::layer_norm(&w, p, d, LAYER_NORM_EPS);
        let encoder = (0..config.encoder_layers)
            .map(|i| {
                let p = format!("encoder.layers.{i}");
                Ok(EncoderLayer {
                    self_attn: attn(&format!("{p}.self_attn"), config.encoder_attention_heads)?,
                    self_attn_layer_norm: norm(&format!("{p}.self_attn_layer_norm"))?,
                    fc1: layers::linear(&w, &format!("{p}.fc1"), d, config.encoder_ffn_dim)?,
                    fc2: layers::linear(&w, &format!("{p}.fc2"), config.encoder_ffn_dim, d)?,
                    final_layer_norm: norm(&format!("{p}.final_layer_norm"))?,
                })
            })
            .collect::<Result<_>>()?;
        let decoder = (0..config.decoder_layers)
            .map(|i| {
                let p = format!("decoder.layers.{i}");
                Ok(DecoderLayer {
                    self_attn: attn(&format!("{p}.self_attn"), config.decoder_attention_heads)?,
                    self_attn_layer_norm: norm(&format!("{p}.self_attn_layer_norm"))?,
                    encoder_attn: attn(&format!("{p}.encoder_attn"), config.decoder_attention_heads)?,
                    encoder_attn_layer_norm: norm(&format!("{p}.encoder_attn_layer_norm"))?,
                    fc1: layers::linear(&w, &format!("{p}.fc1"), d, config.decoder_ffn_dim)?,
                    fc2: layers::linear(&w, &format!("{p}.fc2"), config.decoder_ffn_dim, d)?,
                    final_layer_norm: norm(&format!("{p}.final_layer_norm"))?,
                })
            })
            .collect::<Result<_>>()?;
        let scale = if config.scale_embedding { (d as f32).sqrt() } else { 1.0 };
        let side = |name: &str, vocab: usize| -> Result<Embeddings> {
            let tokens_name = w.first_of(&[&format!("{name}.embed_tokens.weight"), "shared.weight"])?;
            let tokens = w.matrix(&tokens_name, [vocab, d])?;
            let max = config.max_position_embeddings;
            let positions_name = format!("{name}.embed_positions.weight");
            let (positions, norm) = if marian {
                let positions = if w.has(&positions_name) {
                    w.matrix(&positions_name, [max, d])?
                } else {
                    marian_sinusoids(max, d)
                };
                (positions, None)
            } else {
                // BART's learned positions start at row 2
                let table = w.matrix(&positions_name, [max + 2, d])?;
                (table.slice(s![2.., ..]).to_owned(), Some(norm(&format!("{name}.layernorm_embedding"))?))
            };
            Ok(Embeddings { tokens, positions, norm, scale })
        };
        let decoder_vocab = config.decoder_vocab_size.unwrap_or(config.vocab_size);
        let decoder_embeddings = side("decoder", decoder_vocab)?;
        let lm_head = match w.root_matrix("lm_head.weight", [decoder_vocab, d]) {
            Some(head) => head?,
            None => decoder_embeddings.tokens.clone(),
        };
        let final_logits_bias = match w.root_matrix("final_logits_bias", [1, decoder_vocab]) {
            Some(bias) => Some(bias?.row(0).to_owned()),
            None => None,
        };
        Ok(Bart {
            encoder_embeddings: side("encoder", config.vocab_size)?,
            decoder_embeddings,
            lm_head,
            final_logits_bias,
            encoder,
            decoder,
            activation: Activation::parse(&config.activation_function)?,
            config,
        })
    }

    /// Teacher forcing: `sources` feed the encoder, `targets` (already shifted right, start
    /// token first) the decoder. Row b of one pairs with row b of the other.
    pub fn forward(&self, sources: &[Row], targets: &[Row]) -> Result<Seq2SeqRun> {
        if sources.len() != targets.len() {
            return Err(Error::setting("targets", format!("{} targets for {} sources", targets.len(), sources.len())));
        }
        let mut out = Seq2SeqRun {
            encoder: AttentionRun::new(MaskKind::Padding, true),
            decoder: AttentionRun::new(MaskKind::Causal, true),
            cross: AttentionRun::new(MaskKind::Cross, true),
            encoder_hidden: Vec::new(),
            decoder_hidden: Vec::new(),
        };
        for (src, tgt) in sources.iter().zip(targets) {
            // 1. encoder self-attention, PAD keys masked
            let padding = Mask::key_padding(src.ids.len(), &src.valid);
            let (x, enc_layers) = self.encode(src, &padding)?; // (Ts, D)
                                                               // 2. decoder: masked self-attention, then cross-attention over the encoder output
            let (y, self_layers, cross_layers, causal, source_padding) = self.decode(tgt, &x, &src.valid)?;
            let same = |r: &'_ Row| (r.labels.clone(), r.valid.clone());
            let ((sl, sv), (tl, tv)) = (same(src), same(tgt));
            out.encoder.push_row(
                RowTokens { queries: &sl, keys: &sl, query_valid: &sv, key_valid: &sv },
                enc_layers,
                Some(padding),
            );
            out.decoder.push_row(
                RowTokens { queries: &tl, keys: &tl, query_valid: &tv, key_valid: &tv },
                self_layers,
                Some(causal),
            );
            out.cross.push_row(
                RowTokens { queries: &tl, keys: &sl, query_valid: &tv, key_valid: &sv },
                cross_layers,
                Some(source_padding),
            );
            out.encoder_hidden.push(x);
            out.decoder_hidden.push(y);
        }
        Ok(out)
    }

    fn encode(&self, src: &Row, padding: &Mask) -> Result<(Array2<f32>, Vec<LayerAttention>)> {
        let mut x = self.encoder_embeddings.forward(&src.ids)?; // (Ts, D)
        let mut layers_out = Vec::with_capacity(self.encoder.len());
        for layer in &self.encoder {
            let a = layer.self_attn.forward(x.view(), x.view(), Some(padding), true)?;
            let x1 = layer.self_attn_layer_norm.forward((&x + &a.output).view());
            let f = layers::feed_forward(x1.view(), &layer.fc1, &layer.fc2, self.activation)?;
            let next = layer.final_layer_norm.forward((&x1 + &f).view());
            layers_out.push(LayerAttention { weights: a.weights, x_q: x.clone(), x_kv: x });
            x = next;
        }
        Ok((x, layers_out))
    }

    /// The decoder over `tgt`, attending to the encoder output `memory`: its last hidden
    /// states, both attentions per layer, and their masks.
    #[allow(clippy::type_complexity)]
    fn decode(
        &self,
        tgt: &Row,
        memory: &Array2<f32>,
        source_valid: &[bool],
    ) -> Result<(Array2<f32>, Vec<LayerAttention>, Vec<LayerAttention>, Mask, Mask)> {
        let tt = tgt.ids.len();
        let causal = Mask::causal(tt).and(&Mask::key_padding(tt, &tgt.valid))?;
        let source_padding = Mask::key_padding(tt, source_valid);
        let mut y = self.decoder_embeddings.forward(&tgt.ids)?; // (Tt, D)
        let (mut self_layers, mut cross_layers) = (Vec::new(), Vec::new());
        for layer in &self.decoder {
            let a = layer.self_attn.forward(y.view(), y.view(), Some(&causal), true)?;
            let y1 = layer.self_attn_layer_norm.forward((&y + &a.output).view()); // (Tt, D)
            let c = layer.encoder_attn.forward(y1.view(), memory.view(), Some(&source_padding), true)?;
            let y2 = layer.encoder_attn_layer_norm.forward((&y1 + &c.output).view());
            let f = layers::feed_forward(y2.view(), &layer.fc1, &layer.fc2, self.activation)?;
            let next = layer.final_layer_norm.forward((&y2 + &f).view());
            self_layers.push(LayerAttention { weights: a.weights, x_q: y.clone(), x_kv: y });
            cross_layers.push(LayerAttention { weights: c.weights, x_q: y1, x_kv: memory.clone() });
            y = next;
        }
        Ok((y, self_layers, cross_layers, causal, source_padding))
    }

    /// Greedy decoding, as transformers' `generate(num_beams=1, do_sample=False)`: from the
    /// decoder start token, the most likely next token each step, until `eos_token_id` or
    /// `max_new_tokens` (the last forced to `forced_eos_token_id` when the config names one).
    /// Tokens in single-token `bad_words_ids` (Marian's PAD) are never chosen.
    pub fn greedy(&self, source: &Row, max_new_tokens: usize) -> Result<Vec<u32>> {
        let start = self.config.decoder_start_token_id.or(self.config.pad_token_id).unwrap_or(0);
        let eos = self.config.eos_token_id;
        let banned: Vec<u32> =
            self.config.bad_words_ids.iter().flatten().filter(|w| w.len() == 1).map(|w| w[0]).collect();
        let (memory, _) = self.encode(source, &Mask::key_padding(source.ids.len(), &source.valid))?;
        let mut ids = vec![start];
        for step in 0..max_new_tokens {
            let row = Row { labels: vec![String::new(); ids.len()], valid: vec![true; ids.len()], ids: ids.clone() };
            let (y, ..) = self.decode(&row, &memory, &source.valid)?;
            let last = y.row(y.nrows() - 1); // (D,)
            let mut logits = self.lm_head.dot(&last); // (V,)
            if let Some(bias) = &self.final_logits_bias {
                logits += bias;
            }
            for &b in &banned {
                if let Some(l) = logits.get_mut(b as usize) {
                    *l = f32::NEG_INFINITY;
                }
            }
            let next = match self.config.forced_eos_token_id {
                Some(forced) if step + 1 == max_new_tokens => forced,
                _ => {
                    logits
                        .iter()
                        .enumerate()
                        .fold((0, f32::NEG_INFINITY), |best, (i, &l)| if l > best.1 { (i, l) } else { best })
                        .0 as u32
                }
            };
            ids.push(next);
            if Some(next) == eos {
                break;
            }
        }
        Ok(ids)
    }

    /// The attention block behind `kind` at `layer`.
    pub fn block(&self, kind: MaskKind, layer: usize) -> Option<&MultiHeadAttention> {
        match kind {
            MaskKind::None | MaskKind::Padding => self.encoder.get(layer).map(|l| &l.self_attn),
            MaskKind::Causal => self.decoder.get(layer).map(|l| &l.self_attn),
            MaskKind::Cross => self.decoder.get(layer).map(|l| &l.encoder_attn),
        }
    }

    pub fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }
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
