//! The encoder–decoder network BART, Marian and T5 share: the run over a batch — the encoder
//! over each source, the decoder over its shifted target attending to the encoder's output —
//! and greedy decoding. Their files give the two stacks ([`Stacks`]): BART's and Marian's
//! post-LN layers of `transformer`, T5's pre-norm blocks.

use std::sync::Arc;

use ndarray::Array2;

use super::decoding::{DecoderState, Generation, LayerCache, Step};
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
    /// The decoder's caches for a decoding over `memory` (Ts, D), the encoder's output.
    fn decoder_caches(&self, memory: &Array2<f32>) -> Result<Vec<LayerCache>>;
    /// One decoding step of the decoder's new `ids` at the positions after those `caches`
    /// hold, cross-attention masked by `cross_mask` (n, Ts).
    fn decode_step(
        &self,
        ids: &[u32],
        caches: &mut [LayerCache],
        cross_mask: &Mask,
        settings: &Settings,
    ) -> Result<Step>;
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

    fn generation(&self) -> Generation {
        self.generation.clone()
    }

    /// The encoder runs once over `source`; the decoder then runs step by step over its caches.
    fn start_decoding(&self, source: Option<&Row>, settings: &Settings) -> Result<DecoderState> {
        let source = source.ok_or(Error::EmptyText)?;
        let padding = place_mask(MaskKind::Padding, source, source)?;
        let memory = self.stacks.encode(source, &padding, settings, None, Until::Output)?.output.unwrap_or_default();
        Ok(DecoderState { caches: self.stacks.decoder_caches(&memory)?, source_valid: source.valid.clone() })
    }

    fn decode_step(&self, state: &mut DecoderState, ids: &[u32], settings: &Settings) -> Result<Step> {
        let cross_mask = Mask::key_padding(ids.len(), &state.source_valid);
        self.stacks.decode_step(ids, &mut state.caches, &cross_mask, settings)
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
        // the rows of a padded batch are independent: on the threads in rounds, the rest
        // one after another with every thread on each (`par::map_batch`)
        let pairs: Vec<_> = batch.sources.iter().zip(&batch.targets).collect();
        let rows = par::map_batch(&pairs, |&(src, tgt)| {
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
}
