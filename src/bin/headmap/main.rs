//! `headmap`: a real model's attention from the command line. `attention` writes the weights,
//! as JSON or CSV for scripts or as an SVG or PNG figure of one layer and head; `heads` scores
//! every head for what it does (or runs the induction probe); `rollout` follows the attention
//! through the layers; `vectors` gives one head's queries and keys over a few sentences and
//! the picture they make together.
//!
//! ```text
//! headmap attention --model models/all-MiniLM-L6-v2 --text "동물이 길을 건너지 않았다." --format json
//! headmap attention --model DIR --text "…" --text "…" --format png --layer 2 --head 5 --out fig.png
//! headmap attention --model opus-mt-ko-en --text "민수가 책을 주었다." --target "Minsu gave a book." --place cross --format svg
//! headmap heads --model DIR --text "The animal didn't cross the street because it was tired." --queries 9 --keys 2
//! headmap heads --model DIR --input corpus.parquet --column text --out scores.parquet
//! headmap heads --model DIR --probe induction --probe-length 50 --seed 0
//! headmap rollout --model DIR --text "…" --fusion mean --format csv
//! headmap vectors --model DIR --text "…" --text "…" --layer 1 --head 3
//! headmap predict --model DIR --text "…" --ablate 1.0,1.3 --top-k 5 --lens
//! headmap patch --model DIR --clean "…" --corrupt "…" --answer " Mary" --wrong " John"
//! headmap train --task induction --layers 2 --d-model 32 --heads 4 --steps 4000 --seed 0 --out DIR
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use headmap::export::{csv, export};
use headmap::heads::{Metric, Score, PROBE_LENGTH};
use headmap::rollout::Fusion;
use headmap::run::Ablation;
use headmap::svg::{heatmap_svg, Heatmap};
use headmap::tokenize::Token;
use headmap::{MaskKind, Model, Place, Request, Run};
use serde::Serialize;

mod corpus;
mod find;
mod generate;
mod predict;
mod train;
mod vectors;
use find::{heads, rollout};
use generate::{generate, GenerateArgs};
use predict::{patch, predict, PatchArgs, PredictArgs};
use train::{train, TrainArgs};
use vectors::vectors;

#[derive(Parser)]
#[command(name = "headmap", version, about = "Per-head attention weights of Hugging Face models")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Threads for the forward (the heads of a layer, large products, the rows of a batch):
    /// the machine's cores by default, or HEADMAP_THREADS. One gives the single-threaded run.
    #[arg(long, global = true, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a model on text and writes its attention weights.
    Attention(AttentionArgs),
    /// Scores every layer and head for what it does (previous token, induction, first token,
    /// …), or runs the induction probe.
    Heads(HeadsArgs),
    /// Follows the attention through the layers (attention rollout): how much each token
    /// draws on each input token after every layer.
    Rollout(RolloutArgs),
    /// Gives one head's query and key vectors over the texts, their joint embedding (keys
    /// moved to the queries' centre, both scaled to one mean norm) and its two principal
    /// axes: the picture AttentionViz draws.
    Vectors(VectorsArgs),
    /// What the model predicts at every position (the next token, or a masked LM's token
    /// there), the top k with their probabilities; with heads off (--ablate) and through the
    /// logit lens (--lens).
    Predict(PredictArgs),
    /// Activation patching: for every head, the corrupted run with that head's output taken
    /// from the clean run, and how much of the clean logit difference it brings back.
    Patch(PatchArgs),
    /// Text the model writes token by token over its KV cache, greedy or sampled, with heads
    /// off if asked; each token with its probability.
    Generate(GenerateArgs),
    /// Trains a small attention-only GPT-2 on a task it makes itself; writes the model,
    /// training.json (loss, copy accuracy, every head's scores) and checkpoints.
    Train(TrainArgs),
}

