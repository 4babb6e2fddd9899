//! The induction probe, as TransformerLens's tutorials build it: a start token, then r — random
//! ordinary tokens drawn with a fixed seed — then r again. On the second r a token's earlier
//! copy is followed by the token that comes next, so a head that looks there (an induction
//! head, Olsson et al. 2022) scores high on [`Score::Induction`] over the second half; random
//! tokens leave a model nothing else to go by.

use ndarray::Array2;

use super::{scores, Score, ScoreOptions};
use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::models::Model;
use crate::rng::SplitMix64;
use crate::run::{Batch, Row, Run, Settings};
use crate::tokenize::{Token, TokenKind};

/// The length of r unless asked otherwise (the tutorials' 50).
pub const PROBE_LENGTH: usize = 50;

/// What the probe ran and found.
#[derive(Debug)]
pub struct Probe {
    /// The run of the sequence: one row, the probed place kept.
    pub run: Run,
    pub place: Place,
    /// The ids run: the start token (if any), r, r.
    pub ids: Vec<u32>,
    /// The length of r.
    pub length: usize,
    /// Where the second r starts.
    pub second: usize,
    /// Whether the place is causal; an encoder's heads see the second r from the first one's
    /// side too, and their scores say less.
    pub causal: bool,
    /// [`Score::Induction`] of every layer and head over the second r, (L, H).
    pub scores: Array2<f32>,
}

impl Probe {
    /// The head with the highest induction score: (layer, head, score).
    pub fn best(&self) -> (usize, usize, f32) {
        self.scores.indexed_iter().map(|((l, h), &s)| (l, h, s)).fold((0, 0, f32::NEG_INFINITY), |best, x| {
            if x.2 > best.2 {
                x
            } else {
                best
            }
        })
    }
}

/// Runs the induction probe of `length` random tokens (seed `seed`) through `model` at `place`
/// (default: the model's causal place, else its encoder).
pub fn induction_probe(model: &Model, place: Option<Place>, length: usize, seed: u64) -> Result<Probe> {
    let info = model.info();
    let tokenizer = model.tokenizer();
    let vocabulary =
        tokenizer.vocabulary().ok_or_else(|| Error::NoVocabulary { architecture: info.architecture.clone() })?;
    let at = match place {
        Some(p) => info.place(p)?,
        // a model without places has no causal one: the error names it
        None => match info.places.iter().find(|p| p.mask == MaskKind::Causal).or(info.places.first()) {
            Some(p) => p,
            None => info.place(Place::DecoderSelf)?,
        },
    };
    let causal = at.mask == MaskKind::Causal;
    // an encoder–decoder has a causal place; its others read another sentence or both ways
    if !causal && info.encoder_decoder {
        return Err(Error::ProbeNeedsCausal { place: at.place.name().to_string() });
    }
    let start = match (info.encoder_decoder, model.decoder_start()) {
        (true, Some(id)) => Some(id),
        // the token the tokenizer starts a text with ([CLS], <s>, <bos>), else the first special one
        _ => tokenizer
            .encode("a")
            .ok()
            .and_then(|e| e.tokens.first().filter(|t| t.kind == TokenKind::Special).map(|_| e.ids[0]))
            .or(vocabulary.special.first().copied()),
    };
    let lead = usize::from(start.is_some());
    let longest = info.max_tokens.saturating_sub(lead) / 2;
    if length < 2 || length > longest {
        return Err(Error::out_of_range("probe length", length, 2, longest.max(2)));
    }
    if vocabulary.ordinary.is_empty() {
        return Err(Error::NoVocabulary { architecture: info.architecture.clone() });
    }
    let mut rng = SplitMix64::new(seed);
    let r: Vec<u32> = (0..length)
        .map(|_| vocabulary.ordinary[(rng.next_u64() % vocabulary.ordinary.len() as u64) as usize])
        .collect();
    let ids: Vec<u32> = start.into_iter().chain(r.iter().copied()).chain(r.iter().copied()).collect();
    let tokens: Vec<Token> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            if i < lead {
                Token::marker(&tokenizer.piece(id).unwrap_or_else(|| "<s>".into()), TokenKind::Special)
            } else {
                tokenizer.token_of(id)
            }
        })
        .collect();
    let row = Row { valid: vec![true; ids.len()], ids: ids.clone(), tokens };
    // an encoder–decoder reads the sequence in its encoder and its decoder alike
    let batch = if info.encoder_decoder {
        Batch { sources: vec![row.clone()], targets: vec![row] }
    } else {
        Batch { sources: vec![row], targets: Vec::new() }
    };
    let settings = Settings { keep: vec![at.place], hidden: false, ..Settings::trained() };
    let run = model.run_batch(&batch, &settings)?;
    let second = lead + length;
    let options = ScoreOptions { queries: Some(second..second + length), ..ScoreOptions::default() };
    let scores = scores(run.place(at.place)?.row(0)?, at.place, Score::Induction, &options)?;
    Ok(Probe { run, place: at.place, ids, length, second, causal, scores })
}
