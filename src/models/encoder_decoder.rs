//! The encoder–decoder network BART, Marian and T5 share: the run over a batch — the encoder
//! over each source, the decoder over its shifted target attending to the encoder's output —
//! and greedy decoding. Their files give the two stacks ([`Stacks`]): BART's and Marian's
//! post-LN layers of `transformer`, T5's pre-norm blocks.

use std::sync::Arc;

use ndarray::Array2;

use super::network::{place_mask, Network, NetworkInfo, Stacked, Unembed};
use super::transformer::DecoderPlaces;
use crate::attention::mask::{Mask, MaskKind};
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::par;
use crate::run::{Batch, Hidden, PlaceInfo, PlaceRun, Row, RowAttention, Run, Settings, Until};

/// An encoder–decoder model's two stacks, embeddings to output, and its head.
pub(crate) trait Stacks: Send + Sync {
    /// The encoder's output (Ts, D) for `src`, its self-attention masked by `mask` and recorded
    /// in `record`; `None` when it runs only `until` its last layer's weights.
    fn encode(
        &self,
        src: &Row,
        mask: &Arc<Mask>,
        settings: &Settings,
        record: Option<&mut RowAttention>,
        until: Until,
    ) -> Result<Stacked>;
    /// The decoder's output (Tt, D) for `tgt` over `memory`, the encoder's output; none when
    /// it runs only `until` its last layer's weights.
    fn decode(
        &self,
        tgt: &Row,
        memory: &Arc<Array2<f32>>,
        places: DecoderPlaces,
        settings: &Settings,
        until: Until,
    ) -> Result<Stacked>;
    /// What reads the decoder's output: its final norm (T5) and the head.
    fn unembed(&self) -> &Unembed;
}

/// How the model writes its own target, as transformers' `generate` reads the config.
#[derive(Debug, Clone, Default)]
pub(crate) struct Generation {
    pub eos: Option<u32>,
    /// The token the last step is forced to (`forced_eos_token_id`).
    pub forced_eos: Option<u32>,
    /// Tokens never chosen: the single-token `bad_words_ids` (Marian's PAD).
    pub banned: Vec<u32>,
}

/// An encoder–decoder model: encoder self-attention, decoder masked self-attention and
/// cross-attention, in the order of the seeds' table.
pub(crate) struct EncoderDecoder<S> {
    info: NetworkInfo,
    places: [PlaceInfo; 3],
    stacks: S,
    generation: Generation,
}

impl<S: Stacks> EncoderDecoder<S> {
    /// `places` are the encoder's, the decoder's and cross-attention's; the decoder starts
    /// from `decoder_start`.
    pub fn new(
        architecture: &str,
        places: [PlaceInfo; 3],
        d_model: usize,
        max_tokens: usize,
        decoder_start: u32,
        stacks: S,
        generation: Generation,
    ) -> Self {
        let info = NetworkInfo {
            architecture: architecture.into(),
            places: places.to_vec(),
            d_model,
            max_tokens,
            decoder_start: Some(decoder_start),
        };
        EncoderDecoder { info, places, stacks, generation }
    }
}

impl<S: Stacks> Network for EncoderDecoder<S> {
    fn info(&self) -> &NetworkInfo {
        &self.info
    }

    fn unembed(&self) -> Option<&Unembed> {
        Some(self.stacks.unembed())
    }

