//! What a corpus needs from Python, for `headmap.corpus` and `headmap.ray`: every head's
//! scores of many texts, each run alone, and the query–key moments and drawing of a corpus's
//! picture. The bodies of `Model.scores`, `Model.qk_moments` and `Model.qk_draw` (mod.rs keeps
//! the methods, pyo3 taking one `#[pymethods]` block a class).

use ndarray::{s, Array1, Array2, Array3, Array4};
use numpy::{IntoPyArray, PyReadonlyArray3, PyReadonlyArray4};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;

use super::{on_pool, refused, PyModel};
use crate::heads::{self, Metric, Score, ScoreOptions};
use crate::qk::moments::Moments;
use crate::qk::Corpus;
use crate::Error;

/// Texts a corpus's moments are added up in, on one thread each: fixed, so that the sums come
/// out the same on any number of threads.
const QK_GROUP: usize = 16;

#[allow(clippy::too_many_arguments)]
pub(super) fn scores<'py>(
    model: &PyModel,
    py: Python<'py>,
    texts: Vec<String>,
    scores: Option<Vec<String>>,
    place: Option<&str>,
    metric: &str,
    exclude_bos: bool,
    exclude_current_token: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let at = model.place_info(place)?;
    let asked = scores
        .map(|names| names.iter().map(|n| Score::parse(n)).collect::<Result<Vec<_>, _>>())
        .transpose()
        .map_err(refused)?
        .unwrap_or_default();
    let wanted = heads::each::wanted_at(at.place, &asked).map_err(refused)?;
    let options = ScoreOptions {
        metric: Metric::parse(metric).map_err(refused)?,
        exclude_bos,
        exclude_current_token,
        queries: None,
    };
    let results =
        py.detach(|| on_pool(&model.pool, || heads::each::each_text(&model.model, &texts, at, &wanted, &options)));
    let mut values = Array4::<f32>::from_elem((texts.len(), wanted.len(), at.layers, at.heads), f32::NAN);
    let mut tokens = Array1::<i64>::zeros(texts.len());
    let errors = PyList::empty(py);
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(heads::each::TextScores { tokens: count, scores: table }) => {
                tokens[i] = count as i64;
                for (k, scores) in table.into_iter().enumerate() {
                    values.slice_mut(s![i, k, .., ..]).assign(&scores);
                }
                errors.append(py.None())?;
            }
            Err(e) => errors.append(e.to_string())?,
        }
    }
    let doc = PyDict::new(py);
    doc.set_item("scores", wanted.iter().map(|s| s.name()).collect::<Vec<_>>())?;
    doc.set_item("values", values.into_pyarray(py))?;
    doc.set_item("tokens", tokens.into_pyarray(py))?;
    doc.set_item("errors", errors)?;
    Ok(doc)
}