/// What every command runs: a model, its input, and the place and mask to keep.
#[derive(clap::Args)]
pub(crate) struct Input {
    /// A model folder: config.json, model.safetensors (or model.safetensors.index.json and its
    /// shards) and tokenizer.json (or source.spm + vocab.json).
    #[arg(long)]
    pub(crate) model: PathBuf,
    /// A sentence; repeat for a padded batch (or, for vectors, a corpus of sentences run one
    /// by one).
    #[arg(long = "text", required = true)]
    pub(crate) texts: Vec<String>,
    /// The decoder's input of an encoder–decoder model, one per --text (default: the texts).
    #[arg(long = "target")]
    pub(crate) targets: Vec<String>,
    /// The place to keep (encoder_self, decoder_self, cross); default: every place, or the
    /// model's first where one place is shown (svg, png, rollout, vectors).
    #[arg(long, alias = "kind", value_parser = |s: &str| Place::parse(s).map_err(|e| e.to_string()))]
    pub(crate) place: Option<Place>,
    /// Run --place with this mask instead of the one it was trained with (none, padding,
    /// causal, cross): a what-if.
    #[arg(long, value_parser = |s: &str| MaskKind::parse(s).map_err(|e| e.to_string()))]
    pub(crate) mask: Option<MaskKind>,
    /// Heads turned off, `L.H` from 0, comma-separated, each optionally after a place
    /// (encoder_self:, decoder_self:, cross:); without one, the decoder's self-attention for
    /// a model with a decoder, else the encoder's. Every later layer is computed with them off.
    #[arg(long)]
    pub(crate) ablate: Option<String>,
    /// Turn --ablate's heads off by their mean output over the texts' tokens, not zeros.
    #[arg(long, requires = "ablate")]
    pub(crate) mean_ablation: bool,
}

impl Input {
    /// The request of these texts to `model`, keeping `place` (every place if `None`); a
    /// `--target` is refused where the model has no decoder input to give it to.
    pub(crate) fn request(&self, model: &Model, place: Option<Place>) -> Result<Request, String> {
        if !self.targets.is_empty() && !model.info().encoder_decoder {
            let architecture = &model.info().architecture;
            return Err(format!(
                "--target is the decoder's input of an encoder–decoder model; {architecture} reads --text alone"
            ));
        }
        Ok(Request {
            texts: self.texts.clone(),
            targets: self.targets.clone(),
            place,
            mask: self.mask,
            ablate: self.ablate.clone(),
            ablation: if self.mean_ablation { Ablation::Mean } else { Ablation::Zero },
            ..Request::default()
        })
    }
}

#[derive(clap::Args)]
struct AttentionArgs {
    #[command(flatten)]
    input: Input,
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// For svg and png: which layer, head and batch row (from 0).
    #[arg(long, default_value_t = 0)]
    layer: usize,
    #[arg(long, default_value_t = 0)]
    head: usize,
    #[arg(long, default_value_t = 0)]
    row: usize,
    /// For safetensors: how each weight is stored (f16 halves the file; each weight within
    /// 2⁻¹¹ of itself).
    #[arg(long, value_enum, default_value = "f16")]
    precision: Precision,
    /// Where to write; default standard output (png and safetensors need a file).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Precision {
    F16,
    F32,
}

