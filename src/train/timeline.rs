//! The record of a training run, for the chart of heads forming: the loss and copy accuracy
//! of every step, every head's induction and previous-token scores on one fixed probe every
//! few dozen steps — computed by headmap's own `heads` on the checkpoint's files, so each
//! equals `headmap heads` on that checkpoint — the phase change, and the weights of the steps
//! kept as checkpoints.

use ndarray::Array2;
use serde::Serialize;

use super::{CheckpointFiles, StepReport, TrainSettings, Trainer};
use crate::error::{Error, Result};
use crate::heads::{induction_probe, scores, Score, ScoreOptions};

/// How a run is recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineOptions {
    pub steps: usize,
    /// Score the heads every this many steps (and at step 0).
    pub score_every: usize,
    /// How many checkpoints to keep (the first and last among them).
    pub checkpoints: usize,
    /// The probe: this many random tokens, then the same again (`headmap heads --probe
    /// induction --probe-length N --seed S`).
    pub probe_length: usize,
    pub probe_seed: u64,
}

impl TimelineOptions {
    /// Defaults for `settings`: scores every 50 steps, 20 checkpoints, the longest probe the
    /// positions hold (up to 16 tokens repeated).
    pub fn new(settings: &TrainSettings, steps: usize) -> Self {
        TimelineOptions {
            steps,
            score_every: 50,
            checkpoints: 20,
            probe_length: (settings.length / 2).min(16),
            probe_seed: 0,
        }
    }
}

/// Every head's scores at one step, (layers, heads) each.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepScores {
    pub step: usize,
    /// Copy accuracy over the steps since the last scores (the curve smoothed).
    pub copy_accuracy: f32,
    pub induction: Vec<Vec<f32>>,
    pub previous_token: Vec<Vec<f32>>,
}

impl StepScores {
    pub fn best_induction(&self) -> f32 {
        self.induction.iter().flatten().fold(0.0, |m, &v| m.max(v))
    }
}

/// The probe the scores are taken on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRecord {
    pub length: usize,
    pub seed: u64,
    /// Its tokens as the model's text: what `headmap heads --text` takes for the
    /// previous-token scores.
    pub text: String,
}

/// Where training stopped early: a loss that is not a number, the weights before it kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stopped {
    pub step: usize,
    pub reason: String,
}

/// `training.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    pub format: &'static str,
    pub version: u32,
    pub settings: TrainSettings,
    pub probe: ProbeRecord,
    /// Every step's report.
    pub curve: Vec<StepReport>,
    pub scores: Vec<StepScores>,
    /// The first scored step with copy accuracy ≥ 0.6 and an induction score ≥ 0.5.
    pub phase_change: Option<usize>,
    /// The steps whose weights were kept.
    pub checkpoints: Vec<usize>,
    pub stopped: Option<Stopped>,
}

/// What the phase change asks of a scored step.
pub const PHASE_ACCURACY: f32 = 0.6;
pub const PHASE_INDUCTION: f32 = 0.5;

/// The weights of one step, kept as a checkpoint.
pub type Checkpoint = (usize, Vec<f32>);

/// The scores of the model `trainer` holds now, with the copy accuracy of the steps since the
/// last scores (which it takes).
pub fn step_scores(trainer: &mut Trainer, options: &TimelineOptions) -> Result<(StepScores, String)> {
    let copy_accuracy = trainer.take_copy_accuracy();
    let model = CheckpointFiles::new(&trainer.layout, &trainer.weights)?.model()?;
    let probe = induction_probe(&model, None, options.probe_length, options.probe_seed)?;
    let row = probe.run.place(probe.place)?.row(0)?;
    let previous = scores(row, probe.place, Score::PreviousToken, &ScoreOptions::default())?;
    let rows = |a: &Array2<f32>| a.rows().into_iter().map(|r| r.to_vec()).collect();
    let text = probe.ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    let scored = StepScores {
        step: trainer.steps(),
        copy_accuracy,
        induction: rows(&probe.scores),
        previous_token: rows(&previous),
    };
    Ok((scored, text))
}

