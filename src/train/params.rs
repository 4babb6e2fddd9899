//! The weights a trainer learns, in GPT-2's layout and names (`GPT2LMHeadModel` without its
//! MLPs: an attention-only model is GPT-2 with the MLP weights zero), one flat array so that
//! Adam and the gradients' sums run over every weight alike.
//!
//! ```text
//! wte.weight            (V, D)   token embeddings (the output head too, when tied)
//! wpe.weight            (P, D)   learnt positions
//! h.{l}.ln_1.weight     (D,)     and .bias
//! h.{l}.attn.c_attn     (D, 3D)  Q | K | V, each split into heads of d_k = D / H columns; .bias (3D,)
//! h.{l}.attn.c_proj     (D, D)   W_O; .bias (D,)
//! ln_f.weight           (D,)     and .bias
//! lm_head.weight        (V, D)   the output head, when not tied to wte
//! ```
//!
//! Untied is the trainer's default: with the head tied, a 2-layer attention-only model at
//! d_model 32 creeps to 0.3 copy accuracy and stays there for thousands of steps (so does
//! transformers' GPT2LMHeadModel on the same batches); untied, it goes through the phase change.
//!
//! Initialised as GPT-2 is (`_init_weights`): weights N(0, 0.02), `c_proj` N(0, 0.02/√(2L)),
//! biases 0, norms 1 — each tensor from its own seeded stream, so a seed fixes every weight.

use ndarray::{ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rng::SplitMix64;

/// The shape of a model to train. The names are GPT-2's `config.json` ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TinyConfig {
    pub vocab_size: usize,
    /// The most positions a sequence has (`n_positions`).
    pub n_positions: usize,
    pub n_embd: usize,
    pub n_head: usize,
    pub n_layer: usize,
    /// Whether the output head is the token embeddings (`wte`) or a matrix of its own.
    pub tie_word_embeddings: bool,
}

impl TinyConfig {
    /// The sizes a trainer takes: up to 4 layers, d_model up to 128, heads that divide it,
    /// a vocabulary of 2–1,024 and 2–256 positions.
    pub fn check(&self) -> Result<()> {
        let bad = |setting: &str, value: usize, range: &str| {
            Err(Error::BadTrainSetting { setting: setting.into(), value: value.to_string(), expected: range.into() })
        };
        match *self {
            TinyConfig { n_layer: l, .. } if !(1..=4).contains(&l) => bad("layers", l, "1 to 4"),
            TinyConfig { n_embd: d, .. } if !(4..=128).contains(&d) => bad("d_model", d, "4 to 128"),
            TinyConfig { n_head: h, n_embd: d, .. } if h == 0 || d % h != 0 => {
                bad("heads", h, &format!("a divisor of d_model {d}"))
            }
            TinyConfig { vocab_size: v, .. } if !(2..=1024).contains(&v) => bad("vocabulary", v, "2 to 1024"),
            TinyConfig { n_positions: p, .. } if !(2..=256).contains(&p) => bad("positions", p, "2 to 256"),
            _ => Ok(()),
        }
    }

    pub fn d_k(&self) -> usize {
        self.n_embd / self.n_head
    }
}

/// Where one tensor lies in the flat array: its offset and its shape (rows, columns; a vector
/// is one row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub offset: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Slot {
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn matrix<'a>(&self, data: &'a [f32]) -> ArrayView2<'a, f32> {
        ArrayView2::from_shape((self.rows, self.cols), &data[self.offset..self.offset + self.len()])
            .expect("a slot lies inside the array it was laid out for")
    }

    pub fn matrix_mut<'a>(&self, data: &'a mut [f32]) -> ArrayViewMut2<'a, f32> {
        ArrayViewMut2::from_shape((self.rows, self.cols), &mut data[self.offset..self.offset + self.len()])
            .expect("a slot lies inside the array it was laid out for")
    }

    pub fn vector<'a>(&self, data: &'a [f32]) -> ArrayView1<'a, f32> {
        ArrayView1::from(&data[self.offset..self.offset + self.len()])
    }

    pub fn vector_mut<'a>(&self, data: &'a mut [f32]) -> ArrayViewMut1<'a, f32> {
        ArrayViewMut1::from(&mut data[self.offset..self.offset + self.len()])
    }
}

/// One block's tensors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSlots {
    pub ln_1_weight: Slot,
    pub ln_1_bias: Slot,
    pub c_attn_weight: Slot, // (D, 3D)
    pub c_attn_bias: Slot,   // (3D,)
    pub c_proj_weight: Slot, // (D, D)
    pub c_proj_bias: Slot,   // (D,)
}

/// Every tensor's slot, and the names GPT-2's checkpoints give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub config: TinyConfig,
    pub wte: Slot, // (V, D)
    pub wpe: Slot, // (P, D)
    pub blocks: Vec<BlockSlots>,
    pub ln_f_weight: Slot,
    pub ln_f_bias: Slot,
    /// The output head (V, D) when it is not `wte`.
    pub lm_head: Option<Slot>,
    /// Every weight, in the flat array's order.
    pub len: usize,
}

