//! The one error type of the crate. Messages are lowercase and name what is wrong and where,
//! because the explorer shows them to users as they are.

/// Everything that can go wrong between a user's text and a heatmap.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("the text is empty: type a sentence to see its attention")]
    EmptyText,

    #[error("the text has {tokens} tokens, more than the maximum of {max}")]
    TooLong { tokens: usize, max: usize },

    #[error("{heads} heads do not divide d_model = {d_model}: each head takes d_model / heads columns")]
    HeadsDoNotDivide { d_model: usize, heads: usize },

    #[error("`{what}` has shape {got:?}, expected {expected:?}")]
    Shape { what: String, got: Vec<usize>, expected: Vec<usize> },

    #[error("`{what}` holds a non-finite value (NaN or infinity) at {index:?}")]
    NonFinite { what: String, index: Vec<usize> },

    #[error("invalid setting `{name}`: {reason}")]
    Setting { name: String, reason: String },

    /// A model file that cannot be used: which file, and what is wrong with it.
    #[error("{file}: {reason}")]
    File { file: String, reason: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn shape(what: impl Into<String>, got: &[usize], expected: &[usize]) -> Self {
        Error::Shape { what: what.into(), got: got.to_vec(), expected: expected.to_vec() }
    }

    pub fn file(file: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::File { file: file.into(), reason: reason.into() }
    }

    pub(crate) fn setting(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Setting { name: name.into(), reason: reason.into() }
    }
}

/// Fails with [`Error::NonFinite`] at the first NaN or infinity in `values`.
pub(crate) fn ensure_finite<'a, D: ndarray::Dimension>(
    what: &str,
    values: ndarray::ArrayView<'a, f32, D>,
) -> Result<()> {
    match values.indexed_iter().find(|(_, v)| !v.is_finite()) {
        None => Ok(()),
        Some((index, _)) => Err(Error::NonFinite {
            what: what.to_string(),
            index: ndarray::IntoDimension::into_dimension(index).slice().to_vec(),
        }),
    }
}