pub(super) fn qk_moments<'py>(
    model: &PyModel,
    py: Python<'py>,
    texts: Vec<String>,
    layer: usize,
    place: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let at = model.place_info(place)?;
    Error::check_index("layer", layer, at.layers).map_err(refused)?;
    let (heads, d_k, place) = (at.heads, at.d_k, at.place);
    let group = |texts: &[String]| {
        let mut corpus = Corpus::with_limits(usize::MAX, usize::MAX);
        let outcomes: Vec<Result<[usize; 2], Error>> = texts
            .iter()
            .map(|text| {
                let run = model.vectors_of(text, place, layer)?;
                let row = run.place(place)?.row(0)?;
                corpus.add(row, layer)?;
                let valid = |v: &[bool]| v.iter().filter(|&&v| v).count();
                Ok([valid(&row.query_valid), valid(&row.key_valid)])
            })
            .collect();
        let moments = (0..heads)
            .map(|h| if corpus.sentences.is_empty() { Ok(Moments::new(d_k)) } else { corpus.moments(h) })
            .collect::<Result<Vec<_>, Error>>();
        (outcomes, moments)
    };
    let groups: Vec<_> = py.detach(|| on_pool(&model.pool, || texts.par_chunks(QK_GROUP).map(group).collect()));
    let mut total: Vec<Moments> = (0..heads).map(|_| Moments::new(d_k)).collect();
    let mut tokens = Array2::<i64>::zeros((texts.len(), 2));
    let errors = PyList::empty(py);
    for (g, (outcomes, moments)) in groups.into_iter().enumerate() {
        for (h, m) in moments.map_err(refused)?.iter().enumerate() {
            total[h].merge(m).map_err(refused)?;
        }
        for (i, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                Ok(counts) => {
                    let n = g * QK_GROUP + i;
                    tokens[[n, 0]] = counts[0] as i64;
                    tokens[[n, 1]] = counts[1] as i64;
                    errors.append(py.None())?;
                }
                Err(e) => errors.append(e.to_string())?,
            }
        }
    }
    let mut sum = Array3::<f64>::zeros((heads, 2, d_k));
    let mut outer = Array4::<f64>::zeros((heads, 2, d_k, d_k));
    for (h, m) in total.iter().enumerate() {
        for side in 0..2 {
            sum.slice_mut(s![h, side, ..]).assign(&m.sum[side]);
            outer.slice_mut(s![h, side, .., ..]).assign(&m.outer[side]);
        }
    }
    let count = total.first().map_or([0, 0], |m| m.count);
    let doc = PyDict::new(py);
    doc.set_item("heads", heads)?;
    doc.set_item("d_k", d_k)?;
    doc.set_item("count", Array1::from(count.map(|n| n as i64).to_vec()).into_pyarray(py))?;
    doc.set_item("sum", sum.into_pyarray(py))?;
    doc.set_item("outer", outer.into_pyarray(py))?;
    doc.set_item("tokens", tokens.into_pyarray(py))?;
    doc.set_item("errors", errors)?;
    Ok(doc)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn qk_draw<'py>(
    model: &PyModel,
    py: Python<'py>,
    texts: Vec<String>,
    layer: usize,
    count: [usize; 2],
    sum: PyReadonlyArray3<'py, f64>,
    outer: PyReadonlyArray4<'py, f64>,
    place: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let at = model.place_info(place)?;
    Error::check_index("layer", layer, at.layers).map_err(refused)?;
    let (heads, d_k, place) = (at.heads, at.d_k, at.place);
    let (sum, outer) = (sum.as_array(), outer.as_array());
    if sum.dim() != (heads, 2, d_k) || outer.dim() != (heads, 2, d_k, d_k) {
        let got = [sum.shape(), outer.shape()].concat();
        return Err(refused(Error::shape("the moments", &got, &[heads, 2, d_k, heads, 2, d_k, d_k])));
    }
    let axes = (0..heads)
        .map(|h| {
            let side = |i: usize| (sum.slice(s![h, i, ..]).to_owned(), outer.slice(s![h, i, .., ..]).to_owned());
            let ((sq, oq), (sk, ok)) = (side(0), side(1));
            Moments::from_parts(count, [sq, sk], [oq, ok])?.axes()
        })
        .collect::<Result<Vec<_>, Error>>()
        .map_err(refused)?;
    let drawn = py.detach(|| {
        on_pool(&model.pool, || {
            let mut corpus = Corpus::with_limits(usize::MAX, usize::MAX);
            let mut labels = Vec::with_capacity(texts.len());
            for text in &texts {
                let run = model.vectors_of(text, place, layer)?;
                let row = run.place(place)?.row(0)?;
                corpus.add(row, layer)?;
                labels.push((row.queries.clone(), row.keys.clone()));
            }
            let pictures = (0..heads).map(|h| corpus.picture_on(h, &axes[h])).collect::<Result<Vec<_>, Error>>()?;
            Ok::<_, Error>((corpus, labels, pictures))
        })
    });
    let (corpus, labels, pictures) = drawn.map_err(refused)?;
    let token = |t: &crate::tokenize::Token| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("label", &t.label)?;
        d.set_item("kind", t.kind.name())?;
        d.set_item("text", &t.text)?;
        Ok(d)
    };
    let sentences = PyList::empty(py);
    for (sentence, (queries, keys)) in corpus.sentences.iter().zip(&labels) {
        let d = PyDict::new(py);
        d.set_item("queryPositions", &sentence.query_positions)?;
        d.set_item("keyPositions", &sentence.key_positions)?;
        let side = |tokens: &[crate::tokenize::Token], at: &[usize]| -> PyResult<Bound<'py, PyList>> {
            let list = PyList::empty(py);
            for &p in at {
                list.append(token(&tokens[p])?)?;
            }
            Ok(list)
        };
        d.set_item("queries", side(queries, &sentence.query_positions)?)?;
        d.set_item("keys", side(keys, &sentence.key_positions)?)?;
        sentences.append(d)?;
    }
    let (nq, nk) = corpus.size();
    let drawn = PyList::empty(py);
    for p in &pictures {
        let d = PyDict::new(py);
        d.set_item("queries", nq)?;
        d.set_item("keys", nk)?;
        d.set_item("coords", p.coords.iter().copied().collect::<Vec<f32>>())?;
        d.set_item("norms", &p.norms)?;
        d.set_item("explained", &p.explained)?;
        d.set_item("correlation", p.correlation.to_vec())?;
        d.set_item("scale", p.scale)?;
        drawn.append(d)?;
    }
    let doc = PyDict::new(py);
    doc.set_item("heads", heads)?;
    doc.set_item("sentences", sentences)?;
    doc.set_item("pictures", drawn)?;
    Ok(doc)
}