#[derive(clap::Args)]
struct HeadsArgs {
    #[command(flatten)]
    input: Input,
    /// A score to give, repeated or comma-separated (previous_token, duplicate_token,
    /// induction, next_token, current_token, first_token, special, punctuation, broad,
    /// distance); default: every score the place takes (cross attention takes first_token,
    /// special, punctuation and broad).
    #[arg(long = "score", value_delimiter = ',', value_parser = |s: &str| Score::parse(s).map_err(|e| e.to_string()))]
    scores: Vec<Score>,
    /// How a pattern score compares the weights with its pattern: mul, the share of the weight
    /// on it; abs, 1 − the mean distance from it (TransformerLens's two).
    #[arg(long, default_value = "mul", value_parser = |s: &str| Metric::parse(s).map_err(|e| e.to_string()))]
    metric: Metric,
    /// Leave key 0 (the BOS token, where many heads rest) out of the pattern scores.
    #[arg(long)]
    exclude_bos: bool,
    /// Leave the diagonal (each token on itself) out of the pattern scores.
    #[arg(long)]
    exclude_current_token: bool,
    /// Query positions (from 0, comma-separated) whose mean weight on --keys is given per
    /// layer and head as `mass`.
    #[arg(long, value_delimiter = ',', requires = "keys")]
    queries: Vec<usize>,
    /// Key positions (from 0, comma-separated) for --queries.
    #[arg(long, value_delimiter = ',', requires = "queries")]
    keys: Vec<usize>,
    /// A corpus instead of --text: a Parquet file (its column --column), a JSONL file (objects
    /// with that field, or bare strings) or a text file (a text per line). Each text runs
    /// alone, a batch at a time; one row per text goes to --out — Parquet when its name ends
    /// in .parquet, else --format's CSV or JSON lines —: its id (the row or line, from 0), its
    /// tokens, why it was refused if it was (empty, too long, not text), and every head's
    /// scores as `score.layer.head` columns, as `headmap.corpus.scores` gives them in Python.
    #[arg(long = "input", conflicts_with_all = ["texts", "targets", "mask", "ablate", "queries", "keys", "probe"])]
    corpus: Option<PathBuf>,
    /// The column (Parquet) or field (JSONL) of --input that holds the texts.
    #[arg(long, default_value = "text")]
    column: String,
    /// Run a probe instead of --text: `induction` runs a start token and random tokens r, r
    /// at --place (default: the model's causal place, else its encoder) and scores every head
    /// for induction over the second r.
    #[arg(long, value_enum, conflicts_with_all = [
        "texts", "targets", "mask", "scores", "metric", "exclude_bos", "exclude_current_token", "queries", "keys",
    ])]
    probe: Option<ProbeKind>,
    /// The length of r.
    // --text named as a conflict too: clap lets a missing --text pass when an argument that
    // conflicts with it is present, so `requires = "probe"` alone would let `--text a
    // --probe-length 3` run the text and drop the length unsaid.
    #[arg(long, default_value_t = PROBE_LENGTH, requires = "probe", conflicts_with = "texts")]
    probe_length: usize,
    /// The seed r is drawn with.
    #[arg(long, default_value_t = 0, requires = "probe", conflicts_with = "texts")]
    seed: u64,
    #[command(flatten)]
    output: Output,
}

#[derive(clap::Args)]
struct RolloutArgs {
    #[command(flatten)]
    input: Input,
    /// How a layer's heads become one matrix before the residual is added: mean, max or min.
    #[arg(long, default_value = "mean", value_parser = |s: &str| Fusion::parse(s).map_err(|e| e.to_string()))]
    fusion: Fusion,
    #[command(flatten)]
    output: Output,
}

#[derive(clap::Args)]
struct VectorsArgs {
    #[command(flatten)]
    input: Input,
    /// The layer whose vectors are gathered (from 0).
    #[arg(long)]
    layer: usize,
    /// The head drawn (from 0).
    #[arg(long)]
    head: usize,
    #[command(flatten)]
    output: Output,
}

/// Where and how `heads`, `rollout` and `vectors` write their numbers.
#[derive(clap::Args)]
struct Output {
    #[arg(long, value_enum, default_value = "json")]
    format: Table,
    /// Where to write; default standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Csv,
    Svg,
    Png,
    /// Every weight as a tensor per batch row and place, the tokens in the metadata.
    Safetensors,
}

/// The formats of numbers without a figure.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Table {
    Json,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProbeKind {
    Induction,
}

