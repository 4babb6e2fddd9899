//! Training a small transformer, so that a reader watches its heads form: GPT-2's
//! attention-only blocks (`params`), their loss and gradients by hand (`grad`), Adam as
//! PyTorch computes it (`adam`), and the sequences the trainer makes itself (`task`).
//!
//! ```text
//! per step:  B sequences of the task  → per sequence, on the threads: loss and gradient
//!            → the gradients summed in sequence order (the same bits on any number of threads)
//!            → one Adam step; a loss that is not a number stops training, the weights before it kept
//! ```
//!
//! The weights are GPT-2's names and layout, so a trained model is a GPT-2 checkpoint with its
//! MLP weights zero ([`Trainer::checkpoint`]) that every view, and transformers, opens.

mod adam;
mod checkpoint;
mod grad;
mod params;
mod task;
pub mod timeline;

use serde::{Deserialize, Serialize};

pub use adam::Adam;
pub use checkpoint::CheckpointFiles;
pub use grad::{attention, sequence_grad, SequenceGrad};
pub use params::{Layout, Slot, TinyConfig};
pub use task::{Sequence, Task, SPAN};

use crate::error::{Error, Result};
use crate::rng::SplitMix64;

/// What to train and how: by default a 2-layer model of d_model 32 with 4 heads and its own
/// output head, on 33 positions of 32 token ids, batches of 32, Adam at 1e-3 — which goes
/// through the phase change between steps 1,000 and 2,000 for seeds 0–4. At 3e-3 (the
/// issue's PyTorch run) seeds 0 and 1 took 2,300–2,900 steps and seed 2 none in 9,000.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainSettings {
    pub task: Task,
    pub layers: usize,
    pub d_model: usize,
    pub heads: usize,
    pub vocab: usize,
    /// Tokens per training sequence (the model's positions).
    pub length: usize,
    pub batch_size: usize,
    pub learning_rate: f32,
    pub seed: u64,
    /// The output head tied to the token embeddings (GPT-2's default), or a matrix of its own
    /// (the trainer's: see `params`).
    pub tied: bool,
}

impl Default for TrainSettings {
    fn default() -> Self {
        TrainSettings {
            task: Task::Induction,
            layers: 2,
            d_model: 32,
            heads: 4,
            vocab: 32,
            length: 33,
            batch_size: 32,
            learning_rate: 1e-3,
            seed: 0,
            tied: false,
        }
    }
}

impl TrainSettings {
    pub fn config(&self) -> TinyConfig {
        TinyConfig {
            vocab_size: self.vocab,
            n_positions: self.length,
            n_embd: self.d_model,
            n_head: self.heads,
            n_layer: self.layers,
            tie_word_embeddings: self.tied,
        }
    }

    fn check(&self) -> Result<()> {
        let bad = |setting: &str, value: String, expected: &str| {
            Err(Error::BadTrainSetting { setting: setting.into(), value, expected: expected.into() })
        };
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0 && self.learning_rate <= 1.0) {
            return bad("learning rate", self.learning_rate.to_string(), "a number above 0, at most 1");
        }
        if !(1..=256).contains(&self.batch_size) {
            return bad("batch size", self.batch_size.to_string(), "1 to 256");
        }
        if self.length < 8 {
            return bad("length", self.length.to_string(), "8 to 256");
        }
        if self.length < 2 * SPAN + 1 && self.task == Task::SpanCopy {
            return bad(
                "length",
                self.length.to_string(),
                &format!("at least {} for a span of {SPAN} copied", 2 * SPAN + 1),
            );
        }
        self.config().check()
    }
}

/// What one step measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepReport {
    pub step: usize,
    /// The batch's mean next-token loss (nats), before the step's update.
    pub loss: f32,
    /// The share of the task's predictable positions the model got right (argmax).
    pub copy_accuracy: f32,
}

/// A model in training.
pub struct Trainer {
    pub settings: TrainSettings,
    pub layout: Layout,
    pub weights: Vec<f32>,
    adam: Adam,
    data: SplitMix64,
    step: usize,
    /// The copy accuracies summed since [`Trainer::take_copy_accuracy`] last took them, and how many.
    accuracy: (f32, usize),
}

