//! Named tensors from a `model.safetensors` file, as f32 arrays.
//!
//! The file is borrowed, not copied: tensors are converted to f32 one at a time as a model
//! asks for them, so a 90 MB model needs 90 MB more at most while it loads. f16 and bf16
//! are widened with the `half` crate.

use ndarray::{Array1, Array2};
use safetensors::{Dtype, SafeTensors};

use crate::error::{Error, Result};

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
        let file = SafeTensors::deserialize(bytes)
            .map_err(|e| Error::file(source, format!("not a valid safetensors file ({e})")))?;
        Ok(Weights { file, prefix: String::new(), source: source.to_string() })
    }

    /// Uses the first of `prefixes` under which `probe` exists: checkpoints saved from a task
    /// model (`BertForMaskedLM`, `GPT2LMHeadModel`, `MarianMTModel`) nest the base model.
    pub fn with_prefix_of(mut self, probe: &str, prefixes: &[&str]) -> Result<Self> {
        let names = self.file.names();
        match prefixes.iter().find(|p| names.iter().any(|n| **n == format!("{p}{probe}"))) {
            Some(p) => {
                self.prefix = p.to_string();
                Ok(self)
            }
            None => Err(Error::file(
                &self.source,
                format!("tensor `{probe}` is missing (looked under prefixes {prefixes:?})"),
            )),
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.file.tensor(&format!("{}{name}", self.prefix)).is_ok()
    }

    /// The first of `names` that exists, for tensors checkpoints store under several names
    /// (tied embeddings).
    pub fn first_of(&self, names: &[&str]) -> Result<String> {
        names
            .iter()
            .find(|n| self.has(n))
            .map(|n| n.to_string())
            .ok_or_else(|| Error::file(&self.source, format!("none of the tensors {names:?} is there")))
    }

    /// A matrix of exactly `shape`.
    pub fn matrix(&self, name: &str, shape: [usize; 2]) -> Result<Array2<f32>> {
        self.matrix_at(&format!("{}{name}", self.prefix), shape)
    }

    fn matrix_at(&self, full: &str, shape: [usize; 2]) -> Result<Array2<f32>> {
        let (data, got) = self.read(full)?;
        if got != shape {
            return Err(self.wrong_shape(full, &got, &shape));
        }
        Array2::from_shape_vec((shape[0], shape[1]), data).map_err(|_| self.wrong_shape(full, &got, &shape))
    }

    /// A vector of exactly `len`.
    pub fn vector(&self, name: &str, len: usize) -> Result<Array1<f32>> {
        let full = format!("{}{name}", self.prefix);
        let (data, got) = self.read(&full)?;
        if got != [len] {
            return Err(self.wrong_shape(&full, &got, &[len]));
        }
        Ok(Array1::from(data))
    }

    /// A matrix stored outside the prefix (a task model's head beside its base model), or
    /// `None` when the file has no tensor of that name.
    pub fn root_matrix(&self, name: &str, shape: [usize; 2]) -> Option<Result<Array2<f32>>> {
        self.file.tensor(name).is_ok().then(|| self.matrix_at(name, shape))
    }

    /// The shape of `name`, to read sizes the config does not give.
    pub fn shape(&self, name: &str) -> Result<Vec<usize>> {
        let full = format!("{}{name}", self.prefix);
        self.file.tensor(&full).map(|t| t.shape().to_vec()).map_err(|_| self.missing(&full))
    }

    /// The tensor `full` (prefix included) as f32, with its shape.
    fn read(&self, full: &str) -> Result<(Vec<f32>, Vec<usize>)> {
        let view = self.file.tensor(full).map_err(|_| self.missing(full))?;
        let bytes = view.data();
        let data: Vec<f32> = match view.dtype() {
            Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => bytes.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            Dtype::BF16 => bytes.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
            other => {
                return Err(Error::file(
                    &self.source,
                    format!("tensor `{full}` is {other:?}; headmap reads f32, f16 and bf16"),
                ))
            }
        };
        if let Some(i) = data.iter().position(|v| !v.is_finite()) {
            return Err(Error::file(
                &self.source,
                format!("tensor `{full}` holds a non-finite value at flat index {i}"),
            ));
        }
        Ok((data, view.shape().to_vec()))
    }

    fn missing(&self, full: &str) -> Error {
        Error::file(&self.source, format!("tensor `{full}` is missing"))
    }

    fn wrong_shape(&self, full: &str, got: &[usize], expected: &[usize]) -> Error {
        Error::file(&self.source, format!("tensor `{full}` has shape {got:?}, expected {expected:?}"))
    }
}
