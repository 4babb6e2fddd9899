//! Tokenizers of real models, from their own files: `tokenizer.json` through the
//! `tokenizers` crate (WordPiece, byte-level BPE, Unigram), or a Marian repository's
//! `source.spm` + `vocab.json`.
//!
//! Every token is labelled from the tokenizer's own offsets into the original text, so a
//! byte-level piece of Korean shows as Korean, not as `ë`-style bytes, and pieces that split
//! one character are numbered parts of it.

use base64::Engine;
use std::collections::HashMap;

use tokenizers::models::ModelWrapper;
use tokenizers::Tokenizer;

use super::spm::SpmModel;
use super::{short_label, subscript, Encoded, Token, TokenKind};
use crate::error::{Error, FileProblem, Result};

/// A real model's tokenizer.
pub struct TextTokenizer {
    inner: Tokenizer,
    marian: Option<MarianVocab>,
    /// The spelling of the unknown token, when the vocabulary has one.
    unk: Option<String>,
    /// The longest text the normaliser is given (`growth.rs`).
    max_chars: usize,
}

/// Marian numbers pieces by its vocab.json, not by their place in the .spm file.
struct MarianVocab {
    ids: HashMap<String, u32>,
    names: HashMap<u32, String>,
    unk: u32,
    eos: u32,
}

impl TextTokenizer {
    /// From a `tokenizer.json`; `source` names the file in errors.
    pub fn from_json(bytes: &[u8], source: &str) -> Result<Self> {
        check_json(bytes).ok_or_else(|| Error::file(source, FileProblem::NotTokenizer))?;
        let mut inner = Tokenizer::from_bytes(bytes).map_err(|_| Error::file(source, FileProblem::NotTokenizer))?;
        // headmap pads batches itself, and refuses over-long text instead of cutting it silently
        inner.with_padding(None);
        inner.with_truncation(None).map_err(|_| Error::file(source, FileProblem::NotTokenizer))?;
        if let Some(post) = inner.get_post_processor() {
            if !serde_json::to_value(post).is_ok_and(|post| templates_ok(&post)) {
                return Err(Error::file(source, FileProblem::NotTokenizer));
            }
        }
        let unk = match inner.get_model() {
            ModelWrapper::WordPiece(m) => Some(m.unk_token.clone()),
            ModelWrapper::WordLevel(m) => Some(m.unk_token.clone()),
            ModelWrapper::BPE(m) => m.unk_token.clone(),
            // Unigram keeps its unknown id private; its files name the token <unk>
            ModelWrapper::Unigram(_) => Some("<unk>".to_string()),
        };
        let max_chars = max_chars_of(&inner, source)?;
        Ok(TextTokenizer { inner, marian: None, unk, max_chars })
    }

    /// From a Marian repository's `source.spm` and `vocab.json`.
    pub fn from_marian(spm: &[u8], vocab_json: &[u8]) -> Result<Self> {
        let inner = SpmModel::parse(spm, "source.spm")?.tokenizer("source.spm")?;
        let ids: HashMap<String, u32> =
            serde_json::from_slice(vocab_json).map_err(|_| Error::file("vocab.json", FileProblem::NotVocabulary))?;
        let id = |piece: &str| {
            ids.get(piece)
                .copied()
                .ok_or_else(|| Error::file("vocab.json", FileProblem::MissingPiece { piece: piece.to_string() }))
        };
        let (unk, eos) = (id("<unk>")?, id("</s>")?);
        let names = ids.iter().map(|(p, &i)| (i, p.clone())).collect();
        let max_chars = max_chars_of(&inner, "source.spm")?;
        let marian = Some(MarianVocab { ids, names, unk, eos });
        Ok(TextTokenizer { inner, marian, unk: Some("<unk>".into()), max_chars })
    }

    /// One more than the largest id the tokenizer can give: every id must be a row of the
    /// model's table (a count of entries misses a vocabulary whose ids skip some).
    pub fn vocab_size(&self) -> usize {
        let largest = match &self.marian {
            Some(vocab) => vocab.names.keys().max().copied(),
            None => self.inner.get_vocab(true).into_values().max(),
        };
        largest.map_or(0, |m| m as usize + 1)
    }

    /// The longest text the normaliser is given (`growth.rs`), which [`super::Tokenizer::encode`]
    /// checks.
    pub fn max_chars(&self) -> usize {
        self.max_chars
    }

    /// Tokenizes `text` with the model's special tokens.
    pub fn encode(&self, text: &str) -> Result<Encoded> {
        if text.trim().is_empty() {
            return Err(Error::EmptyText);
        }
        let add_special = self.marian.is_none();
        let enc = self.inner.encode_char_offsets(text, add_special).map_err(|_| Error::TokenizerFailed)?;
        // a text the normaliser empties (zero-width characters, lone combining marks) is empty:
        // no token covers any of it
        if enc.get_offsets().iter().all(|&(start, end)| start == end) {
            return Err(Error::EmptyText);
        }
        let mut tokens = self.tokens(text, &enc)?;
        match &self.marian {
            None => Ok(Encoded { ids: enc.get_ids().to_vec(), tokens }),
            Some(vocab) => {
                let mut ids: Vec<u32> =
                    enc.get_tokens().iter().map(|piece| vocab.ids.get(piece).copied().unwrap_or(vocab.unk)).collect();
                for (token, &id) in tokens.iter_mut().zip(&ids) {
                    if id == vocab.unk && token.kind != TokenKind::Unknown {
                        *token = unknown(&vocab.names[&vocab.unk], &token.text);
                    }
                }
                ids.push(vocab.eos);
                tokens.push(Token::marker("</s>", TokenKind::Special));
                Ok(Encoded { ids, tokens })
            }
        }
    }

