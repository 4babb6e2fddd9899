//! The encoder-only network BERT, RoBERTa, XLM-R, ELECTRA and DistilBERT share: embeddings
//! (word + position + token type 0, normalised; ELECTRA's then widened), then the post-LN
//! encoder layers of `transformer`, recording encoder self-attention with the padding mask.
//! They differ only in names, which their files read, and in where positions start.

use std::sync::Arc;

use ndarray::{Array2, Axis};

use super::head::{OutputHead, Transform};
use super::network::{place_mask, Network, NetworkInfo, Unembed};
use super::transformer::{self, EncoderLayer};
use super::weights::Weights;
use crate::error::{Error, Result};
use crate::nn::{self, Activation, LayerNorm, Linear};
use crate::par;
use crate::run::{Batch, Hidden, PlaceInfo, PlaceRun, Run, Settings};

/// Which row of the position table each token reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Positions {
    /// Token t reads row t (BERT, ELECTRA, DistilBERT).
    FromZero,
    /// RoBERTa's `create_position_ids_from_input_ids`: each non-PAD token reads row pad + 1 +
    /// how many non-PAD tokens precede it, a PAD token row pad.
    AfterPad(u32),
}

impl Positions {
    /// The most tokens a table of `rows` positions gives room for.
    pub fn max_tokens(self, rows: usize) -> usize {
        match self {
            Positions::FromZero => rows,
            Positions::AfterPad(pad) => rows.saturating_sub(pad as usize + 1).max(1),
        }
    }
}

/// `embeddings.*`: tokens of width E, normalised, then widened to D when E is narrower.
pub(crate) struct EncoderEmbeddings {
    pub word: Arc<Array2<f32>>, // (V, E) word_embeddings, shared with a masked-LM head
    pub position: Array2<f32>,  // (P, E) position_embeddings
    pub positions: Positions,
    pub token_type: Option<Array2<f32>>, // (types, E) token_type_embeddings: every token is type 0
    pub norm: LayerNorm,                 // (E,) LayerNorm
    pub project: Option<Linear>,         // (E, D) ELECTRA's embeddings_project, when E ≠ D
}

impl EncoderEmbeddings {
    /// The first layer's input (T, D) for `ids`, refused when longer than the position table.
    fn forward(&self, ids: &[u32]) -> Result<Array2<f32>> {
        let mut x = match self.positions {
            Positions::FromZero => nn::embed_with_positions(&self.word, &self.position, ids, 1.0)?, // (T, E)
            Positions::AfterPad(pad) => {
                let mut count = 0;
                let rows: Vec<u32> = ids
                    .iter()
                    .map(|&id| {
                        if id == pad {
                            pad
                        } else {
                            count += 1;
                            pad + count
                        }
                    })
                    .collect();
                if rows.iter().any(|&p| p as usize >= self.position.nrows()) {
                    let max = self.positions.max_tokens(self.position.nrows());
                    return Err(Error::TooLong { tokens: ids.len(), max });
                }
                let mut x = nn::embed(&self.word, ids)?; // (T, E)
                x += &nn::embed(&self.position, &rows)?;
                x
            }
        };
        if let Some(types) = &self.token_type {
            x += &types.row(0).insert_axis(Axis(0));
        }
        let x = self.norm.forward(x.view());
        match &self.project {
            Some(project) => project.forward(x.view()), // (T, D)
            None => Ok(x),
        }
    }
}

/// Where a masked LM's head keeps its parts, outside the base model's prefix.
pub(crate) struct MaskedLmNames {
    /// The transform's dense layer and layer norm: `cls.predictions.transform.dense`, …
    pub dense: &'static str,
    pub norm: &'static str,
    /// The vocabulary bias, first found of these (`cls.predictions.bias`, …).
    pub bias: &'static [&'static str],
}

/// A masked LM's head, `LayerNorm(act(h W + b)) · Eᵀ + bias` with E the word embeddings
/// (tied, as every one of these checkpoints is), when the files carry its transform; else
/// what is missing.
pub(crate) fn masked_lm_head(
    weights: &Weights,
    names: &MaskedLmNames,
    word: &Arc<Array2<f32>>,
    activation: Activation,
    eps: f32,
) -> Result<std::result::Result<OutputHead, String>> {
    let top = weights.outside();
    let (v, d) = (word.nrows(), word.ncols());
    if !top.has(&format!("{}.weight", names.dense)) {
        return Ok(Err(format!("`{}` (the masked-LM head)", names.dense)));
    }
    let transform =
        Transform { dense: top.linear(names.dense, d, d)?, activation, norm: top.layer_norm(names.norm, d, eps)? };
    let bias = names.bias.iter().find(|b| top.has(b)).map(|b| top.vector(b, v)).transpose()?;
    Ok(Ok(OutputHead { transform: Some(transform), bias, ..OutputHead::plain(Arc::clone(word)) }))
}

