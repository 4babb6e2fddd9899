//! Named tensors from a `model.safetensors` file, or from the shards a
//! `model.safetensors.index.json` names, as f32 arrays.
//!
//! The files are borrowed, not copied: tensors are converted to f32 one at a time as a model
//! asks for them, so a 90 MB model needs 90 MB more at most while it loads. f16 and bf16
//! are widened with the `half` crate. The `safetensors` crate checks a header against the
//! bytes there are (its length, every tensor's offsets and size) before anything is read,
//! so a header that claims more than the file holds is refused without allocating.
//!
//! Loaders name tensors through a [`Vars`] scope, as candle's `VarBuilder` does:
//! `w.root().pp("encoder.layer").pp(3).linear("attention.self.query", d, d)` reads
//! `encoder.layer.3.attention.self.query.weight` and `.bias`.

use std::collections::HashMap;

use ndarray::{Array1, Array2};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::error::{Error, FileProblem, Result};
use crate::nn::{LayerNorm, Linear, RmsNorm};

/// The name a sharded checkpoint's index goes by.
pub const INDEX: &str = "model.safetensors.index.json";

/// One safetensors file and its name for messages.
struct File<'a> {
    name: String,
    tensors: SafeTensors<'a>,
}

/// The tensors of one safetensors file or of a sharded checkpoint, looked up by name under an
/// optional prefix.
pub struct Weights<'a> {
    files: Vec<File<'a>>,
    /// A sharded checkpoint's `weight_map`: tensor name → its file in `files`.
    map: Option<HashMap<String, usize>>,
    /// What the checkpoint puts before the names a model expects: `""`, `"bert."`, `"model."`, …
    prefix: String,
}

#[derive(Deserialize)]
struct Index {
    weight_map: HashMap<String, String>,
}

