//! The one error type of the crate. Messages are lowercase and name what is wrong and where,
//! because the explorer shows them to users as they are.
//!
//! Every error also has a stable `code` and named values (it serializes as
//! `{ "code": "too_long", "tokens": 2100, "max": 2048 }`), so a page can word it in the
//! reader's language instead of showing the English message.

use serde::Serialize;

/// Everything that can go wrong between a user's text and a heatmap.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Error {
    #[error("the text is empty: type a sentence to see its attention")]
    EmptyText,

    #[error("the text has {tokens} tokens, more than the maximum of {max}")]
    TooLong { tokens: usize, max: usize },

    #[error("the text has {chars} characters, more than the maximum of {max}")]
    TextTooLong { chars: usize, max: usize },

    #[error("{texts} sentences, more than the batch maximum of {max}")]
    BatchTooLarge { texts: usize, max: usize },

    #[error("{targets} targets for {texts} sources: give one per source, or none")]
    TargetsMismatch { targets: usize, texts: usize },

    #[error("{heads} heads do not divide d_model = {d_model}: each head takes d_model / heads columns")]
    HeadsDoNotDivide { d_model: usize, heads: usize },

    #[error("{kv_heads} key/value heads do not divide {heads} query heads: each key/value head serves an equal group")]
    KvHeadsDoNotDivide { heads: usize, kv_heads: usize },

    #[error("`{what}` has shape {got:?}, expected {expected:?}")]
    Shape { what: String, got: Vec<usize>, expected: Vec<usize> },

    #[error("`{what}` holds a non-finite value (NaN or infinity) at {index:?}")]
    NonFinite { what: String, index: Vec<usize> },

    /// A [`Error::NonFinite`] inside one attention block of a model: a weight too large for
    /// f32 (loading refuses NaN and infinity themselves) overflowed there or before it.
    #[cfg(feature = "hf")]
    #[error(
        "`{what}` of layer {layer}'s {place} attention holds a non-finite value (NaN or infinity) at {index:?}: a weight of the model is too large"
    )]
    NonFiniteAt { what: String, index: Vec<usize>, place: String, layer: usize },

    /// A name that is not one of the accepted ones: a mask, a place, a preset.
    #[error("unknown {setting} `{value}`: use {}", .expected.join(", "))]
    UnknownName { setting: String, value: String, expected: Vec<String> },

    /// A layer, head or batch row that the model or the run does not have.
    #[error("{what} {index} does not exist: there are {count}")]
    NoSuch { what: String, index: usize, count: usize },

    /// A setting outside what headmap accepts: a size, a number of layers.
    #[error("{setting} {value} is outside {min}..={max}")]
    OutOfRange { setting: String, value: usize, min: usize, max: usize },

    #[error("`{what}`: {values} values do not fill rows of {cols}")]
    Ragged { what: String, values: usize, cols: usize },

    #[error("the {mask} mask does not apply to {place}: use {}", .expected.join(" or "))]
    MaskNotForPlace { mask: String, place: String, expected: Vec<String> },

    #[error("this model has no {place} attention; it has {}", .have.join(", "))]
    PlaceAbsent { place: String, have: Vec<String> },

    #[error("{architecture} cannot write text of its own: that needs a decoder-only or an encoder–decoder model")]
    CannotGenerate { architecture: String },

    /// A prompt that fills every position the model reads: what is written must read back.
    #[error("the prompt has {tokens} tokens, every one of the {max} positions the model reads: there is no room to write; shorten it")]
    NoRoomToWrite { tokens: usize, max: usize },

    #[cfg(feature = "hf")]
    /// Sampling's temperature must be above 0; without one, decoding is greedy.
    #[error("temperature {value} must be greater than 0 (leave it out for greedy decoding)")]
    BadTemperature { value: f32 },

    #[cfg(feature = "hf")]
    /// Nucleus sampling keeps the smallest set of tokens whose probabilities add up to top-p.
    #[error("top-p {value} must be greater than 0 and at most 1")]
    BadTopP { value: f32 },

    #[cfg(feature = "hf")]
    /// A trainer's size, seed or learning rate outside what it takes.
    #[error("the training setting {setting} is {value}: it must be {expected}")]
    BadTrainSetting { setting: String, value: String, expected: String },

    #[cfg(feature = "hf")]
    /// Training stopped where the loss stopped being a number; the last good weights are kept.
    #[error("training diverged at step {step}: the loss is {loss}, so the last good weights are kept")]
    Diverged { step: usize, loss: f32 },

    #[error("token id {id} is outside the model's vocabulary of {vocab}")]
    TokenOutOfVocabulary { id: u32, vocab: usize },

    #[error("the tokenizer cannot split this text")]
    TokenizerFailed,

    #[cfg(feature = "hf")]
    /// A score that compares query and key positions, asked of cross-attention (whose
    /// queries and keys are different sentences).
    #[error("the {score} score compares positions in one sentence: {place} attention has two")]
    ScoreNeedsSelf { score: String, place: String },

    #[cfg(feature = "hf")]
    #[error("rollout follows one sentence through its layers: {place} attention has two")]
    RolloutNeedsSelf { place: String },

    #[cfg(feature = "hf")]
    #[error("no {side} chosen: choose at least one token of the text (padding is left out)")]
    EmptySelection { side: String },

    #[cfg(feature = "hf")]
    #[error("{side} position {position} does not exist: the row has {count} tokens")]
    PositionOutOfRange { side: String, position: usize, count: usize },

    #[cfg(feature = "hf")]
    /// The induction probe at a place where a token sees the tokens after it.
    #[error("the induction probe needs causal attention: {place} attention is not causal in this model")]
    ProbeNeedsCausal { place: String },

    #[cfg(feature = "hf")]
    #[error("the induction probe draws tokens from a vocabulary: {architecture} has none")]
    NoVocabulary { architecture: String },

    #[cfg(feature = "hf")]
    #[error("{architecture} has no output head ({missing} is missing): predictions, the logit lens and patching need one; every attention view still works")]
    NoOutputHead { architecture: String, missing: String },

    #[cfg(feature = "hf")]
    #[error(
        "`{spec}` is not a head: write layer.head counted from 0 (1.3), optionally after a place (decoder_self:1.3)"
    )]
    BadHeadSpec { spec: String },

    #[cfg(feature = "hf")]
    #[error("the answer `{word}` is {} tokens ({}), not one: choose a word the model reads as one token", tokens.len(), tokens.join(" "))]
    AnswerNotOneToken { word: String, tokens: Vec<String> },

    #[cfg(feature = "hf")]
    #[error("the clean text has {clean} tokens and the corrupted text {corrupt}: patching needs the same length")]
    LengthsDiffer { clean: usize, corrupt: usize },

    #[error("a worker thread could not start: {reason}")]
    Thread { reason: String },

    #[cfg(feature = "hf")]
    #[error("the corpus has no sentence: give at least one line of text")]
    EmptyCorpus,

    #[cfg(feature = "hf")]
    #[error("the corpus has {sentences} sentences and {tokens} tokens: at most {max_sentences} sentences and {max_tokens} tokens are drawn at once")]
    CorpusTooLarge { sentences: usize, tokens: usize, max_sentences: usize, max_tokens: usize },

    #[cfg(feature = "hf")]
    #[error("the file could not be written: {reason}")]
    Write { reason: String },

    /// A trace, a new sentence or a mask asked of weights read from a file.
    #[error("this needs the model that computed the weights: a file of attention holds weights and tokens only")]
    NeedsModel,

    #[error("this run would keep {megabytes} MB of attention weights, more than the {max} MB headmap allows: use shorter text, fewer sentences or fewer layers")]
    TooLarge { megabytes: usize, max: usize },

    /// A model file that cannot be used: which file, and what is wrong with it. (Only real
    /// models read files: the toy-only wasm leaves file problems out, 3 KB of a widget.)
    #[cfg(feature = "hf")]
    #[error("{file}: {problem}")]
    File { file: String, problem: FileProblem },
}