/// An encoder-only model: its one place is encoder self-attention.
pub(crate) struct EncoderOnly {
    info: NetworkInfo,
    place: PlaceInfo,
    embeddings: EncoderEmbeddings,
    layers: Vec<EncoderLayer>, // encoder.layer.N, transformer.layer.N
    /// The masked-LM head where the files carry it (post-LN: no final norm).
    unembed: Unembed,
}

impl EncoderOnly {
    /// `architecture` is the `model_type`; rows may have as many tokens as the positions allow.
    pub fn new(
        architecture: &str,
        place: PlaceInfo,
        d_model: usize,
        embeddings: EncoderEmbeddings,
        layers: Vec<EncoderLayer>,
        head: std::result::Result<OutputHead, String>,
    ) -> Self {
        let info = NetworkInfo {
            architecture: architecture.into(),
            places: vec![place.clone()],
            d_model,
            max_tokens: embeddings.positions.max_tokens(embeddings.position.nrows()),
            decoder_start: None,
        };
        EncoderOnly { info, place, embeddings, layers, unembed: Unembed::new(None, head) }
    }
}

impl Network for EncoderOnly {
    fn info(&self) -> &NetworkInfo {
        &self.info
    }

    fn unembed(&self) -> Option<&Unembed> {
        Some(&self.unembed)
    }

    /// Encoder self-attention with the padding mask it was trained with (or a what-if mask).
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        let mut place = PlaceRun::new(&self.place, settings);
        if stacks(batch) && transformer::stacks(&self.layers, settings) {
            return self.forward_stacked(batch, settings, place);
        }
        // the rows of a padded batch are independent: on the threads in rounds, the rest
        // one after another with every thread on each (`par::map_batch`)
        let rows = par::map_batch(&batch.sources, |row| {
            let x = self.embeddings.forward(&row.ids)?; // (T, D)
            let mask = place_mask(place.mask, row, row)?;
            let mut record = place.record(row, row);
            let out = transformer::encode(&self.layers, x, &mask, settings, Some(&mut record), settings.until())?;
            Ok((record, Hidden { encoder: out.output, decoder: None, residuals: out.residuals }))
        });
        let mut hidden = Vec::with_capacity(batch.sources.len());
        for (record, row) in par::all(rows)? {
            place.rows.push(record);
            hidden.push(row);
        }
        Ok(Run { places: vec![place], hidden, ..Run::default() })
    }
}

/// Whether a batch's rows can run stacked: more than one, of one length, none padded (a padded
/// row would be attended over in the products' place of a real one).
fn stacks(batch: &Batch) -> bool {
    let Some(first) = batch.sources.first() else { return false };
    batch.sources.len() > 1
        && batch.sources.iter().all(|row| row.ids.len() == first.ids.len() && row.valid.iter().all(|&v| v))
}

impl EncoderOnly {
    /// The batch's texts through the stack together (`transformer::encode_stacked`): each
    /// row's weights and output with the bits of its own run, the products read once.
    fn forward_stacked(&self, batch: &Batch, settings: &Settings, mut place: PlaceRun) -> Result<Run> {
        let embedded = batch.sources.iter().map(|row| self.embeddings.forward(&row.ids)).collect::<Result<Vec<_>>>()?;
        let views: Vec<_> = embedded.iter().map(|x| x.view()).collect();
        let x = ndarray::concatenate(Axis(0), &views)
            .map_err(|e| Error::shape(format!("stacked rows: {e}"), &[views.len()], &[]))?;
        let texts: Vec<_> = views
            .iter()
            .scan(0, |start, v| {
                *start += v.nrows();
                Some(*start - v.nrows()..*start)
            })
            .collect();
        let masks = batch.sources.iter().map(|row| place_mask(place.mask, row, row)).collect::<Result<Vec<_>>>()?;
        let mut records: Vec<_> = batch.sources.iter().map(|row| place.record(row, row)).collect();
        let outs =
            transformer::encode_stacked(&self.layers, x, &texts, &masks, settings, &mut records, settings.until())?;
        place.rows = records;
        let hidden = outs
            .into_iter()
            .map(|out| Hidden { encoder: out.output, decoder: None, residuals: out.residuals })
            .collect();
        Ok(Run { places: vec![place], hidden, ..Run::default() })
    }
}