    /// Each token with what it stands for in `text`: special tokens by name, the unknown token
    /// as itself (with the text it replaced), a run of pieces sharing one stretch of text as
    /// numbered parts of it, a later piece of a word as a continuation.
    fn tokens(&self, text: &str, enc: &tokenizers::Encoding) -> Result<Vec<Token>> {
        let chars: Vec<char> = text.chars().collect();
        let offsets = enc.get_offsets();
        let words = enc.get_word_ids();
        let special = enc.get_special_tokens_mask();
        let pieces = enc.get_tokens();
        if [offsets.len(), words.len(), special.len()].iter().any(|&n| n != pieces.len()) {
            return Err(Error::TokenizerFailed);
        }
        let covered = |i: usize| {
            let (start, end) = offsets[i];
            chars.get(start..end.min(chars.len())).unwrap_or(&[]).iter().collect::<String>().trim().to_string()
        };
        // runs of tokens over the same stretch of text: the parts of one character
        let same = |i: usize, j: usize| special[i] == 0 && special[j] == 0 && offsets[i] == offsets[j];
        let mut out = Vec::with_capacity(pieces.len());
        let mut i = 0;
        while i < pieces.len() {
            let mut end = i + 1;
            while end < pieces.len() && same(i, end) && !covered(i).is_empty() {
                end += 1;
            }
            let n = end - i;
            for k in i..end {
                let text_k = covered(k);
                let piece = &pieces[k];
                let token = if special[k] == 1 || text_k.is_empty() {
                    Token::marker(piece, TokenKind::Special)
                } else if self.unk.as_deref() == Some(piece.as_str()) {
                    unknown(piece, &text_k)
                } else if n > 1 {
                    let part = k - i + 1;
                    Token {
                        label: format!("{}{}", short_label(&text_k), subscript(part)),
                        piece: piece.clone(),
                        kind: TokenKind::Part,
                        text: text_k,
                        part: Some([part, n]),
                    }
                } else if k > 0 && words[k].is_some() && words[k] == words[k - 1] && special[k - 1] == 0 {
                    let label =
                        short_label(&if piece.starts_with("##") { format!("##{text_k}") } else { text_k.clone() });
                    Token { label, piece: piece.clone(), kind: TokenKind::Continuation, text: text_k, part: None }
                } else {
                    Token {
                        label: short_label(&text_k),
                        piece: piece.clone(),
                        kind: TokenKind::Word,
                        text: text_k,
                        part: None,
                    }
                };
                out.push(token);
            }
            i = end;
        }
        Ok(out)
    }

    /// Text from ids, special tokens left out.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match &self.marian {
            Some(vocab) => {
                let pieces: Vec<&str> = ids
                    .iter()
                    .filter(|&&id| id != vocab.eos && Some(id) != vocab.ids.get("<pad>").copied())
                    .filter_map(|id| vocab.names.get(id).map(String::as_str))
                    .collect();
                Ok(pieces.concat().replace('▁', " ").trim().to_string())
            }
            None => self.inner.decode(ids, true).map_err(|_| Error::TokenizerFailed),
        }
    }

    /// The ids of the vocabulary that are no special token and not the unknown one: what
    /// ordinary text is made of.
    pub fn ordinary_ids(&self) -> Vec<u32> {
        let special: std::collections::HashSet<u32> = match &self.marian {
            Some(vocab) => {
                [Some(vocab.unk), Some(vocab.eos), vocab.ids.get("<pad>").copied()].into_iter().flatten().collect()
            }
            None => {
                let added = self.inner.get_added_tokens_decoder();
                let unk = self.unk.as_deref().and_then(|u| self.inner.token_to_id(u));
                added.iter().filter(|(_, t)| t.special).map(|(&id, _)| id).chain(unk).collect()
            }
        };
        (0..self.vocab_size() as u32).filter(|id| !special.contains(id) && self.id_to_token(*id).is_some()).collect()
    }

    /// The special tokens of the vocabulary, lowest id first.
    pub fn special_ids(&self) -> Vec<u32> {
        match &self.marian {
            Some(vocab) => vec![vocab.eos],
            None => {
                let mut ids: Vec<u32> = self
                    .inner
                    .get_added_tokens_decoder()
                    .iter()
                    .filter(|(_, t)| t.special)
                    .map(|(&id, _)| id)
                    .collect();
                ids.sort_unstable();
                ids
            }
        }
    }

    /// The spelling of token `id`, for labelling PAD and start tokens.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match &self.marian {
            Some(vocab) => vocab.names.get(&id).cloned(),
            None => self.inner.id_to_token(id),
        }
    }
}