/// What is wrong with a model file, worded for a person (never a parser's own message).
#[cfg(feature = "hf")]
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum FileProblem {
    #[error("the file is missing")]
    Missing,

    #[error("cannot be read: {reason}")]
    Unreadable { reason: String },

    #[error("not valid JSON (line {line}, column {column})")]
    NotJson { line: usize, column: usize },

    /// Valid JSON of the wrong kind: `null`, a list, a number or text where settings belong.
    #[error("valid JSON, but {found} where an object of settings belongs")]
    NotAnObject { found: String },

    #[error("`{field}` has the wrong type: expected {expected}")]
    WrongType { field: String, expected: String },

    #[error("it has no `model_type`")]
    NoModelType,

    #[error("model_type `{model_type}` is not supported: headmap reads {}", and_list(.supported))]
    UnsupportedModel { model_type: String, supported: Vec<String> },

    #[error("`{setting}` = {value} is not supported: {reason}")]
    UnsupportedSetting { setting: String, value: String, reason: String },

    #[error("`{setting}` = {value} is impossible: {reason}")]
    ImpossibleSetting { setting: String, value: String, reason: String },

    #[error("not a valid safetensors file: it is damaged, truncated or of another format")]
    NotSafetensors,

    #[error("tensor `{name}` is missing")]
    MissingTensor { name: String },

    #[error("not a sharded-checkpoint index: it needs a `weight_map` of tensor names to file names")]
    NotShardIndex,

    #[error("it names the shard `{shard}`, which was not given")]
    MissingShard { shard: String },

    #[error("it puts tensor `{name}` in `{shard}`, which does not hold it")]
    TensorNotInShard { name: String, shard: String },

    #[error("none of the tensors {} is there", .names.join(", "))]
    NoneOfTensors { names: Vec<String> },

    #[error("tensor `{name}` has shape {got:?}, expected {expected:?}")]
    WrongShape { name: String, got: Vec<usize>, expected: Vec<usize> },

    #[error("tensor `{name}` is {dtype}; headmap reads f32, f16 and bf16")]
    UnsupportedDtype { name: String, dtype: String },

    #[error("tensor `{name}` holds a non-finite value at flat index {index}")]
    NonFiniteTensor { name: String, index: usize },

    #[error("the tokenizer does not load: this is not a tokenizer file headmap can read")]
    NotTokenizer,

    #[error("its normaliser can make more than {normalized} characters of a text of {chars}: headmap would run out of memory")]
    NormalizerGrows { chars: usize, normalized: usize },

    #[error("the tokenizer's vocabulary has {tokenizer} tokens, more than the model's {model}")]
    VocabularyTooLarge { tokenizer: usize, model: usize },

    #[error("missing: give tokenizer.json, or for Marian models source.spm and vocab.json")]
    NoTokenizer,

    #[error("not a SentencePiece model: {reason}")]
    NotSentencePiece { reason: String },

    #[error("not a JSON map of pieces to ids")]
    NotVocabulary,

    #[error("it has no `{piece}`")]
    MissingPiece { piece: String },

    #[error("not a file of attention weights: headmap opens its own JSON and safetensors with headmap's metadata")]
    NotAttention,

    #[error("{megabytes} MB, more than the {max} MB a page opens")]
    TooLarge { megabytes: usize, max: usize },

    #[error("`{at}` is missing")]
    MissingField { at: String },

    #[error("self-attention `{at}` has {queries} queries and {keys} keys: its tokens attend to themselves, as many on each side")]
    NotSquare { at: String, queries: usize, keys: usize },

    #[error("`{at}` has {count} {what}, more than the {max} a page opens")]
    TooMany { at: String, what: String, count: usize, max: usize },

    #[error("`{at}` has {tokens} {side} tokens, but its weights have {size}")]
    TokensMismatch { at: String, side: String, tokens: usize, size: usize },

    #[error(
        "`{at}` holds a non-finite weight (NaN or infinity) at layer {layer}, head {head}, query {query}, key {key}"
    )]
    NonFiniteWeight { at: String, layer: usize, head: usize, query: usize, key: usize },

    #[error("`{at}` has the weight {value} at layer {layer}, head {head}, query {query}, key {key}: weights lie between 0 and 1")]
    WeightOutOfRange { at: String, value: f32, layer: usize, head: usize, query: usize, key: usize },

    #[error("`{at}`: the weights of layer {layer}, head {head}, query {query} sum to {sum}, not 1 (within 0.001)")]
    RowSum { at: String, sum: f32, layer: usize, head: usize, query: usize },

    #[error("`{at}` puts weight on keys its {mask} mask hides: {value} at layer {layer}, head {head}, query {query}, key {key}")]
    MaskedWeight { at: String, mask: String, value: f32, layer: usize, head: usize, query: usize, key: usize },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// How a failure to load the model folder `dir` is said, by the command line and Python
    /// alike: a file's own error already names its file; any other is said of the folder.
    #[cfg(feature = "hf")]
    pub fn of_folder(&self, dir: &std::path::Path) -> String {
        match self {
            Error::File { .. } => self.to_string(),
            e => format!("{}: {e}", dir.display()),
        }
    }

    pub(crate) fn shape(what: impl Into<String>, got: &[usize], expected: &[usize]) -> Self {
        Error::Shape { what: what.into(), got: got.to_vec(), expected: expected.to_vec() }
    }

    #[cfg(feature = "hf")]
    pub fn file(file: impl Into<String>, problem: FileProblem) -> Self {
        Error::File { file: file.into(), problem }
    }

    pub(crate) fn unknown(setting: &str, value: &str, expected: &[&str]) -> Self {
        Error::UnknownName {
            setting: setting.to_string(),
            value: value.to_string(),
            expected: expected.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// `value` is not in `min..=max`.
    pub(crate) fn out_of_range(setting: &str, value: usize, min: usize, max: usize) -> Self {
        Error::OutOfRange { setting: setting.to_string(), value, min, max }
    }

    /// Fails unless `index` < `count`: a layer, head or row that exists.
    pub(crate) fn check_index(what: &str, index: usize, count: usize) -> Result<()> {
        if index < count {
            Ok(())
        } else {
            Err(Error::NoSuch { what: what.to_string(), index, count })
        }
    }
}

#[cfg(feature = "hf")]
impl FileProblem {
    pub(crate) fn unsupported(setting: &str, value: impl std::fmt::Display, reason: &str) -> Self {
        FileProblem::UnsupportedSetting {
            setting: setting.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn impossible(setting: &str, value: impl std::fmt::Display, reason: &str) -> Self {
        FileProblem::ImpossibleSetting {
            setting: setting.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// "a, b and c".
#[cfg(feature = "hf")]
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Fails with [`Error::NonFinite`] at the first NaN or infinity in `values`.
pub(crate) fn ensure_finite<'a, D: ndarray::Dimension>(
    what: &str,
    values: ndarray::ArrayView<'a, f32, D>,
) -> Result<()> {
    // the common case, contiguous and finite, in one vectorised pass
    if values.as_slice_memory_order().is_some_and(crate::math::all_finite) {
        return Ok(());
    }
    match values.indexed_iter().find(|(_, v)| !v.is_finite()) {
        None => Ok(()),
        Some((index, _)) => Err(Error::NonFinite {
            what: what.to_string(),
            index: ndarray::IntoDimension::into_dimension(index).slice().to_vec(),
        }),
    }
}
