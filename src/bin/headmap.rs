//! `headmap attention`: a real model's attention weights from the command line, as JSON or
//! CSV for scripts, or as an SVG or PNG figure of one layer and head.
//!
//! ```text
//! headmap attention --model models/all-MiniLM-L6-v2 --text "동물이 길을 건너지 않았다." --format json
//! headmap attention --model DIR --text "…" --text "…" --format png --layer 2 --head 5 --out fig.png
//! headmap attention --model opus-mt-ko-en --text "민수가 책을 주었다." --target "Minsu gave a book." --place cross --format svg
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use headmap::export::{csv, export};
use headmap::models::hf::ModelFiles;
use headmap::models::weights::{shard_names, INDEX};
use headmap::svg::{heatmap_svg, Heatmap};
use headmap::{MaskKind, Model, Place, Request, Run};

#[derive(Parser)]
#[command(name = "headmap", version, about = "Per-head attention weights of Hugging Face models")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a model on text and writes its attention weights.
    Attention(Args),
}

#[derive(clap::Args)]
struct Args {
    /// A model folder: config.json, model.safetensors (or model.safetensors.index.json and its
    /// shards) and tokenizer.json (or source.spm + vocab.json).
    #[arg(long)]
    model: PathBuf,
    /// A sentence; repeat for a padded batch.
    #[arg(long = "text", required = true)]
    texts: Vec<String>,
    /// The decoder's input of an encoder–decoder model, one per --text (default: the texts).
    #[arg(long = "target")]
    targets: Vec<String>,
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// The place to keep (encoder_self, decoder_self, cross); default: every place for json
    /// and csv, the model's first for svg and png.
    #[arg(long, alias = "kind", value_parser = |s: &str| Place::parse(s).map_err(|e| e.to_string()))]
    place: Option<Place>,
    /// Run --place with this mask instead of the one it was trained with (none, padding,
    /// causal, cross): a what-if.
    #[arg(long, value_parser = |s: &str| MaskKind::parse(s).map_err(|e| e.to_string()))]
    mask: Option<MaskKind>,
    /// For svg and png: which layer, head and batch row (from 0).
    #[arg(long, default_value_t = 0)]
    layer: usize,
    #[arg(long, default_value_t = 0)]
    head: usize,
    #[arg(long, default_value_t = 0)]
    row: usize,
    /// Where to write; default standard output (png needs a file).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Csv,
    Svg,
    Png,
}

fn main() -> ExitCode {
    let Command::Attention(args) = Cli::parse().command;
    match attention(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("headmap: {message}");
            ExitCode::FAILURE
        }
    }
}

fn attention(args: &Args) -> Result<(), String> {
    let model = load(&args.model)?;
    let figure = matches!(args.format, Format::Svg | Format::Png);
    let place = match (args.place, figure) {
        (None, true) => model.info().places.first().map(|p| p.place),
        (place, _) => place,
    };
    let request =
        Request { texts: args.texts.clone(), targets: args.targets.clone(), place, mask: args.mask, scale: None };
    // the figures and exports show weights only: no last layer's values or feed-forward
    let run = model.run_weights(&request).map_err(|e| e.to_string())?;
    let bytes = match args.format {
        Format::Json => {
            let doc = serde_json::to_string(&export(&model.info().architecture, &run)).map_err(|e| e.to_string())?;
            (doc + "\n").into_bytes()
        }
        Format::Csv => csv(&run).map_err(|e| e.to_string())?.into_bytes(),
        Format::Svg => svg(&model, &run, args)?.into_bytes(),
        Format::Png => png(&svg(&model, &run, args)?)?,
    };
    match &args.out {
        Some(path) => std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display())),
        None if matches!(args.format, Format::Png) => Err("png output needs --out FILE".into()),
        None => std::io::stdout().write_all(&bytes).map_err(|e| e.to_string()),
    }
}

fn load(dir: &Path) -> Result<Model, String> {
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()));
    let optional = |name: &str| dir.join(name).exists().then(|| read(name)).transpose();
    let config = read("config.json")?;
    // a sharded checkpoint: its index and the shards it names, else model.safetensors
    let index = optional(INDEX)?;
    let shard_files = match &index {
        Some(index) => shard_names(index).map_err(|e| format!("{}: {e}", dir.display()))?,
        None => Vec::new(),
    };
    let shards = shard_files.iter().map(|name| read(name)).collect::<Result<Vec<_>, _>>()?;
    let weights = if index.is_some() { Vec::new() } else { read("model.safetensors")? };
    let (tokenizer, source_spm, vocab) =
        (optional("tokenizer.json")?, optional("source.spm")?, optional("vocab.json")?);
    Model::from_files(&ModelFiles {
        config: &config,
        weights: &weights,
        tokenizer: tokenizer.as_deref(),
        source_spm: source_spm.as_deref(),
        vocab: vocab.as_deref(),
        index: index.as_deref(),
        shards: shard_files.iter().map(String::as_str).zip(shards.iter().map(Vec::as_slice)).collect(),
    })
    .map_err(|e| format!("{}: {e}", dir.display()))
}

/// The figure of one head: the run keeps only the place to draw.
fn svg(model: &Model, run: &Run, args: &Args) -> Result<String, String> {
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
    let labels = |tokens: &[headmap::tokenize::Token]| tokens.iter().map(|t| t.label.clone()).collect::<Vec<_>>();
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