impl Layout {
    pub fn new(config: TinyConfig) -> Result<Self> {
        config.check()?;
        let (v, p, d) = (config.vocab_size, config.n_positions, config.n_embd);
        let mut at = 0;
        let mut slot = |rows: usize, cols: usize| {
            let s = Slot { offset: at, rows, cols };
            at += rows * cols;
            s
        };
        let wte = slot(v, d);
        let wpe = slot(p, d);
        let blocks = (0..config.n_layer)
            .map(|_| BlockSlots {
                ln_1_weight: slot(1, d),
                ln_1_bias: slot(1, d),
                c_attn_weight: slot(d, 3 * d),
                c_attn_bias: slot(1, 3 * d),
                c_proj_weight: slot(d, d),
                c_proj_bias: slot(1, d),
            })
            .collect();
        let (ln_f_weight, ln_f_bias) = (slot(1, d), slot(1, d));
        let lm_head = (!config.tie_word_embeddings).then(|| slot(v, d));
        Ok(Layout { config, wte, wpe, blocks, ln_f_weight, ln_f_bias, lm_head, len: at })
    }

    /// Every tensor with its GPT-2 name and whether it is a vector (1-D in the checkpoint).
    pub fn named(&self) -> Vec<(String, Slot, bool)> {
        let mut out = vec![("wte.weight".to_string(), self.wte, false), ("wpe.weight".to_string(), self.wpe, false)];
        for (l, b) in self.blocks.iter().enumerate() {
            out.extend([
                (format!("h.{l}.ln_1.weight"), b.ln_1_weight, true),
                (format!("h.{l}.ln_1.bias"), b.ln_1_bias, true),
                (format!("h.{l}.attn.c_attn.weight"), b.c_attn_weight, false),
                (format!("h.{l}.attn.c_attn.bias"), b.c_attn_bias, true),
                (format!("h.{l}.attn.c_proj.weight"), b.c_proj_weight, false),
                (format!("h.{l}.attn.c_proj.bias"), b.c_proj_bias, true),
            ]);
        }
        out.extend([
            ("ln_f.weight".to_string(), self.ln_f_weight, true),
            ("ln_f.bias".to_string(), self.ln_f_bias, true),
        ]);
        out.extend(self.lm_head.map(|head| ("lm_head.weight".to_string(), head, false)));
        out
    }

    /// The output head's matrix (V, D): `lm_head`, or `wte` when tied.
    pub fn head(&self) -> Slot {
        self.lm_head.unwrap_or(self.wte)
    }

    /// GPT-2's initial weights for `seed`.
    pub fn init(&self, seed: u64) -> Vec<f32> {
        let mut data = vec![0.0; self.len];
        let proj_std = 0.02 / (2.0 * self.config.n_layer as f32).sqrt();
        for (name, slot, vector) in self.named() {
            let values = &mut data[slot.offset..slot.offset + slot.len()];
            if vector {
                // norms' weights 1, every bias 0
                values.fill(if name.ends_with("ln_1.weight") || name == "ln_f.weight" { 1.0 } else { 0.0 });
                continue;
            }
            let std = if name.ends_with("c_proj.weight") { proj_std } else { 0.02 };
            let mut rng = SplitMix64::for_name(seed, &name);
            values.iter_mut().for_each(|v| *v = std * normal(&mut rng));
        }
        data
    }
}

/// A standard normal draw (Box–Muller on two uniform draws in (0, 1]).
pub fn normal(rng: &mut SplitMix64) -> f32 {
    let uniform = |rng: &mut SplitMix64| ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let (u1, u2) = (uniform(rng), uniform(rng));
    ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: TinyConfig =
        TinyConfig { vocab_size: 32, n_positions: 33, n_embd: 32, n_head: 4, n_layer: 2, tie_word_embeddings: false };

    #[test]
    fn the_layout_counts_gpt2s_tensors_without_the_mlps() {
        let layout = Layout::new(SMALL).unwrap();
        // transformers' GPT2LMHeadModel of this size counts 11,872 without its MLPs and 10,848
        // tied; 128 of those are ln_2, the norm before the MLP, which an attention-only block has
        // no use for
        let d = 32;
        let per_block = 2 * d + d * 3 * d + 3 * d + d * d + d;
        assert_eq!(layout.len, 32 * d + 33 * d + 2 * per_block + 2 * d + 32 * d);
        assert_eq!(layout.len, 11_872 - 128);
        assert_eq!(layout.named().len(), 2 + 6 * 2 + 2 + 1);
        assert_eq!(Layout::new(TinyConfig { tie_word_embeddings: true, ..SMALL }).unwrap().len, 10_848 - 128);
        let last = layout.named().last().unwrap().1;
        assert_eq!(last.offset + last.len(), layout.len, "the slots tile the array");
    }

    #[test]
    fn a_seed_fixes_every_weight_and_norms_start_at_one() {
        let layout = Layout::new(SMALL).unwrap();
        let (a, b, c) = (layout.init(1), layout.init(1), layout.init(2));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(layout.blocks[0].ln_1_weight.vector(&a).iter().all(|&g| g == 1.0));
        assert!(layout.blocks[1].c_attn_bias.vector(&a).iter().all(|&b| b == 0.0));
        let wte = layout.wte.vector(&a);
        let std = (wte.iter().map(|w| w * w).sum::<f32>() / wte.len() as f32).sqrt();
        assert!((std - 0.02).abs() < 0.002, "N(0, 0.02): {std}");
    }

    #[test]
    fn sizes_past_the_limits_are_refused_by_name() {
        let err = Layout::new(TinyConfig { n_head: 5, ..SMALL }).unwrap_err();
        assert!(err.to_string().contains("heads"), "{err}");
        assert!(Layout::new(TinyConfig { n_layer: 9, ..SMALL }).is_err());
    }
}
