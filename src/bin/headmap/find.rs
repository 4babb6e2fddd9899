//! `headmap heads` and `headmap rollout`: what each head does, and attention through the
//! layers, as JSON or CSV (the layouts are in the README).

use std::fmt::Write as _;

use headmap::heads::{self, Score, ScoreOptions};
use headmap::{Place, PlaceRun};
use ndarray::Array2;
use serde::{Serialize, Serializer};

use super::{first_place, json, labels, load, write, HeadsArgs, ProbeKind, RolloutArgs, Table};

/// Every head's scores per place and batch row, and the mass from --queries to --keys; or,
/// with --probe, the induction probe.
pub(super) fn heads(args: &HeadsArgs) -> Result<(), String> {
    if let Some(input) = &args.corpus {
        return super::corpus::heads_over(args, input);
    }
    let model = load(&args.input.model)?;
    let architecture = &model.info().architecture;
    let text = match args.probe {
        Some(ProbeKind::Induction) => {
            let probe = heads::induction_probe(&model, args.input.place, args.probe_length, args.seed)
                .map_err(|e| e.to_string())?;
            let row = probe.run.place(probe.place).and_then(|p| p.row(0)).map_err(|e| e.to_string())?;
            let (layer, head, score) = probe.best();
            let best = Best { layer, head, score };
            let found = ProbeFound {
                place: probe.place.name(),
                causal: probe.causal,
                length: probe.length,
                second: probe.second,
                ids: &probe.ids,
                tokens: labels(&row.queries),
                induction: &probe.scores,
                best,
            };
            match args.output.format {
                Table::Json => json(&ProbeDoc { model: architecture, probe: found })?,
                Table::Csv => {
                    let mut out = String::from(CSV_HEADER);
                    score_lines(&mut out, found.place, 0, Score::Induction.name(), &probe.scores);
                    out
                }
            }
        }
        None => {
            let run = model.run_weights(&args.input.request(&model, args.input.place)?).map_err(|e| e.to_string())?;
            let places = run.places.iter().map(|p| score_place(p, args)).collect::<Result<Vec<_>, _>>()?;
            match args.output.format {
                Table::Json => json(&HeadsDoc { model: architecture, places })?,
                Table::Csv => scores_csv(&places),
            }
        }
    };
    write(args.output.out.as_deref(), text.as_bytes())
}

/// The scores of every row of one place. Without --place, a place gets the asked scores it
/// takes (cross attention no positional ones); with it, asking for one it cannot take fails.
fn score_place<'a>(p: &'a PlaceRun, args: &'a HeadsArgs) -> Result<Scored<'a>, String> {
    let options = ScoreOptions {
        metric: args.metric,
        exclude_bos: args.exclude_bos,
        exclude_current_token: args.exclude_current_token,
        queries: None,
    };
    let rows = p
        .rows
        .iter()
        .enumerate()
        .map(|(b, row)| {
            let at = |e: headmap::Error| format!("{} row {b}: {e}", p.place.name());
            let scores = if args.scores.is_empty() {
                heads::all_scores(row, p.place, &options).map_err(at)?
            } else {
                args.scores
                    .iter()
                    .filter(|s| args.input.place.is_some() || p.place != Place::Cross || !s.positional())
                    .map(|&s| Ok((s, heads::scores(row, p.place, s, &options).map_err(at)?)))
                    .collect::<Result<_, String>>()?
            };
            let mass = if args.queries.is_empty() {
                None
            } else {
                let values = heads::mass(row, &args.queries, &args.keys).map_err(at)?;
                Some(Mass { queries: &args.queries, keys: &args.keys, values })
            };
            let key_tokens = (p.place == Place::Cross).then(|| labels(&row.keys));
            Ok(RowScores { tokens: labels(&row.queries), key_tokens, scores, mass })
        })
        .collect::<Result<_, String>>()?;
    Ok(Scored { place: p.place.name(), mask: p.mask.name(), rows })
}

const CSV_HEADER: &str = "place,row,score,layer,head,value\n";

/// One line per score (and mass) of every place, row, layer and head.
fn scores_csv(places: &[Scored]) -> String {
    let mut out = String::from(CSV_HEADER);
    for p in places {
        for (b, row) in p.rows.iter().enumerate() {
            for (score, values) in &row.scores {
                score_lines(&mut out, p.place, b, score.name(), values);
            }
            if let Some(mass) = &row.mass {
                score_lines(&mut out, p.place, b, "mass", &mass.values);
            }
        }
    }
    out
}

