//! GPT-2 (`GPT2Model`): gpt2, distilgpt2, KoGPT2 …, mirroring transformers'
//! `models/gpt2/modeling_gpt2.py`. Pre-LN decoder blocks with causal self-attention. Its
//! `Conv1D` layers store weights as (d_in, d_out), and `c_attn` holds Q, K and V side by side.

use std::sync::Arc;

use ndarray::{s, Array2};
use serde::Deserialize;

use super::hf::{activation, check_sizes};
use super::run::{Batch, Hidden, LayerInputs, PlaceInfo, PlaceRun, RowAttention, Run, Settings};
use super::weights::Weights;
use super::{place_mask, Network};
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::nn::{self, FeedForward, LayerNorm, Linear};

/// `config.json` of a GPT-2 model, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Gpt2Config {
    pub vocab_size: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_positions: usize,
    pub n_inner: Option<usize>,
    pub activation_function: String,
    pub layer_norm_epsilon: f64,
    pub scale_attn_weights: bool,
    pub scale_attn_by_inverse_layer_idx: bool,
    pub eos_token_id: Option<u32>,
}

impl Default for Gpt2Config {
    fn default() -> Self {
        Gpt2Config {
            vocab_size: 50257,
            n_embd: 768,
            n_layer: 12,
            n_head: 12,
            n_positions: 1024,
            n_inner: None,
            activation_function: "gelu_new".into(),
            layer_norm_epsilon: 1e-5,
            scale_attn_weights: true,
            scale_attn_by_inverse_layer_idx: false,
            eos_token_id: Some(50256),
        }
    }
}

struct Block {
    ln_1: LayerNorm,
    attn: MultiHeadAttention, // attn.c_attn split in three + attn.c_proj
    ln_2: LayerNorm,
    mlp: FeedForward, // mlp.c_fc, mlp.c_proj
}

pub struct Gpt2 {
    pub config: Gpt2Config,
    wte: Array2<f32>, // (V, D)
    wpe: Array2<f32>, // (P, D)
    blocks: Vec<Block>,
    ln_f: LayerNorm,
}

impl Gpt2 {
    pub fn load(w: Weights, config: Gpt2Config) -> Result<Self> {
        let c = &config;
        let inner = c.n_inner.unwrap_or(4 * c.n_embd);
        check_sizes(&[
            ("vocab_size", c.vocab_size),
            ("n_embd", c.n_embd),
            ("n_layer", c.n_layer),
            ("n_head", c.n_head),
            ("n_positions", c.n_positions),
            ("n_inner", inner),
        ])?;
        if !c.scale_attn_weights {
            let problem =
                FileProblem::unsupported("scale_attn_weights", false, "headmap reads GPT-2's ÷√d_k scaling only");
            return Err(Error::file("config.json", problem));
        }
        if c.scale_attn_by_inverse_layer_idx {
            let problem = FileProblem::unsupported(
                "scale_attn_by_inverse_layer_idx",
                true,
                "headmap reads GPT-2's ÷√d_k scaling only",
            );
            return Err(Error::file("config.json", problem));
        }
        let w = w.with_prefix_of("wte.weight", &["", "transformer."])?;
        let root = w.root();
        let (d, eps) = (c.n_embd, c.layer_norm_epsilon as f32);
        let act = activation("activation_function", &c.activation_function)?;
        let blocks = (0..c.n_layer)
            .map(|i| {
                let h = root.pp("h").pp(i);
                let qkv = h.pp("attn").conv1d("c_attn", d, 3 * d)?; // (D, 3D)
                let part = |k: usize| {
                    let cols = s![.., k * d..(k + 1) * d];
                    let bias = qkv.bias.as_ref().map(|b| b.slice(s![k * d..(k + 1) * d]).to_owned());
                    Linear::new(&format!("h.{i}.attn.c_attn[{k}]"), qkv.weight.slice(cols).to_owned(), bias)
                };
                Ok(Block {
                    ln_1: h.layer_norm("ln_1", d, eps)?,
                    attn: MultiHeadAttention::new(
                        part(0)?,
                        part(1)?,
                        part(2)?,
                        h.pp("attn").conv1d("c_proj", d, d)?,
                        c.n_head,
                    )?,
                    ln_2: h.layer_norm("ln_2", d, eps)?,
                    mlp: FeedForward {
                        inner: h.pp("mlp").conv1d("c_fc", d, inner)?,
                        outer: h.pp("mlp").conv1d("c_proj", inner, d)?,
                        activation: act,
                    },
                })
            })
            .collect::<Result<_>>()?;
        Ok(Gpt2 {
            wte: root.matrix("wte.weight", [c.vocab_size, d])?,
            wpe: root.matrix("wpe.weight", [c.n_positions, d])?,
            ln_f: root.layer_norm("ln_f", d, eps)?,
            blocks,
            config,
        })
    }
}

impl Network for Gpt2 {
    fn architecture(&self) -> &str {
        "gpt2"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        let c = &self.config;
        vec![PlaceInfo {
            place: Place::DecoderSelf,
            mask: MaskKind::Causal,
            layers: c.n_layer,
            heads: c.n_head,
            d_k: c.n_embd / c.n_head,
        }]
    }

    fn d_model(&self) -> usize {
        self.config.n_embd
    }

    fn max_tokens(&self) -> usize {
        self.config.n_positions
    }

    /// Causal self-attention (PAD keys masked too) as it was trained, or a what-if mask.
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        let info = &self.places()[0];
        let mut place = PlaceRun::new(info, settings);
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for row in &batch.sources {
            let mut x = nn::embed_with_positions(&self.wte, &self.wpe, &row.ids, 1.0)?; // (T, D)
            let mask = place_mask(place.mask, row, row)?;
            let mut record = RowAttention::new(row, row, info.layers, info.heads);
            for block in &self.blocks {
                let h = Arc::new(block.ln_1.forward(x.view())); // (T, D)
                let a = block.attn.forward(h.view(), h.view(), Some(&mask), settings.scale)?;
                x += &a.output;
                let h2 = block.ln_2.forward(x.view());
                x += &block.mlp.forward(h2.view())?;
                record.push_layer(&a.weights, &mask, LayerInputs { x_q: Arc::clone(&h), x_kv: h });
            }
            place.rows.push(record);
            hidden.push(Hidden { encoder: None, decoder: Some(self.ln_f.forward(x.view())) });
        }
        Ok(Run { places: vec![place], hidden })
    }

    fn block(&self, place: Place, layer: usize) -> Option<&MultiHeadAttention> {
        (place == Place::DecoderSelf).then(|| self.blocks.get(layer).map(|b| &b.attn)).flatten()
    }
}
