//! Every head's scores for many texts, each run alone — a batch of one, so a text's scores are
//! those of its own run bit for bit, whatever texts come beside it — the texts spread over the
//! threads ([`crate::par::map`]). A text the model refuses (empty, past its positions) is that
//! text's error, not the call's. What a corpus goes through: the Python package's
//! `Model.scores` (and so `headmap.corpus`) and the command line's `heads --input`.

use ndarray::Array2;

use super::{scores_of, Score, ScoreOptions};
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::models::MAX_BATCH;
use crate::run::PlaceInfo;
use crate::{Model, Request, Run};

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

/// Scores `wanted` of every layer and head at `place` for each of `texts`, in order. Texts of
/// one token length run together, up to [`MAX_BATCH`] and [`TOGETHER_ROWS`] tokens at a time
/// (an encoder's products then read its weights once for all of them); each text's scores
/// have the bits of its own run.
pub fn each_text(
    model: &Model,
    texts: &[String],
    place: &PlaceInfo,
    wanted: &[Score],
    options: &ScoreOptions,
) -> Vec<Result<TextScores>> {
    let score = |run: &Run, r: usize| -> Result<TextScores> {
        let row = run.place(place.place)?.row(r)?;
        let table = scores_of(row, place.place, wanted, options)?;
        if let Some(t) = table.iter().find(|t| t.dim() != (place.layers, place.heads)) {
            return Err(Error::shape("a text's head scores", t.shape(), &[place.layers, place.heads]));
        }
        Ok(TextScores { tokens: row.query_valid.iter().filter(|&&v| v).count(), scores: table })
    };
    let run = |group: &[usize]| {
        let request = Request {
            texts: group.iter().map(|&i| texts[i].clone()).collect(),
            place: Some(place.place),
            ..Request::default()
        };
        model.run_weights(&request)
    };
    let groups = groups(model, texts);
    let done = crate::par::map(&groups, |group| match run(group) {
        Ok(together) => (0..group.len()).map(|r| score(&together, r)).collect(),
        // a text the model refuses is its own error, not its neighbours'
        Err(_) if group.len() > 1 => group.iter().map(|&i| run(&[i]).and_then(|alone| score(&alone, 0))).collect(),
        Err(e) => vec![Err(e)],
    });
    // every text is in one group: back in the texts' order
    let mut out: Vec<(usize, Result<TextScores>)> =
        groups.iter().flatten().copied().zip(done.into_iter().flatten()).collect();
    out.sort_unstable_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, result)| result).collect()
}

/// The most tokens run together: an encoder's products are as fast per row from here on, and
/// the weights of 8 texts of 64 tokens stay well within what a run keeps whole.
const TOGETHER_ROWS: usize = 512;

/// `texts`' indices in groups to run together: of one token length (no padding), in the order
/// they come; a text that does not tokenize, alone.
fn groups(model: &Model, texts: &[String]) -> Vec<Vec<usize>> {
    let lengths = crate::par::map(texts, |t| model.tokenize(t).map(|e| e.ids.len()).ok());
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new(); // (length, group being filled)
    let mut groups = Vec::new();
    for (i, length) in lengths.into_iter().enumerate() {
        let Some(length) = length else {
            groups.push(vec![i]);
            continue;
        };
        let k = open.iter().position(|(l, _)| *l == length).unwrap_or_else(|| {
            open.push((length, Vec::new()));
            open.len() - 1
        });
        open[k].1.push(i);
        if open[k].1.len() >= (TOGETHER_ROWS / length.max(1)).clamp(1, MAX_BATCH) {
            groups.push(open.swap_remove(k).1);
        }
    }
    groups.extend(open.into_iter().map(|(_, g)| g));
    groups
}
