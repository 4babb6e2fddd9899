//! Named tensors from a `model.safetensors` file, as f32 arrays.
//!
//! The file is borrowed, not copied: tensors are converted to f32 one at a time as a model
//! asks for them, so a 90 MB model needs 90 MB more at most while it loads. f16 and bf16
//! are widened with the `half` crate.
//!
//! Loaders name tensors through a [`Vars`] scope, as candle's `VarBuilder` does:
//! `w.root().pp("encoder.layer").pp(3).linear("attention.self.query", d, d)` reads
//! `encoder.layer.3.attention.self.query.weight` and `.bias`.

use ndarray::{Array1, Array2};
use safetensors::{Dtype, SafeTensors};

use crate::error::{Error, FileProblem, Result};
use crate::nn::{LayerNorm, Linear};

/// The tensors of one safetensors file, looked up by name under an optional prefix.
pub struct Weights<'a> {
    file: SafeTensors<'a>,
    /// What the checkpoint puts before the names a model expects: `""`, `"bert."`, `"model."`, …
    prefix: String,
    source: String,
}

impl<'a> Weights<'a> {
    /// Reads the header of `bytes`; `source` names the file in error messages.
    pub fn parse(bytes: &'a [u8], source: &str) -> Result<Self> {
        let file = SafeTensors::deserialize(bytes).map_err(|_| Error::file(source, FileProblem::NotSafetensors))?;
        Ok(Weights { file, prefix: String::new(), source: source.to_string() })
    }

    /// Uses the first of `prefixes` under which `probe` exists: checkpoints saved from a task
    /// model (`BertForMaskedLM`, `GPT2LMHeadModel`, `MarianMTModel`) nest the base model.
    pub fn with_prefix_of(mut self, probe: &str, prefixes: &[&str]) -> Result<Self> {
        match prefixes.iter().find(|p| self.file.tensor(&format!("{p}{probe}")).is_ok()) {
            Some(p) => {
                self.prefix = p.to_string();
                Ok(self)
            }
            None => Err(self.problem(FileProblem::MissingTensor { name: format!("{}{probe}", prefixes[0]) })),
        }
    }

    /// The scope of every name under the prefix.
    pub fn root(&self) -> Vars<'_, 'a> {
        Vars { weights: self, path: String::new() }
    }

    /// A matrix stored outside the prefix (a task model's head beside its base model), or
    /// `None` when the file has no tensor of that name.
    pub fn root_matrix(&self, name: &str, shape: [usize; 2]) -> Option<Result<Array2<f32>>> {
        self.file.tensor(name).is_ok().then(|| self.matrix_at(name, shape))
    }

    fn has_full(&self, full: &str) -> bool {
        self.file.tensor(full).is_ok()
    }

    fn matrix_at(&self, full: &str, shape: [usize; 2]) -> Result<Array2<f32>> {
        let (data, got) = self.read(full)?;
        if got != shape {
            return Err(self.wrong_shape(full, &got, &shape));
        }
        Array2::from_shape_vec((shape[0], shape[1]), data).map_err(|_| self.wrong_shape(full, &got, &shape))
    }

    fn vector_at(&self, full: &str, len: usize) -> Result<Array1<f32>> {
        let (data, got) = self.read(full)?;
        if got != [len] {
            return Err(self.wrong_shape(full, &got, &[len]));
        }
        Ok(Array1::from(data))
    }

    /// The tensor `full` (prefix included) as f32, with its shape.
    fn read(&self, full: &str) -> Result<(Vec<f32>, Vec<usize>)> {
        let view =
            self.file.tensor(full).map_err(|_| self.problem(FileProblem::MissingTensor { name: full.to_string() }))?;
        let bytes = view.data();
        let data: Vec<f32> = match view.dtype() {
            Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => bytes.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            Dtype::BF16 => bytes.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            other => {
                let dtype = format!("{other:?}").to_lowercase();
                return Err(self.problem(FileProblem::UnsupportedDtype { name: full.to_string(), dtype }));
            }
        };
        if let Some(index) = data.iter().position(|v| !v.is_finite()) {
            return Err(self.problem(FileProblem::NonFiniteTensor { name: full.to_string(), index }));
        }
        Ok((data, view.shape().to_vec()))
    }

    fn problem(&self, problem: FileProblem) -> Error {
        Error::file(&self.source, problem)
    }

    fn wrong_shape(&self, full: &str, got: &[usize], expected: &[usize]) -> Error {
        self.problem(FileProblem::WrongShape { name: full.to_string(), got: got.to_vec(), expected: expected.to_vec() })
    }
}

/// A scope of tensor names: everything read through it is named `{path}.{name}`.
#[derive(Clone)]
pub struct Vars<'w, 'a> {
    weights: &'w Weights<'a>,
    path: String,
}

impl<'w, 'a> Vars<'w, 'a> {
    /// The scope `name` inside this one (a number works too: `pp(3)` for layer 3).
    pub fn pp(&self, name: impl std::fmt::Display) -> Vars<'w, 'a> {
        let path = if self.path.is_empty() { name.to_string() } else { format!("{}.{name}", self.path) };
        Vars { weights: self.weights, path }
    }

    fn full(&self, name: &str) -> String {
        if self.path.is_empty() {
            format!("{}{name}", self.weights.prefix)
        } else {
            format!("{}{}.{name}", self.weights.prefix, self.path)
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

    /// GPT-2's `Conv1D`, already stored as (d_in, d_out).
    pub fn conv1d(&self, name: &str, d_in: usize, d_out: usize) -> Result<Linear> {
        let scope = self.pp(name);
        Linear::new(name, scope.matrix("weight", [d_in, d_out])?, Some(scope.vector("bias", d_out)?))
    }

    /// A `nn.LayerNorm` named `name` ({name}.weight, {name}.bias).
    pub fn layer_norm(&self, name: &str, d: usize, eps: f32) -> Result<LayerNorm> {
        let scope = self.pp(name);
        Ok(LayerNorm { gamma: scope.vector("weight", d)?, beta: scope.vector("bias", d)?, eps })
    }
}
