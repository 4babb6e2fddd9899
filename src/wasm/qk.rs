//! Queries and keys from JavaScript (real models' package only): one run's vectors of every
//! head of a layer, and a corpus of sentences whose joint embedding a page draws, head by head.
//!
//! ```js
//! const corpus = new QkCorpus();
//! for (const text of texts) { const run = model.run({ texts: [text], … }); corpus.add(run, "encoder_self", 0, layer); run.free(); }
//! const p = corpus.picture(head);   // { coords: Float32Array [2·(Nq+Nk)], norms, correlation: [before, after], … }
//! ```

use js_sys::{Array, Float32Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::run::Run;
use super::{js_error, to_js};
use crate::qk::{layer_vectors, tsne, Corpus, MAX_SENTENCES, MAX_TOKENS};

fn set(out: &Object, key: &str, value: impl Into<JsValue>) -> Result<(), JsValue> {
    Reflect::set(out, &key.into(), &value.into()).map(|_| ())
}

#[wasm_bindgen]
impl Run {
    /// Every head's query and key vectors in `layer` of batch row `row` at `place`, as the
    /// scores use them: `{ heads, dK, divisor, tq, tk, queries: Float32Array [H·Tq·d_k],
    /// keys: Float32Array [H·Tk·d_k] }`; QKᵀ / divisor (+ T5's bias) are the scores. With
    /// `head`, that head's alone (`heads` 1: [Tq·d_k] and [Tk·d_k]).
    pub fn vectors(&self, place_name: &str, row: usize, layer: usize, head: Option<usize>) -> Result<JsValue, JsValue> {
        let mut heads = layer_vectors(self.row_at(place_name, row)?, layer).map_err(js_error)?;
        if let Some(h) = head {
            crate::error::Error::check_index("head", h, heads.len()).map_err(js_error)?;
            heads = vec![heads.swap_remove(h)];
        }
        let first = heads.first().ok_or_else(|| JsValue::from_str("a layer without heads"))?;
        let (tq, d_k) = first.queries.dim();
        let tk = first.keys.nrows();
        let flat = |side: fn(&crate::qk::HeadVectors) -> &ndarray::Array2<f32>| {
            let values: Vec<f32> = heads.iter().flat_map(|h| side(h).iter().copied()).collect();
            Float32Array::from(&values[..])
        };
        let out = Object::new();
        set(&out, "heads", heads.len())?;
        set(&out, "dK", d_k)?;
        set(&out, "divisor", first.divisor)?;
        set(&out, "tq", tq)?;
        set(&out, "tk", tk)?;
        set(&out, "queries", flat(|h| &h.queries))?;
        set(&out, "keys", flat(|h| &h.keys))?;
        Ok(out.into())
    }
}

/// The vectors of every head of one layer over many sentences, kept while a page shows them.
#[wasm_bindgen]
pub struct QkCorpus {
    corpus: Corpus,
}

#[wasm_bindgen]
impl QkCorpus {
    #[wasm_bindgen(constructor)]
    pub fn new() -> QkCorpus {
        QkCorpus { corpus: Corpus::new() }
    }

    /// The most sentences and tokens a corpus takes: `{ sentences, tokens }`.
    pub fn limits() -> Result<JsValue, JsValue> {
        let out = Object::new();
        set(&out, "sentences", MAX_SENTENCES)?;
        set(&out, "tokens", MAX_TOKENS)?;
        Ok(out.into())
    }

    /// Adds batch row `row` of `run` at `place`, `layer`: its tokens that are not padding.
    /// A sentence past the limits is refused (`corpus_too_large`) and the corpus stays as it was.
    pub fn add(&mut self, run: &Run, place_name: &str, row: usize, layer: usize) -> Result<(), JsValue> {
        self.corpus.add(run.row_at(place_name, row)?, layer).map_err(js_error)
    }

    pub fn heads(&self) -> usize {
        self.corpus.heads()
    }

    /// Where each sentence's tokens are: `[{ queries: {start, end}, keys, queryPositions,
    /// keyPositions }]`.
    pub fn sentences(&self) -> Result<JsValue, JsValue> {
        to_js(&self.corpus.sentences)
    }

    /// Head `head`'s picture: `{ queries: Nq, keys: Nk, coords: Float32Array [(Nq+Nk)·2]
    /// (queries first), norms: Float32Array [Nq+Nk], explained: [x, y], correlation: [before,
    /// after] (null without spread), scale }`.
    pub fn picture(&self, head: usize) -> Result<JsValue, JsValue> {
        let p = self.corpus.picture(head).map_err(js_error)?;
        let (nq, nk) = self.corpus.size();
        let out = Object::new();
        set(&out, "queries", nq)?;
        set(&out, "keys", nk)?;
        set(&out, "coords", Float32Array::from(&p.coords.iter().copied().collect::<Vec<_>>()[..]))?;
        set(&out, "norms", Float32Array::from(&p.norms[..]))?;
        set(&out, "explained", Float32Array::from(&p.explained[..]))?;
        let correlation: Array = p.correlation.iter().map(|c| c.map_or(JsValue::NULL, JsValue::from)).collect();
        set(&out, "correlation", correlation)?;
        set(&out, "scale", p.scale)?;
        Ok(out.into())
    }
}

#[wasm_bindgen]
impl QkCorpus {
    /// Head `head`'s joint embedding placed by t-SNE from its PCA picture: `Float32Array`
    /// [(Nq+Nk)·2], queries first. `progress(step, steps)` is called every 25 steps.
    pub fn tsne(&self, head: usize, progress: Option<js_sys::Function>) -> Result<Float32Array, JsValue> {
        let steps = tsne::EPOCHS;
        let tell = |epoch: usize| {
            if let Some(f) = &progress {
                if epoch % 25 == 0 || epoch == steps {
                    let _ = f.call2(&JsValue::NULL, &epoch.into(), &steps.into());
                }
            }
        };
        let coords = self.corpus.tsne(head, steps, tell).map_err(js_error)?;
        Ok(Float32Array::from(&coords.iter().copied().collect::<Vec<_>>()[..]))
    }
}

impl Default for QkCorpus {
    fn default() -> Self {
        Self::new()
    }
}
