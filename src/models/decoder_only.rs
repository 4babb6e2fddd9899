//! The decoder-only network GPT-2, GPT-Neo, GPT-NeoX and the Llama-style families share: token
//! embeddings (plus learnt positions in GPT-2 and GPT-Neo; the others turn Q and K instead),
//! a stack of pre-norm blocks (`pre_norm`), and each row's causal mask — narrowed to a window
//! in the layers that have one. Each family's file reads its config and weights into one.

use std::sync::Arc;

use ndarray::{Array2, Zip};

use super::decoding::{DecoderState, Step};
use super::head::OutputHead;
use super::network::{place_mask, Network, NetworkInfo, Unembed};
use super::pre_norm::PreNormStack;
use crate::attention::mask::{Mask, MaskKind};
use crate::error::Result;
use crate::nn;
use crate::par;
use crate::run::{Batch, Hidden, PlaceInfo, PlaceRun, Row, Run, Settings};

/// What a query that may see no key gets in a windowed layer — a PAD query at the end of a
/// right-padded row whose window holds only PAD keys — as each family's transformers code
/// computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmptyRows {
    /// One additive mask (Llama-style sliding windows): every score becomes the same minimum,
    /// so the weight spreads evenly over every key.
    EveryKey,
    /// Two additive masks (GPT-Neo's local layers): keys both hide fall to −∞, so the weight
    /// spreads over the keys exactly one of them hides.
    OnceMasked,
}

/// Token embeddings, plus learnt positions where the model has them.
pub(crate) struct TokenEmbeddings {
    /// `wte`, `embed_in`, `embed_tokens`: (V, D), shared with a tied output head.
    pub tokens: Arc<Array2<f32>>,
    /// GPT-2's and GPT-Neo's learnt positions `wpe`, (P, D); none in the rotary families.
    pub positions: Option<Array2<f32>>,
}

impl TokenEmbeddings {
    /// A row's input (T, D), refused when longer than the position table.
    fn forward(&self, ids: &[u32]) -> Result<Array2<f32>> {
        self.forward_at(ids, 0)
    }

    /// Tokens at positions `first..`: a step after the tokens a cache holds.
    fn forward_at(&self, ids: &[u32], first: usize) -> Result<Array2<f32>> {
        match &self.positions {
            Some(positions) => nn::embed_at(&self.tokens, positions, ids, 1.0, first),
            None => nn::embed(&self.tokens, ids),
        }
    }
}

/// A decoder-only model: its one place is the decoder's causal self-attention.
pub(crate) struct DecoderOnly {
    info: NetworkInfo,
    place: PlaceInfo,
    embeddings: TokenEmbeddings,
    stack: PreNormStack,
    empty_rows: EmptyRows,
    unembed: Unembed,
}

impl DecoderOnly {
    /// `architecture` is the `model_type`; rows may have up to `max_tokens` tokens; `head` is
    /// the output head, or what the files lack for one.
    pub fn new(
        architecture: &str,
        place: PlaceInfo,
        (d_model, max_tokens): (usize, usize),
        embeddings: TokenEmbeddings,
        stack: PreNormStack,
        empty_rows: EmptyRows,
        head: std::result::Result<OutputHead, String>,
    ) -> Self {
        let places = vec![place.clone()];
        let info = NetworkInfo { architecture: architecture.into(), places, d_model, max_tokens, decoder_start: None };
        let unembed = Unembed::new(Some(stack.final_norm.clone()), head);
        DecoderOnly { info, place, embeddings, stack, empty_rows, unembed }
    }
}

impl Network for DecoderOnly {
    fn info(&self) -> &NetworkInfo {
        &self.info
    }

    fn unembed(&self) -> Option<&Unembed> {
        Some(&self.unembed)
    }

    fn start_decoding(&self, _source: Option<&Row>, _settings: &Settings) -> Result<DecoderState> {
        Ok(DecoderState { caches: self.stack.caches(None)?, source_valid: Vec::new() })
    }

    fn decode_step(&self, state: &mut DecoderState, ids: &[u32], settings: &Settings) -> Result<Step> {
        let x = self.embeddings.forward_at(ids, state.len())?; // (n, D)
        self.stack.step(x, &mut state.caches, &self.place.windows, None, settings)
    }

    /// Causal self-attention (PAD keys masked too, windowed where the model windows it) as it
    /// was trained, or a what-if mask (the windows stay).
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        let mut place = PlaceRun::new(&self.place, settings);
        // the rows of a padded batch are independent: on the threads in rounds, the rest
        // one after another with every thread on each (`par::map_batch`)
        let rows = par::map_batch(&batch.sources, |row| {
            let x = self.embeddings.forward(&row.ids)?; // (T, D)
            let masks = layer_masks(&self.place, place.mask, row, self.empty_rows)?;
            let mut record = place.record(row, row);
            let out = self.stack.run(x, &masks, settings, Some(&mut record), None, settings.until())?;
            Ok((record, Hidden { encoder: None, decoder: out.output, residuals: out.residuals }))
        });
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for (record, row) in par::all(rows)? {
            place.rows.push(record);
            hidden.push(row);
        }
        Ok(Run { places: vec![place], hidden, ..Run::default() })
    }
}

/// The masks of one row in a decoder-only stack: `place`'s mask, narrowed to a window in the
/// layers that have one (`info.windows`), one `Arc` per distinct window.
pub(crate) fn layer_masks(info: &PlaceInfo, mask: MaskKind, row: &Row, empty: EmptyRows) -> Result<Vec<Arc<Mask>>> {
    let base = place_mask(mask, row, row)?;
    let t = row.ids.len();
    let mut windowed: Vec<(usize, Arc<Mask>)> = Vec::new();
    (0..info.layers)
        .map(|layer| match info.windows.get(layer).copied().flatten() {
            None => Ok(Arc::clone(&base)),
            Some(w) => {
                if let Some((_, m)) = windowed.iter().find(|(size, _)| *size == w) {
                    return Ok(Arc::clone(m));
                }
                let layer = Mask::causal(t).and(&Mask::window(t, t, w))?;
                let narrowed = base.and(&layer)?;
                let fallback = match empty {
                    EmptyRows::EveryKey => Array2::from_elem((t, t), true),
                    EmptyRows::OnceMasked => {
                        Zip::from(base.allowed()).and(layer.allowed()).map_collect(|&b, &l| b != l)
                    }
                };
                let m = Arc::new(narrowed.with_fallback(fallback)?);
                windowed.push((w, Arc::clone(&m)));
                Ok(m)
            }
        })
        .collect()
}