/// The longest text `inner`'s normaliser is given; a tokenizer whose normaliser would make too
/// much of even a short text is refused.
fn max_chars_of(inner: &Tokenizer, source: &str) -> Result<usize> {
    let normalizer = match inner.get_normalizer() {
        None => serde_json::Value::Null,
        // a normaliser not written back as JSON counts as one of an unknown kind
        Some(n) => serde_json::to_value(n).unwrap_or_else(|_| serde_json::json!({ "type": "?" })),
    };
    let max = super::growth::max_text_chars(&normalizer);
    if max < MIN_TEXT_CHARS {
        let problem =
            FileProblem::NormalizerGrows { chars: MIN_TEXT_CHARS, normalized: super::growth::NORMALIZED_CHARS };
        return Err(Error::file(source, problem));
    }
    Ok(max)
}

/// The fewest characters a tokenizer must take for headmap to use it: a normaliser that could
/// make too much of fewer is refused with the file.
const MIN_TEXT_CHARS: usize = 64;

/// Whether `bytes` can go to the tokenizers crate without making it panic: its deserializers
/// `expect` where they should fail, on a syntax error inside `decoder` and on a damaged
/// `Precompiled` character map, and slice where they should check, on a BPE merge shorter than
/// the continuing-subword prefix. The whole file must be JSON, every Precompiled normaliser
/// must deserialize on its own (where the crate returns an error), and every merge's second
/// half must be at least the prefix long.
fn check_json(bytes: &[u8]) -> Option<()> {
    fn precompiled_ok(value: &serde_json::Value) -> bool {
        match value {
            serde_json::Value::Object(map) => {
                // a character map is checked whole before the tokenizer reads it (charsmap.rs)
                let ok = map.get("type").and_then(|t| t.as_str()) != Some("Precompiled")
                    || (serde_json::from_str::<tokenizers::normalizers::Precompiled>(&value.to_string()).is_ok()
                        && map
                            .get("precompiled_charsmap")
                            .and_then(|m| m.as_str())
                            .and_then(|m| base64::engine::general_purpose::STANDARD.decode(m).ok())
                            .is_some_and(|bytes| super::charsmap::check(&bytes).is_ok()));
                ok && map.values().all(precompiled_ok)
            }
            serde_json::Value::Array(items) => items.iter().all(precompiled_ok),
            _ => true,
        }
    }
    // BPE cuts its continuing-subword prefix off the second half of every merge by byte count
    fn merges_ok(model: &serde_json::Value) -> bool {
        let prefix = model.get("continuing_subword_prefix").and_then(|p| p.as_str()).unwrap_or("");
        let second = |merge: &serde_json::Value| match merge {
            serde_json::Value::String(m) => m.split_once(' ').map(|(_, b)| b.to_string()),
            serde_json::Value::Array(m) => m.get(1).and_then(|b| b.as_str()).map(str::to_string),
            _ => None,
        };
        let merges = model.get("merges").and_then(|m| m.as_array()).map_or(&[][..], Vec::as_slice);
        prefix.is_empty() || merges.iter().all(|m| second(m).is_none_or(|b| b.get(prefix.len()..).is_some()))
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    (precompiled_ok(&value) && value.get("model").is_none_or(merges_ok)).then_some(())
}

/// Whether every template post-processor in `post` (the tokenizer's, as the crate writes it
/// back) can be applied: the crate reads its files without checking what its builder checks,
/// and then indexes by them when it encodes. A template for one text may only place text A;
/// every special token a template places must be defined, with as many ids as spellings.
fn templates_ok(post: &serde_json::Value) -> bool {
    use serde_json::Value;
    let Value::Object(map) = post else { return true };
    if let Some(Value::Array(inner)) = map.get("processors") {
        return inner.iter().all(templates_ok);
    }
    if map.get("type").and_then(Value::as_str) != Some("TemplateProcessing") {
        return true;
    }
    let Some(Value::Object(defined)) = map.get("special_tokens") else { return false };
    let same_length = |t: &Value| {
        let len = |key: &str| t.get(key).and_then(Value::as_array).map(Vec::len);
        len("ids").is_some() && len("ids") == len("tokens")
    };
    let pieces = |key: &str| map.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let placeable = |piece: &Value, single: bool| match (piece.get("SpecialToken"), piece.get("Sequence")) {
        (Some(token), _) => token.get("id").and_then(Value::as_str).is_some_and(|id| defined.contains_key(id)),
        (None, Some(text)) => !single || text.get("id").and_then(Value::as_str) == Some("A"),
        (None, None) => false,
    };
    defined.values().all(same_length)
        && pieces("single").iter().all(|p| placeable(p, true))
        && pieces("pair").iter().all(|p| placeable(p, false))
}

fn unknown(piece: &str, text: &str) -> Token {
    Token {
        label: short_label(piece),
        piece: piece.to_string(),
        kind: TokenKind::Unknown,
        text: text.to_string(),
        part: None,
    }
}
