//! `headmap vectors`: one head's query and key vectors over a few sentences, their joint
//! embedding and its two principal axes (AttentionViz's picture), as JSON or CSV (the layouts
//! are in the README).

use std::fmt::Write as _;

use headmap::qk::{joint, Corpus, Picture, Sentence};
use headmap::run::RowAttention;
use headmap::{Error, Place, Request};
use ndarray::{ArrayView1, ArrayView2};
use serde::Serialize;

use super::{first_place, json, load, write, Table, VectorsArgs};

/// Runs each text alone (no padding to leave out, and no cap on the batch: the corpus sets
/// the limits), gathers the layer's vectors and draws the head.
pub(super) fn vectors(args: &VectorsArgs) -> Result<(), String> {
    let input = &args.input;
    if !input.targets.is_empty() && input.targets.len() != input.texts.len() {
        return Err(Error::TargetsMismatch { targets: input.targets.len(), texts: input.texts.len() }.to_string());
    }
    let model = load(&input.model)?;
    let place = match input.place {
        Some(place) => place,
        None => first_place(&model)?,
    };
    let mut corpus = Corpus::new();
    let mut labels = Vec::with_capacity(input.texts.len());
    let mut divisor = 1.0;
    for (n, text) in input.texts.iter().enumerate() {
        let request = Request {
            texts: vec![text.clone()],
            targets: input.targets.get(n).cloned().into_iter().collect(),
            place: Some(place),
            mask: input.mask,
            through_layer: Some(args.layer),
            ..Request::default()
        };
        // a failure of this text names it; a missing layer or a full corpus is no one text's fault
        let at = |e: Error| format!("text {n}: {e}");
        let run = model.run_weights(&request).map_err(at)?;
        let row = run.place(place).and_then(|p| p.row(0)).map_err(at)?;
        corpus.add(row, args.layer).map_err(|e| e.to_string())?;
        if n == 0 {
            // the same for every sentence: one block, one d_k
            divisor = row.queries_keys(args.layer).map_err(|e| e.to_string())?.2;
        }
        labels.push(Labels::of(row));
    }
    let (q, k) = corpus.vectors(args.head).map_err(|e| e.to_string())?;
    let normalized = joint::normalize(q, k);
    let picture = corpus.picture(args.head).map_err(|e| e.to_string())?;
    let drawn = Drawn { place, q, k, normalized: &normalized, picture: &picture };
    let text = match args.output.format {
        Table::Json => {
            let sentences = corpus.sentences.iter().zip(&labels).map(|(s, l)| drawn.sentence(s, l)).collect();
            json(&VectorsDoc {
                model: &model.info().architecture,
                place: place.name(),
                layer: args.layer,
                head: args.head,
                d_k: corpus.d_k(),
                divisor,
                scale: picture.scale,
                shift: normalized.shift.to_vec(),
                correlation: Correlation { before: picture.correlation[0], after: picture.correlation[1] },
                explained: &picture.explained,
                sentences,
            })?
        }
        Table::Csv => points_csv(&corpus.sentences, &labels, &picture),
    };
    write(args.output.out.as_deref(), text.as_bytes())
}

/// The labels of one sentence's query and key sides, by position.
struct Labels {
    queries: Vec<String>,
    keys: Vec<String>,
}

impl Labels {
    fn of(row: &RowAttention) -> Self {
        Labels { queries: super::labels(&row.queries), keys: super::labels(&row.keys) }
    }
}

/// What one head's picture is made of: the raw and normalized vectors, row for row with the
/// picture's points (queries first, then keys).
struct Drawn<'a> {
    place: Place,
    q: ArrayView2<'a, f32>, // (Nq, d_k)
    k: ArrayView2<'a, f32>, // (Nk, d_k)
    normalized: &'a joint::Joint,
    picture: &'a Picture,
}