impl Trainer {
    /// GPT-2's initial weights for `settings.seed`, and the task's stream from the same seed.
    pub fn new(settings: TrainSettings) -> Result<Self> {
        settings.check()?;
        let layout = Layout::new(settings.config())?;
        let weights = layout.init(settings.seed);
        let adam = Adam::new(layout.len, settings.learning_rate);
        let data = SplitMix64::for_name(settings.seed, "training data");
        Ok(Trainer { settings, layout, weights, adam, data, step: 0, accuracy: (0.0, 0) })
    }

    /// Steps taken.
    pub fn steps(&self) -> usize {
        self.step
    }

    /// The mean copy accuracy of the steps since the last call (0 before any): the curve
    /// smoothed over the steps between two scorings.
    pub fn take_copy_accuracy(&mut self) -> f32 {
        let (sum, count) = std::mem::take(&mut self.accuracy);
        sum / count.max(1) as f32
    }

    /// One step on a fresh batch. A loss that is not a number refuses the update: the weights
    /// stay as they were and the error says at which step.
    pub fn step(&mut self) -> Result<StepReport> {
        let s = self.settings;
        let batch: Vec<Sequence> =
            (0..s.batch_size).map(|_| s.task.sequence(&mut self.data, s.vocab, s.length)).collect();
        let predictions = s.batch_size * (s.length - 1);
        let (layout, weights) = (&self.layout, &self.weights);
        let grads = crate::par::map(&batch, |seq| sequence_grad(layout, weights, &seq.ids, predictions));
        let mut total = vec![0.0f32; layout.len];
        let (mut loss, mut right, mut counted) = (0.0f64, 0usize, 0usize);
        for (seq, g) in batch.iter().zip(&grads) {
            total.iter_mut().zip(&g.grad).for_each(|(t, v)| *t += v);
            loss += g.loss;
            right += seq.predictable.iter().filter(|&&i| g.correct[i]).count();
            counted += seq.predictable.len();
        }
        let loss = (loss / predictions as f64) as f32;
        self.step += 1;
        if !loss.is_finite() || total.iter().any(|g| !g.is_finite()) {
            return Err(Error::Diverged { step: self.step, loss });
        }
        self.adam.step(&mut self.weights, &total);
        let copy_accuracy = right as f32 / counted.max(1) as f32;
        self.accuracy.0 += copy_accuracy;
        self.accuracy.1 += 1;
        Ok(StepReport { step: self.step, loss, copy_accuracy })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn training_lowers_the_loss_and_repeats_itself_on_any_number_of_threads() {
        // pairs (a a b b …): half the targets are the current token, learnt in a few dozen steps
        let settings = TrainSettings {
            task: Task::PreviousToken,
            batch_size: 8,
            seed: 4,
            learning_rate: 3e-3,
            ..TrainSettings::default()
        };
        let run = || {
            let mut t = Trainer::new(settings).unwrap();
            let reports: Vec<StepReport> = (0..60).map(|_| t.step().unwrap()).collect();
            (reports, t.weights)
        };
        let (reports, weights) = run();
        let first = reports[0].loss;
        let last = reports[55..].iter().map(|r| r.loss).sum::<f32>() / 5.0;
        // near uniform over 32 ids (the tied head leans a little to the current token from the start)
        assert!((first - (32f32).ln()).abs() < 0.3, "a fresh model: {first}");
        assert!(last < first - 0.3, "the loss falls: {first} → {last}");
        assert!(reports[55..].iter().any(|r| r.copy_accuracy > 0.5), "the pairs' second tokens are predicted");
        for n in [1, 2, 4] {
            let (_, on_n) = crate::par::pool(n).unwrap().install(run);
            assert_eq!(weights, on_n, "{n} threads give the same weights");
        }
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        for (settings, name) in [
            (TrainSettings { learning_rate: f32::NAN, ..Default::default() }, "learning rate"),
            (TrainSettings { learning_rate: -1.0, ..Default::default() }, "learning rate"),
            (TrainSettings { batch_size: 0, ..Default::default() }, "batch size"),
            (TrainSettings { heads: 3, ..Default::default() }, "heads"),
            (TrainSettings { length: 5, ..Default::default() }, "length"),
            (TrainSettings { length: 10, task: Task::SpanCopy, ..Default::default() }, "length"),
        ] {
            match Trainer::new(settings) {
                Err(Error::BadTrainSetting { setting, .. }) => assert_eq!(setting, name),
                other => panic!("{name}: {:?}", other.err()),
            }
        }
    }
}