/// The shard files a `model.safetensors.index.json` names, each once, in order: what a caller
/// must read and pass with it.
pub fn shard_names(index: &[u8]) -> Result<Vec<String>> {
    let index: Index = serde_json::from_slice(index).map_err(|_| Error::file(INDEX, FileProblem::NotShardIndex))?;
    let mut names: Vec<String> = index.weight_map.into_values().collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The last part of a path: shards may be given with their folder.
pub fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

impl<'a> Weights<'a> {
    /// Reads the header of `bytes`; `source` names the file in error messages.
    pub fn parse(bytes: &'a [u8], source: &str) -> Result<Self> {
        let tensors = SafeTensors::deserialize(bytes).map_err(|_| Error::file(source, FileProblem::NotSafetensors))?;
        Ok(Weights { files: vec![File { name: source.to_string(), tensors }], map: None, prefix: String::new() })
    }

    /// A sharded checkpoint: its index and the shards it names (name → bytes). Refuses an index
    /// that names a shard not given, or puts a tensor in a shard that does not hold it.
    pub fn sharded(index: &[u8], shards: &[(&str, &'a [u8])]) -> Result<Self> {
        let index: Index = serde_json::from_slice(index).map_err(|e| {
            let problem = match e.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                    FileProblem::NotJson { line: e.line(), column: e.column() }
                }
                _ => FileProblem::NotShardIndex,
            };
            Error::file(INDEX, problem)
        })?;
        let mut files: Vec<File<'a>> = Vec::new();
        let mut map = HashMap::with_capacity(index.weight_map.len());
        let mut names: Vec<(&String, &String)> = index.weight_map.iter().collect();
        names.sort(); // the first problem reported is the same every time
        for (tensor, shard) in names {
            let at = match files.iter().position(|f| f.name == base_name(shard)) {
                Some(at) => at,
                None => {
                    let bytes = shards
                        .iter()
                        .find(|(name, _)| base_name(name) == base_name(shard))
                        .map(|(_, bytes)| *bytes)
                        .ok_or_else(|| Error::file(INDEX, FileProblem::MissingShard { shard: shard.clone() }))?;
                    let name = base_name(shard).to_string();
                    let tensors =
                        SafeTensors::deserialize(bytes).map_err(|_| Error::file(&name, FileProblem::NotSafetensors))?;
                    files.push(File { name, tensors });
                    files.len() - 1
                }
            };
            if files[at].tensors.tensor(tensor).is_err() {
                let problem = FileProblem::TensorNotInShard { name: tensor.clone(), shard: shard.clone() };
                return Err(Error::file(INDEX, problem));
            }
            map.insert(tensor.clone(), at);
        }
        Ok(Weights { files, map: Some(map), prefix: String::new() })
    }

    /// The tensor `full` and the file it is in.
    fn find(&self, full: &str) -> Option<(TensorView<'_>, &str)> {
        let file = match &self.map {
            Some(map) => &self.files[*map.get(full)?],
            None => self.files.first()?,
        };
        Some((file.tensors.tensor(full).ok()?, &file.name))
    }

    /// Where a missing tensor should have been: the file, or the index of the shards.
    fn source(&self) -> &str {
        match (&self.map, self.files.first()) {
            (None, Some(file)) => &file.name,
            _ => INDEX,
        }
    }

    /// Uses the first of `prefixes` under which `probe` exists: checkpoints saved from a task
    /// model (`BertForMaskedLM`, `GPT2LMHeadModel`, `MarianMTModel`) nest the base model.
    pub fn with_prefix_of(mut self, probe: &str, prefixes: &[&str]) -> Result<Self> {
        match prefixes.iter().find(|p| self.find(&format!("{p}{probe}")).is_some()) {
            Some(p) => {
                self.prefix = p.to_string();
                Ok(self)
            }
            None => Err(self.problem(FileProblem::MissingTensor { name: format!("{}{probe}", prefixes[0]) })),
        }
    }

    /// The scope of every name under the prefix.
    pub fn root(&self) -> Vars<'_, 'a> {
        Vars { weights: self, path: String::new(), prefixed: true }
    }

    /// The scope of names outside the prefix, where a task model keeps its head
    /// (`cls.predictions`, `lm_head`, `vocab_transform`).
    pub fn outside(&self) -> Vars<'_, 'a> {
        Vars { weights: self, path: String::new(), prefixed: false }
    }

    /// A matrix stored outside the prefix (a task model's head beside its base model), or
    /// `None` when the file has no tensor of that name.
    pub fn root_matrix(&self, name: &str, shape: [usize; 2]) -> Option<Result<Array2<f32>>> {
        self.find(name).is_some().then(|| self.matrix_at(name, shape))
    }

    fn has_full(&self, full: &str) -> bool {
        self.find(full).is_some()
    }

    fn matrix_at(&self, full: &str, shape: [usize; 2]) -> Result<Array2<f32>> {
        let (data, got, file) = self.read(full)?;
        if got != shape {
            return Err(wrong_shape(file, full, &got, &shape));
        }
        Array2::from_shape_vec((shape[0], shape[1]), data).map_err(|_| wrong_shape(file, full, &got, &shape))
    }

    fn vector_at(&self, full: &str, len: usize) -> Result<Array1<f32>> {
        let (data, got, file) = self.read(full)?;
        if got != [len] {
            return Err(wrong_shape(file, full, &got, &[len]));
        }
        Ok(Array1::from(data))
    }

    /// The tensor `full` (prefix included) as f32, with its shape and its file's name.
    fn read(&self, full: &str) -> Result<(Vec<f32>, Vec<usize>, &str)> {
        let (view, file) =
            self.find(full).ok_or_else(|| self.problem(FileProblem::MissingTensor { name: full.to_string() }))?;
        let bytes = view.data();
        let data: Vec<f32> = match view.dtype() {
            Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => bytes.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            Dtype::BF16 => bytes.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            other => {
                let dtype = format!("{other:?}").to_lowercase();
                return Err(Error::file(file, FileProblem::UnsupportedDtype { name: full.to_string(), dtype }));
            }
        };
        if let Some(index) = data.iter().position(|v| !v.is_finite()) {
            return Err(Error::file(file, FileProblem::NonFiniteTensor { name: full.to_string(), index }));
        }
        Ok((data, view.shape().to_vec(), file))
    }

    fn problem(&self, problem: FileProblem) -> Error {
        Error::file(self.source(), problem)
    }
}

fn wrong_shape(file: &str, full: &str, got: &[usize], expected: &[usize]) -> Error {
    Error::file(
        file,
        FileProblem::WrongShape { name: full.to_string(), got: got.to_vec(), expected: expected.to_vec() },
    )
}

/// A scope of tensor names: everything read through it is named `{path}.{name}`.
#[derive(Clone)]
pub struct Vars<'w, 'a> {
    weights: &'w Weights<'a>,
    path: String,
    /// Whether names are under the checkpoint's prefix.
    prefixed: bool,
}

impl<'w, 'a> Vars<'w, 'a> {
    /// The scope `name` inside this one (a number works too: `pp(3)` for layer 3).
    pub fn pp(&self, name: impl std::fmt::Display) -> Vars<'w, 'a> {
        let path = if self.path.is_empty() { name.to_string() } else { format!("{}.{name}", self.path) };
        Vars { weights: self.weights, path, prefixed: self.prefixed }
    }

    fn full(&self, name: &str) -> String {
        let prefix = if self.prefixed { self.weights.prefix.as_str() } else { "" };
        if self.path.is_empty() {
            format!("{prefix}{name}")
        } else {
            format!("{prefix}{}.{name}", self.path)
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.weights.has_full(&self.full(name))
    }

    /// The first of `names` that exists here, for tensors checkpoints store under several
    /// names (tied embeddings).
    pub fn first_of<'n>(&self, names: &[&'n str]) -> Result<&'n str> {
        names.iter().find(|n| self.has(n)).copied().ok_or_else(|| {
            self.weights.problem(FileProblem::NoneOfTensors { names: names.iter().map(|n| self.full(n)).collect() })
        })
    }

    /// A matrix of exactly `shape`.
    pub fn matrix(&self, name: &str, shape: [usize; 2]) -> Result<Array2<f32>> {
        self.weights.matrix_at(&self.full(name), shape)
    }

    /// A vector of exactly `len`.
    pub fn vector(&self, name: &str, len: usize) -> Result<Array1<f32>> {
        self.weights.vector_at(&self.full(name), len)
    }

    /// A PyTorch `nn.Linear` named `name` ({name}.weight stored (d_out, d_in), {name}.bias),
    /// turned to headmap's (d_in, d_out).
    pub fn linear(&self, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
        let scope = self.pp(name);
        let weight = scope.matrix("weight", [d_out, d_in])?.reversed_axes();
        let bias = scope.vector("bias", d_out)?;
        Linear::new(name, weight.as_standard_layout().into_owned(), Some(bias))
    }

    /// A `nn.Linear` stored without a bias (`bias=False`).
    pub fn linear_no_bias(&self, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
        self.linear_with(name, d_in, d_out, false)
    }

    /// A `nn.Linear` with a bias iff `bias` (a config switch such as `attention_bias`).
    pub fn linear_with(&self, name: &str, d_in: usize, d_out: usize, bias: bool) -> Result<Linear> {
        if bias {
            return self.linear(name, d_in, d_out);
        }
        let weight = self.pp(name).matrix("weight", [d_out, d_in])?.reversed_axes();
        Linear::new(name, weight.as_standard_layout().into_owned(), None)
    }

    /// An RMS norm named `name` ({name}.weight only).
    pub fn rms_norm(&self, name: &str, d: usize, eps: f32) -> Result<RmsNorm> {
        Ok(RmsNorm { weight: self.pp(name).vector("weight", d)?, eps: norm_eps(name, eps)? })
    }

    /// GPT-2's `Conv1D`, already stored as (d_in, d_out).
    pub fn conv1d(&self, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
        let scope = self.pp(name);
        Linear::new(name, scope.matrix("weight", [d_in, d_out])?, Some(scope.vector("bias", d_out)?))
    }

    /// A `nn.LayerNorm` named `name` ({name}.weight, {name}.bias).
    pub fn layer_norm(&self, name: &str, d: usize, eps: f32) -> Result<LayerNorm> {
        let scope = self.pp(name);
        Ok(LayerNorm { gamma: scope.vector("weight", d)?, beta: scope.vector("bias", d)?, eps: norm_eps(name, eps)? })
    }
}

/// A norm's epsilon from config.json, refused unless a 32-bit float holds it and it is not
/// negative: a negative one turned a row's variance negative and its values into NaN, and one
/// past f32's range became infinity, every row then zero.
fn norm_eps(name: &str, eps: f32) -> Result<f32> {
    if eps.is_finite() && eps >= 0.0 {
        return Ok(eps);
    }
    let setting = format!("{name}'s epsilon (layer_norm_eps, layer_norm_epsilon or rms_norm_eps)");
    let reason = "it must be a number from 0 that a 32-bit float holds";
    Err(Error::file("config.json", FileProblem::impossible(&setting, eps, reason)))
}
