//! `headmap predict` (what the model predicts at every position, with heads off and through
//! the logit lens) and `headmap patch` (activation patching of every head).

use std::fmt::Write as _;

use headmap::models::patch::{PatchRequest, Patching};
use headmap::models::predict::{PredictOptions, Predictions};
use headmap::run::Ablation;
use headmap::Place;

use super::{json, load, write, Input, Table};

#[derive(clap::Args)]
pub struct PredictArgs {
    #[command(flatten)]
    pub input: Input,
    /// How many tokens each position lists.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub top_k: u16,
    /// Also the logit lens: each layer's residual stream through the final norm and the head.
    #[arg(long)]
    pub lens: bool,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Table,
    /// Where to write; default standard output.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
pub struct PatchArgs {
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// The clean text, and the corrupted one of the same token length.
    #[arg(long)]
    pub clean: String,
    #[arg(long)]
    pub corrupt: String,
    /// An encoder–decoder's decoder input, the same for both runs.
    #[arg(long)]
    pub target: Option<String>,
    /// The token the clean run predicts and the one the corrupted run leans to (one token
    /// each, as the model reads them: " Mary" for GPT-2).
    #[arg(long)]
    pub answer: String,
    #[arg(long)]
    pub wrong: String,
    /// Where the logits are read (from 0); default: the last token for a decoder, the first
    /// mask token for a masked LM, and in an encoder–decoder's target the position that writes
    /// the answer when the target holds it.
    #[arg(long)]
    pub position: Option<usize>,
    /// The place whose heads are patched; default: the decoder's self-attention, else the
    /// encoder's, as for --ablate. With --target an encoder–decoder's texts differ in the
    /// source alone, which its decoder reads through `cross`: its own first layer maps to 0.
    #[arg(long, value_parser = |s: &str| Place::parse(s).map_err(|e| e.to_string()))]
    pub place: Option<Place>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Table,
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

pub fn predict(args: &PredictArgs) -> Result<(), String> {
    let model = load(&args.input.model)?;
    let request = args.input.request(&model, None)?;
    let ablate = match &args.input.ablate {
        Some(spec) => model.heads(spec).map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let ablation = if args.input.mean_ablation { Ablation::Mean } else { Ablation::Zero };
    let options = PredictOptions { top_k: usize::from(args.top_k), lens: args.lens.then_some(None), ablate, ablation };
    let predictions = model.predict(&request, &options).map_err(|e| e.to_string())?;
    let text = match args.format {
        Table::Json => json(&predictions)?,
        Table::Csv => predictions_csv(&predictions),
    };
    write(args.out.as_deref(), text.as_bytes())
}

pub fn patch(args: &PatchArgs) -> Result<(), String> {
    let model = load(&args.model)?;
    let request = PatchRequest {
        clean: args.clean.clone(),
        corrupt: args.corrupt.clone(),
        target: args.target.clone(),
        answer: args.answer.clone(),
        wrong: args.wrong.clone(),
        position: args.position,
        place: args.place,
    };
    let patching = model.patch(&request, |_, _| true).map_err(|e| e.to_string())?;
    let text = match args.format {
        Table::Json => json(&patching)?,
        Table::Csv => patching_csv(&patching),
    };
    write(args.out.as_deref(), text.as_bytes())
}

/// A field of a CSV line, quoted when it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One line per candidate: `row,kind,layer,position,token,rank,id,candidate,p`, kind
/// `prediction` (layer empty) or `lens` (rank 0, the layer's top token).
fn predictions_csv(p: &Predictions) -> String {
    let mut out = String::from("row,kind,layer,position,token,rank,id,candidate,p\n");
    for (r, row) in p.rows.iter().enumerate() {
        for (t, candidates) in row.predictions.iter().enumerate() {
            for (rank, c) in candidates.iter().flatten().enumerate() {
                let token = field(&row.tokens[t]);
                let _ = writeln!(out, "{r},prediction,,{t},{token},{rank},{},{},{}", c.id, field(&c.token), c.p);
            }
        }
        for (layer, guesses) in row.lens.iter().flatten().enumerate() {
            for (t, g) in guesses.iter().enumerate() {
                if let Some(g) = g {
                    let (token, c) = (field(&row.tokens[t]), &g.top);
                    let _ = writeln!(out, "{r},lens,{layer},{t},{token},0,{},{},{}", c.id, field(&c.token), c.p);
                }
            }
        }
    }
    out
}

/// `what,place,position,token,answer,wrong,layer,head,value`: the two logit differences, then
/// one line per head. Every line names what it was measured on (the place patched, the position
/// whose logits are read and the token there — the clean text's, or an encoder–decoder's
/// target's — the answer and the wrong token), so lines from runs on other places or texts can
/// share one table.
fn patching_csv(p: &Patching) -> String {
    let token = p.tokens.get(p.position).map_or(String::new(), |t| field(t));
    let on = format!("{},{},{token},{},{}", p.place.name(), p.position, field(&p.answer.token), field(&p.wrong.token));
    let mut out = String::from("what,place,position,token,answer,wrong,layer,head,value\n");
    let _ = writeln!(out, "clean_diff,{on},,,{}", p.clean_diff);
    let _ = writeln!(out, "corrupt_diff,{on},,,{}", p.corrupt_diff);
    for (layer, heads) in p.map.iter().enumerate() {
        for (head, v) in heads.iter().enumerate() {
            let _ = writeln!(out, "patched,{on},{layer},{head},{v}");
        }
    }
    out
}