impl Drawn<'_> {
    fn query(&self, row: usize) -> Side {
        let point = self.picture.coords.row(row);
        Side { raw: self.q.row(row).to_vec(), normalized: self.normalized.queries.row(row).to_vec(), pca: pair(point) }
    }

    fn key(&self, row: usize) -> Side {
        let point = self.picture.coords.row(self.q.nrows() + row);
        Side { raw: self.k.row(row).to_vec(), normalized: self.normalized.keys.row(row).to_vec(), pca: pair(point) }
    }

    /// A self-attention sentence's tokens carry both vectors (its two sides are one sentence);
    /// cross attention's decoder tokens carry queries and its encoder tokens keys.
    fn sentence(&self, s: &Sentence, labels: &Labels) -> SentenceDoc {
        let queries = s.query_positions.iter().enumerate().map(|(a, &i)| (i, s.queries.start + a));
        if self.place == Place::Cross {
            let keys = s.key_positions.iter().enumerate().map(|(b, &j)| (j, s.keys.start + b));
            SentenceDoc {
                tokens: queries.map(|(i, r)| token(i, &labels.queries[i], Some(self.query(r)), None)).collect(),
                key_tokens: Some(keys.map(|(j, r)| token(j, &labels.keys[j], None, Some(self.key(r)))).collect()),
            }
        } else {
            // one sentence on both sides: the same valid positions, in the same order
            let tokens = queries
                .zip(s.keys.clone())
                .map(|((i, r), kr)| token(i, &labels.queries[i], Some(self.query(r)), Some(self.key(kr))))
                .collect();
            SentenceDoc { tokens, key_tokens: None }
        }
    }
}

fn token(position: usize, label: &str, query: Option<Side>, key: Option<Side>) -> TokenVectors {
    let mut t = TokenVectors { position, token: label.to_string(), ..TokenVectors::default() };
    if let Some(Side { raw, normalized, pca }) = query {
        (t.query, t.query_normalized, t.query_pca) = (Some(raw), Some(normalized), Some(pca));
    }
    if let Some(Side { raw, normalized, pca }) = key {
        (t.key, t.key_normalized, t.key_pca) = (Some(raw), Some(normalized), Some(pca));
    }
    t
}

fn pair(point: ArrayView1<f32>) -> [f32; 2] {
    [point[0], point[1]]
}

/// One line per point of the picture: `sentence,side,position,token,x,y`.
fn points_csv(sentences: &[Sentence], labels: &[Labels], picture: &Picture) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let nq = sentences.last().map_or(0, |s| s.queries.end);
    let mut out = String::from("sentence,side,position,token,x,y\n");
    for (n, (s, l)) in sentences.iter().zip(labels).enumerate() {
        for (a, &i) in s.query_positions.iter().enumerate() {
            let p = picture.coords.row(s.queries.start + a);
            let _ = writeln!(out, "{n},query,{i},{},{},{}", quote(&l.queries[i]), p[0], p[1]);
        }
        for (b, &j) in s.key_positions.iter().enumerate() {
            let p = picture.coords.row(nq + s.keys.start + b);
            let _ = writeln!(out, "{n},key,{j},{},{},{}", quote(&l.keys[j]), p[0], p[1]);
        }
    }
    out
}

/// `headmap vectors` as JSON.
#[derive(Serialize)]
struct VectorsDoc<'a> {
    model: &'a str,
    place: &'static str,
    layer: usize,
    head: usize,
    d_k: usize,
    /// What QKᵀ is divided by before the softmax.
    divisor: f32,
    /// c: queries × c, keys ÷ c in the joint embedding.
    scale: f32,
    /// mean(Q) − mean(K), added to every key before the scaling.
    shift: Vec<f32>,
    correlation: Correlation,
    explained: &'a [f32],
    sentences: Vec<SentenceDoc>,
}

/// Per query, Pearson's r of q·k against −‖q − k‖ over the keys the mask lets it see (the raw
/// vectors' distance before, the joint embedding's after), averaged over the queries; null
/// when no query has two keys with spread.
#[derive(Serialize)]
struct Correlation {
    before: Option<f32>,
    after: Option<f32>,
}

#[derive(Serialize)]
struct SentenceDoc {
    tokens: Vec<TokenVectors>,
    /// Cross attention's encoder side.
    #[serde(skip_serializing_if = "Option::is_none")]
    key_tokens: Option<Vec<TokenVectors>>,
}

/// One token with the vectors its side has: both in self-attention, one in cross attention.
#[derive(Serialize, Default)]
struct TokenVectors {
    position: usize,
    token: String,
    /// As the scores use it (after RoPE, before the division).
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<Vec<f32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<Vec<f32>>,
    /// In the joint embedding: query × c; (key + shift) ÷ c.
    #[serde(skip_serializing_if = "Option::is_none")]
    query_normalized: Option<Vec<f32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_normalized: Option<Vec<f32>>,
    /// The point in the picture: the joint embedding on its two principal axes.
    #[serde(skip_serializing_if = "Option::is_none")]
    query_pca: Option<[f32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_pca: Option<[f32; 2]>,
}

/// One vector of a token: as the scores use it, in the joint embedding, and its point.
struct Side {
    raw: Vec<f32>,
    normalized: Vec<f32>,
    pca: [f32; 2],
}
