//! Every head's scores for many texts, each run alone — a batch of one, so a text's scores are
//! those of its own run bit for bit, whatever texts come beside it — the texts spread over the
//! threads ([`crate::par::map`]). A text the model refuses (empty, past its positions) is that
//! text's error, not the call's. What a corpus goes through: the Python package's
//! `Model.scores` (and so `headmap.corpus`) and the command line's `heads --input`.

use ndarray::Array2;

use super::{scores, Score, ScoreOptions};
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::run::PlaceInfo;
use crate::{Model, Request};

/// One text's scores: how many tokens it has at the place, and each score asked, (L, H).
#[derive(Debug, Clone, PartialEq)]
pub struct TextScores {
    pub tokens: usize,
    pub scores: Vec<Array2<f32>>,
}

/// The scores a corpus gets at `place`: those `asked`, or when none are, every score the place
/// takes (cross attention no positional one). Asking cross attention for a positional score
/// is refused.
pub fn wanted_at(place: Place, asked: &[Score]) -> Result<Vec<Score>> {
    if asked.is_empty() {
        return Ok(Score::ALL.into_iter().filter(|s| place != Place::Cross || !s.positional()).collect());
    }
    if let Some(s) = asked.iter().find(|s| place == Place::Cross && s.positional()) {
        return Err(Error::ScoreNeedsSelf { score: s.name().into(), place: place.name().into() });
    }
    Ok(asked.to_vec())
}

/// Scores `wanted` of every layer and head at `place` for each of `texts`, in order.
pub fn each_text(
    model: &Model,
    texts: &[String],
    place: &PlaceInfo,
    wanted: &[Score],
    options: &ScoreOptions,
) -> Vec<Result<TextScores>> {
    let one = |text: &String| -> Result<TextScores> {
        let request = Request { texts: vec![text.clone()], place: Some(place.place), ..Request::default() };
        let run = model.run_weights(&request)?;
        let row = run.place(place.place)?.row(0)?;
        let table: Vec<Array2<f32>> =
            wanted.iter().map(|&s| scores(row, place.place, s, options)).collect::<Result<_>>()?;
        if let Some(t) = table.iter().find(|t| t.dim() != (place.layers, place.heads)) {
            return Err(Error::shape("a text's head scores", t.shape(), &[place.layers, place.heads]));
        }
        Ok(TextScores { tokens: row.query_valid.iter().filter(|&&v| v).count(), scores: table })
    };
    crate::par::map(texts, one)
}
