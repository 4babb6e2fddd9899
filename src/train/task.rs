//! What a model learns from: sequences the trainer makes itself, from its own seeded stream.
//!
//! Induction (the default): random token ids in which a token seen before is followed, half
//! the time, by the token that followed it the first time — predictable only by looking back
//! at what came after the same token earlier, which is what an induction head does (Olsson et
//! al. 2022), wherever in the sequence the earlier occurrence lies.
//!
//! Span copy: random ids with a span of 8 copied to a random later offset. A 2-layer model
//! learns it without induction heads: measured here, its layer-0 heads looked 7 and 8
//! positions back and its layer-1 heads 8 back, composing the few distances the copies come
//! at (0.86 copy accuracy, best induction score 0.12 on the probe). Kept for comparing.
//!
//! Previous token: each token repeated once (`a a b b c c …`), learnt by a head that looks one
//! position back.

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    #[default]
    Induction,
    SpanCopy,
    PreviousToken,
}

/// One training sequence and the positions whose next token the task makes predictable
/// (where copy accuracy is counted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    pub ids: Vec<u32>,
    /// Positions i whose target ids[i + 1] can be known from what came before.
    pub predictable: Vec<usize>,
}

/// The length of the copied span in the induction task, as in the PyTorch run.
pub const SPAN: usize = 8;

impl Task {
    /// A sequence of `len` ids below `vocab` drawn from `rng`.
    pub fn sequence(self, rng: &mut SplitMix64, vocab: usize, len: usize) -> Sequence {
        let mut draw = |n: u64| (rng.next_u64() % n.max(1)) as usize;
        match self {
            Task::SpanCopy => {
                let mut ids: Vec<u32> = (0..len).map(|_| draw(vocab as u64) as u32).collect();
                let span = SPAN.min(len / 2);
                if span < 2 {
                    return Sequence { ids, predictable: Vec::new() };
                }
                // the first copy at [from, from + span), the second at [to, to + span), to ≥ from + span
                let from = draw((len - 2 * span + 1) as u64);
                let to = from + span + draw((len - from - 2 * span + 1) as u64);
                ids.copy_within(from..from + span, to);
                Sequence { ids, predictable: (to..to + span - 1).collect() }
            }
            Task::Induction => {
                // each token's first successor, which it is followed by again half the time
                let mut next = vec![None; vocab];
                let mut ids = Vec::with_capacity(len);
                let mut predictable = Vec::new();
                ids.push(draw(vocab as u64) as u32);
                for t in 1..len {
                    let prev = ids[t - 1] as usize;
                    let copy = draw(2) == 0;
                    match next[prev] {
                        Some(n) if copy => {
                            ids.push(n);
                            predictable.push(t - 1);
                        }
                        known => {
                            let id = draw(vocab as u64) as u32;
                            if known.is_none() {
                                next[prev] = Some(id);
                            }
                            ids.push(id);
                        }
                    }
                }
                Sequence { ids, predictable }
            }
            Task::PreviousToken => {
                let mut ids = vec![0u32; len];
                for pair in ids.chunks_mut(2) {
                    let id = draw(vocab as u64) as u32;
                    pair.iter_mut().for_each(|v| *v = id);
                }
                Sequence { ids, predictable: (0..len.saturating_sub(1)).filter(|i| i % 2 == 0).collect() }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_token_is_followed_by_its_first_successor_where_it_counts() {
        let mut rng = SplitMix64::new(5);
        let mut counted = 0;
        for _ in 0..200 {
            let s = Task::Induction.sequence(&mut rng, 32, 33);
            assert_eq!(s.ids.len(), 33);
            for &i in &s.predictable {
                let first = s.ids.iter().position(|&id| id == s.ids[i]).unwrap();
                assert!(first < i, "the token came before");
                assert_eq!(s.ids[i + 1], s.ids[first + 1], "and is followed as it was then");
            }
            counted += s.predictable.len();
        }
        // about 7 of 32 positions: among 32 ids a token has usually come before, then half the time
        assert!((1000..2000).contains(&counted), "{counted}");
    }

    #[test]
    fn the_second_copy_repeats_the_first_and_is_what_counts() {
        let mut rng = SplitMix64::new(5);
        for _ in 0..200 {
            let s = Task::SpanCopy.sequence(&mut rng, 32, 33);
            assert_eq!(s.ids.len(), 33);
            assert!(s.ids.iter().all(|&id| id < 32));
            assert_eq!(s.predictable.len(), SPAN - 1);
            let to = s.predictable[0];
            // the target of each counted position is the token after the earlier copy of its own token
            let from = (0..to).find(|&f| s.ids[f..f + SPAN] == s.ids[to..to + SPAN]).expect("a first copy before");
            assert!(from + SPAN <= to);
        }
    }

    #[test]
    fn previous_token_pairs_repeat() {
        let s = Task::PreviousToken.sequence(&mut SplitMix64::new(1), 10, 9);
        assert!(s.predictable.iter().all(|&i| s.ids[i] == s.ids[i + 1]));
    }
}
