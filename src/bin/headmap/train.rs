//! `headmap train`: trains a small attention-only GPT-2 on a task it makes itself and writes
//! the model folder (every view and transformers open it), `training.json` (the loss, copy
//! accuracy and every head's scores over the run) and the kept checkpoints, each a folder of
//! its own under `checkpoints/step-N`.

use std::path::Path;

use headmap::train::timeline::{train as record, TimelineOptions};
use headmap::train::{CheckpointFiles, Layout, Task, TrainSettings};

use super::json;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TaskArg {
    /// Random tokens, a token seen before followed half the time by what followed it first:
    /// an induction head predicts it.
    Induction,
    /// Random tokens with a span of 8 copied to a later offset (learnt by fixed offsets).
    SpanCopy,
    /// Each token twice (a a b b …): a head that looks one back predicts the second.
    PreviousToken,
}

#[derive(clap::Args)]
pub struct TrainArgs {
    #[arg(long, value_enum, default_value = "induction")]
    pub task: TaskArg,
    #[arg(long, default_value_t = 2)]
    pub layers: usize,
    #[arg(long, default_value_t = 32)]
    pub d_model: usize,
    #[arg(long, default_value_t = 4)]
    pub heads: usize,
    /// Token ids the task draws from (the model's vocabulary).
    #[arg(long, default_value_t = 32)]
    pub vocab: usize,
    /// Tokens per training sequence (the model's positions).
    #[arg(long, default_value_t = 33)]
    pub length: usize,
    #[arg(long, default_value_t = 32)]
    pub batch_size: usize,
    #[arg(long, default_value_t = 1e-3)]
    pub learning_rate: f32,
    #[arg(long, default_value_t = 4000)]
    pub steps: usize,
    /// Fixes the initial weights and the task's sequences: the same seed trains the same model.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Tie the output head to the token embeddings (GPT-2's default; slower to form heads).
    #[arg(long)]
    pub tied: bool,
    /// How many checkpoints to keep, gathered around the phase change.
    #[arg(long, default_value_t = 20)]
    pub checkpoints: usize,
    /// Score every head every this many steps.
    #[arg(long, default_value_t = 50)]
    pub score_every: usize,
    /// The folder to write (made if missing).
    #[arg(long)]
    pub out: std::path::PathBuf,
}

pub fn train(args: &TrainArgs) -> Result<(), String> {
    let settings = TrainSettings {
        task: match args.task {
            TaskArg::Induction => Task::Induction,
            TaskArg::SpanCopy => Task::SpanCopy,
            TaskArg::PreviousToken => Task::PreviousToken,
        },
        layers: args.layers,
        d_model: args.d_model,
        heads: args.heads,
        vocab: args.vocab,
        length: args.length,
        batch_size: args.batch_size,
        learning_rate: args.learning_rate,
        seed: args.seed,
        tied: args.tied,
    };
    let options = TimelineOptions {
        score_every: args.score_every,
        checkpoints: args.checkpoints,
        ..TimelineOptions::new(&settings, args.steps)
    };
    let started = std::time::Instant::now();
    let (timeline, kept) = record(settings, &options, |report, scores| {
        if let Some(s) = scores.filter(|s| s.step % (10 * options.score_every) == 0 || s.step == args.steps) {
            eprintln!(
                "step {:>6}  loss {:.3}  copy accuracy {:.2}  best induction {:.2}  {:.0} s",
                report.step,
                report.loss,
                s.copy_accuracy,
                s.best_induction(),
                started.elapsed().as_secs_f32()
            );
        }
        true
    })
    .map_err(|e| e.to_string())?;
    let layout = Layout::new(settings.config()).map_err(|e| e.to_string())?;
    let folder = |dir: &Path, weights: &[f32]| -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let files = CheckpointFiles::new(&layout, weights).map_err(|e| e.to_string())?;
        for (name, bytes) in files.named() {
            std::fs::write(dir.join(name), bytes).map_err(|e| format!("{}: {e}", dir.join(name).display()))?;
        }
        Ok(())
    };
    let (last_step, last) = kept.last().ok_or("no weights were kept")?;
    folder(&args.out, last)?;
    for (step, weights) in &kept {
        folder(&args.out.join("checkpoints").join(format!("step-{step}")), weights)?;
    }
    let doc = args.out.join("training.json");
    std::fs::write(&doc, json(&timeline)?).map_err(|e| format!("{}: {e}", doc.display()))?;
    match (&timeline.stopped, timeline.phase_change) {
        (Some(stopped), _) => return Err(format!("{} (written: the weights of step {last_step})", stopped.reason)),
        (None, Some(step)) => eprintln!("the phase change: step {step}"),
        (None, None) => eprintln!("no phase change in {} steps", args.steps),
    }
    Ok(())
}