/// The lines of one score's (L, H) values.
fn score_lines(out: &mut String, place: &str, row: usize, score: &str, values: &Array2<f32>) {
    for ((l, h), v) in values.indexed_iter() {
        let _ = writeln!(out, "{place},{row},{score},{l},{h},{v}");
    }
}

/// The rollout of every batch row at one self-attention place.
pub(super) fn rollout(args: &RolloutArgs) -> Result<(), String> {
    let model = load(&args.input.model)?;
    let place = match args.input.place {
        Some(place) => place,
        None => first_place(&model)?,
    };
    let run = model.run_weights(&args.input.request(&model, Some(place))?).map_err(|e| e.to_string())?;
    let kept = run.place(place).map_err(|e| e.to_string())?;
    let rows = kept
        .rows
        .iter()
        .map(|row| {
            Ok(Rolled { tokens: labels(&row.queries), layers: headmap::rollout::rollout(row, place, args.fusion)? })
        })
        .collect::<Result<Vec<_>, headmap::Error>>()
        .map_err(|e| e.to_string())?;
    let text = match args.output.format {
        Table::Json => json(&RolloutDoc {
            model: &model.info().architecture,
            place: place.name(),
            mask: kept.mask.name(),
            fusion: args.fusion.name(),
            rows,
        })?,
        Table::Csv => {
            let mut out = String::from("row,layer,query,key,value\n");
            for (b, row) in rows.iter().enumerate() {
                for (l, layer) in row.layers.iter().enumerate() {
                    for ((i, j), v) in layer.indexed_iter() {
                        let _ = writeln!(out, "{b},{l},{i},{j},{v}");
                    }
                }
            }
            out
        }
    };
    write(args.output.out.as_deref(), text.as_bytes())
}

/// `headmap heads` as JSON: per place, per batch row, each score (L, H).
#[derive(Serialize)]
struct HeadsDoc<'a> {
    model: &'a str,
    places: Vec<Scored<'a>>,
}

#[derive(Serialize)]
struct Scored<'a> {
    place: &'static str,
    mask: &'static str,
    rows: Vec<RowScores<'a>>,
}

#[derive(Serialize)]
struct RowScores<'a> {
    /// The query side's labels, and for cross attention the key side's.
    tokens: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_tokens: Option<Vec<String>>,
    #[serde(serialize_with = "score_map")]
    scores: Vec<(Score, Array2<f32>)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mass: Option<Mass<'a>>,
}

#[derive(Serialize)]
struct Mass<'a> {
    queries: &'a [usize],
    keys: &'a [usize],
    #[serde(serialize_with = "grid")]
    values: Array2<f32>, // (L, H)
}

/// `headmap heads --probe induction` as JSON.
#[derive(Serialize)]
struct ProbeDoc<'a> {
    model: &'a str,
    probe: ProbeFound<'a>,
}

#[derive(Serialize)]
struct ProbeFound<'a> {
    place: &'static str,
    causal: bool,
    length: usize,
    second: usize,
    ids: &'a [u32],
    tokens: Vec<String>,
    #[serde(serialize_with = "grid")]
    induction: &'a Array2<f32>, // (L, H)
    best: Best,
}

/// The head that scores highest.
#[derive(Serialize)]
struct Best {
    layer: usize,
    head: usize,
    score: f32,
}

/// `headmap rollout` as JSON.
#[derive(Serialize)]
struct RolloutDoc<'a> {
    model: &'a str,
    place: &'static str,
    mask: &'static str,
    fusion: &'static str,
    rows: Vec<Rolled>,
}

#[derive(Serialize)]
struct Rolled {
    tokens: Vec<String>,
    #[serde(serialize_with = "grids")]
    layers: Vec<Array2<f32>>, // L × (T, T)
}

/// An (R, C) array as R lists of C numbers.
fn grid<S: Serializer>(values: &Array2<f32>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(values.rows().into_iter().map(|r| r.to_vec()))
}

fn grids<S: Serializer>(layers: &[Array2<f32>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(layers.iter().map(|l| l.rows().into_iter().map(|r| r.to_vec()).collect::<Vec<_>>()))
}

/// Scores as an object keyed by their names, in [`Score::ALL`]'s order.
fn score_map<S: Serializer>(scores: &[(Score, Array2<f32>)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(
        scores
            .iter()
            .map(|(score, values)| (score.name(), values.rows().into_iter().map(|r| r.to_vec()).collect::<Vec<_>>())),
    )
}
