//! `headmap attention`: a real model's attention weights from the command line, as JSON or
//! CSV for scripts, or as an SVG or PNG figure of one layer and head.
//!
//! ```text
//! headmap attention --model models/all-MiniLM-L6-v2 --text "동물이 길을 건너지 않았다." --format json
//! headmap attention --model DIR --text "…" --text "…" --format png --layer 2 --head 5 --out fig.png
//! headmap attention --model opus-mt-ko-en --text "민수가 책을 주었다." --target "Minsu gave a book." --kind cross --format svg
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use headmap::models::hf::{HfModel, HfRun, ModelFiles};
use headmap::models::run::AttentionRun;
use headmap::svg::{heatmap_svg, Heatmap};
use headmap::MaskKind;
use serde::Serialize;

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
    /// A model folder: config.json, model.safetensors and tokenizer.json (or source.spm + vocab.json).
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
    /// For svg and png: the place to draw (padding = encoder self-attention, causal = decoder
    /// self-attention, cross); default: the model's first.
    #[arg(long)]
    kind: Option<String>,
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
    let texts: Vec<&str> = args.texts.iter().map(String::as_str).collect();
    let targets: Vec<&str> = args.targets.iter().map(String::as_str).collect();
    let run = model.run(&texts, &targets).map_err(|e| e.to_string())?;
    let bytes = match args.format {
        Format::Json => json(&model, &run)?.into_bytes(),
        Format::Csv => csv(&run).into_bytes(),
        Format::Svg => svg(&model, &run, args)?.into_bytes(),
        Format::Png => png(&svg(&model, &run, args)?)?,
    };
    match &args.out {
        Some(path) => std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display())),
        None if matches!(args.format, Format::Png) => Err("png output needs --out FILE".into()),
        None => std::io::stdout().write_all(&bytes).map_err(|e| e.to_string()),
    }
}

fn load(dir: &Path) -> Result<HfModel, String> {
    let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()));
    let optional = |name: &str| dir.join(name).exists().then(|| read(name)).transpose();
    let (config, weights) = (read("config.json")?, read("model.safetensors")?);
    let (tokenizer, source_spm, vocab) =
        (optional("tokenizer.json")?, optional("source.spm")?, optional("vocab.json")?);
    HfModel::load(&ModelFiles {
        config: &config,
        weights: &weights,
        tokenizer: tokenizer.as_deref(),
        source_spm: source_spm.as_deref(),
        vocab: vocab.as_deref(),
    })
    .map_err(|e| format!("{}: {e}", dir.display()))
}

/// The seed's names for the three places attention is used.
fn place_name(kind: MaskKind) -> &'static str {
    match kind {
        MaskKind::None | MaskKind::Padding => "encoder_self",
        MaskKind::Causal => "decoder_self",
        MaskKind::Cross => "cross",
    }
}

#[derive(Serialize)]
struct Place<'a> {
    queries: &'a [String],
    keys: &'a [String],
    query_valid: &'a [bool],
    key_valid: &'a [bool],
    /// [layers][heads][Tq][Tk]
    weights: Vec<Vec<Vec<Vec<f32>>>>,
}

fn json(model: &HfModel, run: &HfRun) -> Result<String, String> {
    let batch = run.places.first().map_or(0, AttentionRun::batch);
    let rows: Vec<serde_json::Value> = (0..batch)
        .map(|b| {
            let attention: serde_json::Map<String, serde_json::Value> = run
                .places
                .iter()
                .map(|p| {
                    let weights = p.weights[b]
                        .iter()
                        .map(|layer| {
                            layer.outer_iter().map(|head| head.outer_iter().map(|r| r.to_vec()).collect()).collect()
                        })
                        .collect();
                    let place = Place {
                        queries: &p.queries[b],
                        keys: &p.keys[b],
                        query_valid: &p.query_valid[b],
                        key_valid: &p.key_valid[b],
                        weights,
                    };
                    (place_name(p.kind).to_string(), serde_json::to_value(place).unwrap_or_default())
                })
                .collect();
            serde_json::json!({ "attention": attention })
        })
        .collect();
    let doc = serde_json::json!({ "model_type": model.model_type, "rows": rows });
    serde_json::to_string(&doc).map(|s| s + "\n").map_err(|e| e.to_string())
}

fn csv(run: &HfRun) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out = String::from("row,attention,layer,head,query_index,query,key_index,key,weight\n");
    for p in &run.places {
        for (b, layers) in p.weights.iter().enumerate() {
            for (l, layer) in layers.iter().enumerate() {
                for ((h, i, j), w) in layer.indexed_iter() {
                    let (q, k) = (quote(&p.queries[b][i]), quote(&p.keys[b][j]));
                    out.push_str(&format!("{b},{},{l},{h},{i},{q},{j},{k},{w}\n", place_name(p.kind)));
                }
            }
        }
    }
    out
}

fn svg(model: &HfModel, run: &HfRun, args: &Args) -> Result<String, String> {
    let kind = match &args.kind {
        Some(name) => MaskKind::parse(name).map_err(|e| e.to_string())?,
        None => model.kinds()[0],
    };
    let place = run.place(kind).ok_or_else(|| format!("this model has no {} attention", kind.name()))?;
    let layer = place.weights.get(args.row).and_then(|l| l.get(args.layer)).ok_or_else(|| {
        format!(
            "no layer {} of row {}: the model has {} layers, the batch {} rows",
            args.layer,
            args.row,
            place.layers(),
            place.batch()
        )
    })?;
    if args.head >= layer.dim().0 {
        return Err(format!("no head {}: the model has {} heads", args.head, layer.dim().0));
    }
    let mask = place.masks()[args.row].as_ref();
    let title = format!("{} · {} · layer {} · head {}", model.model_type, place_name(kind), args.layer, args.head);
    Ok(heatmap_svg(&Heatmap {
        title: &title,
        weights: layer.index_axis(ndarray::Axis(0), args.head),
        queries: &place.queries[args.row],
        keys: &place.keys[args.row],
        allowed: mask.map(|m| m.allowed()),
        query_valid: &place.query_valid[args.row],
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