    /// Teacher forcing: `batch.sources` feed the encoder, `batch.targets` (already shifted
    /// right, start token first) the decoder.
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        if batch.targets.len() != batch.sources.len() {
            return Err(Error::TargetsMismatch { targets: batch.targets.len(), texts: batch.sources.len() });
        }
        let [mut encoder, mut decoder, mut cross] = self.places.clone().map(|info| PlaceRun::new(&info, settings));
        let needs_decoder = settings.keeps(Place::DecoderSelf) || settings.keeps(Place::Cross);
        // the decoder's cross-attention reads the whole encoder output
        let encoder_until = if needs_decoder { Until::Output } else { settings.until() };
        // the rows of a padded batch are independent: on the threads when there are some
        let pairs: Vec<_> = batch.sources.iter().zip(&batch.targets).collect();
        let rows = par::map(&pairs, |&(src, tgt)| {
            // 1. encoder self-attention, PAD keys masked
            let padding = place_mask(encoder.mask, src, src)?;
            let mut enc_row = settings.keeps(Place::EncoderSelf).then(|| encoder.record(src, src));
            let memory = self.stacks.encode(src, &padding, settings, enc_row.as_mut(), encoder_until)?.output;
            let memory = Arc::new(memory.unwrap_or_default());
            // 2. decoder: masked self-attention, then cross-attention over the encoder output
            let mut out = Hidden::default();
            let (mut self_row, mut cross_row) = (None, None);
            if needs_decoder {
                let causal = place_mask(decoder.mask, tgt, tgt)?;
                let source_padding = place_mask(cross.mask, tgt, src)?;
                self_row = settings.keeps(Place::DecoderSelf).then(|| decoder.record(tgt, tgt));
                cross_row = settings.keeps(Place::Cross).then(|| cross.record(tgt, src));
                let places = DecoderPlaces {
                    self_mask: &causal,
                    cross_mask: &source_padding,
                    self_record: self_row.as_mut(),
                    cross_record: cross_row.as_mut(),
                };
                let stacked = self.stacks.decode(tgt, &memory, places, settings, settings.until())?;
                out.decoder = stacked.output;
                out.residuals = stacked.residuals;
            }
            out.encoder = (encoder_until == Until::Output).then(|| Arc::unwrap_or_clone(memory));
            Ok(([enc_row, self_row, cross_row], out))
        });
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for ([enc_row, self_row, cross_row], out) in par::all(rows)? {
            encoder.rows.extend(enc_row);
            decoder.rows.extend(self_row);
            cross.rows.extend(cross_row);
            hidden.push(out);
        }
        let places = [encoder, decoder, cross].into_iter().filter(|p| settings.keeps(p.place)).collect();
        Ok(Run { places, hidden, ..Run::default() })
    }

    /// Greedy decoding, as transformers' `generate(num_beams=1, do_sample=False)`: from the
    /// decoder start token, the most likely next token each step, until `eos_token_id` or
    /// `max_new_tokens` (the last forced to `forced_eos_token_id` when the config names one),
    /// never a banned token.
    fn greedy(&self, source: &Row, max_new_tokens: usize) -> Result<Vec<u32>> {
        let Generation { eos, forced_eos, banned } = &self.generation;
        let padding = Arc::new(MaskKind::Padding.build(&source.valid, &source.valid)?);
        let settings = Settings::trained();
        let head = self.stacks.unembed().head(&self.info.architecture)?;
        let memory = self.stacks.encode(source, &padding, &settings, None, Until::Output)?.output;
        let memory = Arc::new(memory.unwrap_or_default());
        let mut ids = vec![self.info.decoder_start.unwrap_or(0)];
        for step in 0..max_new_tokens {
            let tgt = Row { tokens: Vec::new(), valid: vec![true; ids.len()], ids: ids.clone() };
            let causal = Arc::new(MaskKind::Causal.build(&tgt.valid, &tgt.valid)?);
            let cross = Arc::new(MaskKind::Cross.build(&tgt.valid, &source.valid)?);
            let places =
                DecoderPlaces { self_mask: &causal, cross_mask: &cross, self_record: None, cross_record: None };
            // run to its output, the decoder always gives one
            let Some(y) = self.stacks.decode(&tgt, &memory, places, &settings, Until::Output)?.output else { break };
            let mut logits = head.logits_one(y.row(y.nrows() - 1))?; // (V,)
            for &b in banned {
                if let Some(l) = logits.get_mut(b as usize) {
                    *l = f32::NEG_INFINITY;
                }
            }
            let next = match forced_eos {
                Some(forced) if step + 1 == max_new_tokens => *forced,
                _ => {
                    let best = logits
                        .iter()
                        .enumerate()
                        .fold((0, f32::NEG_INFINITY), |b, (i, &l)| if l > b.1 { (i, l) } else { b });
                    best.0 as u32
                }
            };
            ids.push(next);
            if Some(next) == *eos {
                break;
            }
        }
        Ok(ids)
    }
}