fn main() -> ExitCode {
    headmap::memory::keep_freed();
    let cli = Cli::parse();
    if let Some(n) = cli.threads {
        if let Err(e) = headmap::par::set_threads(usize::from(n)) {
            eprintln!("headmap: {e}");
            return ExitCode::FAILURE;
        }
    }
    let done = match cli.command {
        Command::Attention(args) => attention(&args),
        Command::Heads(args) => heads(&args),
        Command::Rollout(args) => rollout(&args),
        Command::Vectors(args) => vectors(&args),
        Command::Predict(args) => predict(&args),
        Command::Patch(args) => patch(&args),
        Command::Generate(args) => generate(&args),
        Command::Train(args) => train(&args),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("headmap: {message}");
            ExitCode::FAILURE
        }
    }
}

fn attention(args: &AttentionArgs) -> Result<(), String> {
    if args.out.is_none() && matches!(args.format, Format::Png | Format::Safetensors) {
        return Err("png and safetensors output need --out FILE".into());
    }
    let model = load(&args.input.model)?;
    let figure = matches!(args.format, Format::Svg | Format::Png);
    let place = match (args.input.place, figure) {
        (None, true) => first_place(&model).ok(),
        (place, _) => place,
    };
    // the figures and exports show weights only: no last layer's values or feed-forward
    let run = model.run_weights(&args.input.request(&model, place)?).map_err(|e| e.to_string())?;
    let bytes = match args.format {
        Format::Json => json(&export(&model.info().architecture, &run))?.into_bytes(),
        Format::Csv => csv(&run).map_err(|e| e.to_string())?.into_bytes(),
        Format::Svg => svg(&model, &run, args)?.into_bytes(),
        Format::Png => png(&svg(&model, &run, args)?)?,
        Format::Safetensors => {
            let precision = match args.precision {
                Precision::F16 => headmap::export::Precision::F16,
                Precision::F32 => headmap::export::Precision::F32,
            };
            headmap::export::safetensors(&model.info().architecture, &run, precision).map_err(|e| e.to_string())?
        }
    };
    write(args.out.as_deref(), &bytes)
}

fn labels(tokens: &[Token]) -> Vec<String> {
    tokens.iter().map(|t| t.label.clone()).collect()
}

pub(crate) fn json<T: Serialize>(doc: &T) -> Result<String, String> {
    Ok(serde_json::to_string(doc).map_err(|e| e.to_string())? + "\n")
}

/// The place shown when one is shown and none is asked for.
fn first_place(model: &Model) -> Result<Place, String> {
    model.info().places.first().map(|p| p.place).ok_or_else(|| "the model has no attention".into())
}

pub(crate) fn write(out: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    match out {
        Some(path) => std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display())),
        None => std::io::stdout().write_all(bytes).map_err(|e| e.to_string()),
    }
}

pub(crate) fn load(dir: &Path) -> Result<Model, String> {
    Model::from_dir(dir).map_err(|e| e.of_folder(dir))
}

/// The figure of one head: the run keeps only the place to draw.
fn svg(model: &Model, run: &Run, args: &AttentionArgs) -> Result<String, String> {
    let place = run.places.first().ok_or("the run kept no attention")?;
    let row = place.row(args.row).map_err(|e| e.to_string())?;
    let weights = row.head(args.layer, args.head).map_err(|e| e.to_string())?;
    let weights = weights.view();
    let mask = row.mask(args.layer).map_err(|e| e.to_string())?;
    let what_if = if place.what_if { format!(" · what-if {} mask", place.mask.name()) } else { String::new() };
    let title = format!(
        "{} · {} · layer {} · head {}{what_if}",
        model.info().architecture,
        place.place.name(),
        args.layer,
        args.head
    );
    Ok(heatmap_svg(&Heatmap {
        title: &title,
        weights,
        queries: &labels(&row.queries),
        keys: &labels(&row.keys),
        allowed: Some(mask.allowed()),
        query_valid: &row.query_valid,
    }))
}

fn png(svg: &str) -> Result<Vec<u8>, String> {
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &options).map_err(|e| format!("cannot draw the figure: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("the figure is empty")?;
    resvg::render(&tree, resvg::tiny_skia::Transform::identity(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("cannot encode the png: {e}"))
}