/// Trains for `options.steps` steps, scoring and keeping weights as it goes; `progress` is told
/// every step (and the scores when there are new ones) and stops the run when it answers false.
/// Returns the timeline and the kept checkpoints' weights, first step first.
pub fn train(
    settings: TrainSettings,
    options: &TimelineOptions,
    mut progress: impl FnMut(&StepReport, Option<&StepScores>) -> bool,
) -> Result<(Timeline, Vec<Checkpoint>)> {
    let bad = |setting: &str, value: usize, expected: &str| {
        Err(Error::BadTrainSetting { setting: setting.into(), value: value.to_string(), expected: expected.into() })
    };
    if options.score_every == 0 {
        return bad("score every", options.score_every, "at least 1 step");
    }
    if options.checkpoints < 2 {
        return bad("checkpoints", options.checkpoints, "at least 2 (the first step and the last)");
    }
    let mut trainer = Trainer::new(settings)?;
    let (first, text) = step_scores(&mut trainer, options)?;
    let mut scored = vec![first];
    let mut kept = vec![(0, trainer.weights.clone())];
    let (mut curve, mut stopped) = (Vec::with_capacity(options.steps), None);
    for _ in 0..options.steps {
        let report = match trainer.step() {
            Ok(report) => report,
            Err(e @ Error::Diverged { step, .. }) => {
                stopped = Some(Stopped { step, reason: e.to_string() });
                break;
            }
            Err(e) => return Err(e),
        };
        curve.push(report);
        let mut new = None;
        if report.step % options.score_every == 0 || report.step == options.steps {
            let (s, _) = step_scores(&mut trainer, options)?;
            kept.push((report.step, trainer.weights.clone()));
            scored.push(s);
            new = scored.last();
        }
        if !progress(&report, new) {
            break;
        }
    }
    let phase_change = scored
        .iter()
        .find(|s| s.copy_accuracy >= PHASE_ACCURACY && s.best_induction() >= PHASE_INDUCTION)
        .map(|s| s.step);
    let steps: Vec<usize> = kept.iter().map(|(s, _)| *s).collect();
    let chosen = choose_checkpoints(&steps, options.checkpoints, phase_change);
    let checkpoints: Vec<Checkpoint> = kept.into_iter().filter(|(s, _)| chosen.contains(s)).collect();
    let timeline = Timeline {
        format: "headmap.training",
        version: 1,
        settings,
        probe: ProbeRecord { length: options.probe_length, seed: options.probe_seed, text },
        curve,
        scores: scored,
        phase_change,
        checkpoints: chosen,
        stopped,
    };
    Ok((timeline, checkpoints))
}

/// `count` of the scored `steps`: the first and the last, half of the rest spread evenly over
/// the run and half over the stretch around the phase change (from half its step to 1.5 times
/// it), where the heads change fastest; evenly over the run without one.
pub fn choose_checkpoints(steps: &[usize], count: usize, phase_change: Option<usize>) -> Vec<usize> {
    if steps.len() <= count {
        return steps.to_vec();
    }
    let mut chosen = vec![steps[0], *steps.last().unwrap_or(&0)];
    let spread = |from: usize, to: usize, n: usize, chosen: &mut Vec<usize>| {
        let within: Vec<usize> =
            steps.iter().copied().filter(|&s| s >= from && s <= to && !chosen.contains(&s)).collect();
        for i in 0..n.min(within.len()) {
            chosen.push(within[(i * within.len() + within.len() / 2) / n.min(within.len())]);
        }
    };
    let rest = count - 2;
    let near = match phase_change {
        Some(step) => {
            let n = rest / 2;
            spread(step / 2, step + step / 2, n, &mut chosen);
            n
        }
        None => 0,
    };
    spread(0, *steps.last().unwrap_or(&0), rest - near, &mut chosen);
    // the phase change's stretch may hold fewer scored steps than asked: fill from the rest
    let mut i = 0;
    while chosen.len() < count && i < steps.len() {
        if !chosen.contains(&steps[i]) {
            chosen.push(steps[i]);
        }
        i += 1;
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_gather_around_the_phase_change() {
        let steps: Vec<usize> = (0..=100).map(|i| i * 50).collect(); // 0 … 5,000
        let chosen = choose_checkpoints(&steps, 20, Some(2800));
        assert_eq!(chosen.len(), 20);
        assert_eq!((chosen[0], *chosen.last().unwrap()), (0, 5000));
        let near = chosen.iter().filter(|&&s| (1400..=4200).contains(&s)).count();
        assert!(near >= 10, "{chosen:?}");
        let even = choose_checkpoints(&steps, 20, None);
        assert_eq!(even.len(), 20);
        assert!(even.windows(2).all(|w| w[1] - w[0] <= 400), "{even:?}");
        assert_eq!(choose_checkpoints(&steps[..5], 20, None), steps[..5].to_vec());
    }

    #[test]
    fn the_scores_are_headmaps_own_on_the_checkpoint() {
        let settings = TrainSettings { batch_size: 4, ..TrainSettings::default() };
        let options = TimelineOptions { score_every: 5, checkpoints: 3, ..TimelineOptions::new(&settings, 12) };
        let mut told = 0;
        let (timeline, kept) = train(settings, &options, |_, s| {
            told += usize::from(s.is_some());
            true
        })
        .unwrap();
        assert_eq!(timeline.curve.len(), 12);
        assert_eq!(timeline.scores.iter().map(|s| s.step).collect::<Vec<_>>(), [0, 5, 10, 12]);
        assert_eq!(told, 3);
        assert_eq!(kept.iter().map(|k| k.0).collect::<Vec<_>>(), timeline.checkpoints);
        assert_eq!(timeline.checkpoints.len(), 3);
        // the last checkpoint's files, scored again from its probe text as `headmap heads` would
        let (step, weights) = kept.last().unwrap();
        let layout = super::super::Layout::new(settings.config()).unwrap();
        let model = CheckpointFiles::new(&layout, weights).unwrap().model().unwrap();
        let run = model
            .run_weights(&crate::Request { texts: vec![timeline.probe.text.clone()], ..Default::default() })
            .unwrap();
        let row = &run.places[0].rows[0];
        let previous = scores(row, run.places[0].place, Score::PreviousToken, &ScoreOptions::default()).unwrap();
        let last = timeline.scores.iter().find(|s| s.step == *step).unwrap();
        for (l, layer) in last.previous_token.iter().enumerate() {
            for (h, &v) in layer.iter().enumerate() {
                assert_eq!(v, previous[[l, h]], "layer {l} head {h}");
            }
        }
    }
}
