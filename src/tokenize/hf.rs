//! Tokenizers of real models, from their own files: `tokenizer.json` through the
//! `tokenizers` crate (WordPiece, byte-level BPE, Unigram), or a Marian repository's
//! `source.spm` + `vocab.json`.
//!
//! Every token gets a label a person can read: the piece of the original text it covers
//! (so byte-level tokens of Korean show as Korean, not as `ë`-style bytes), or for special
//! tokens their own name (`[CLS]`, `</s>`).

use std::collections::HashMap;

use tokenizers::Tokenizer;

use super::spm::SpmModel;
use crate::error::{Error, Result};

/// Token ids with their labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    pub ids: Vec<u32>,
    pub labels: Vec<String>,
}

/// A real model's tokenizer.
pub struct TextTokenizer {
    inner: Tokenizer,
    marian: Option<MarianVocab>,
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
        let mut inner = Tokenizer::from_bytes(bytes)
            .map_err(|e| Error::file(source, format!("the tokenizer does not load ({e})")))?;
        // headmap pads batches itself, and refuses over-long text instead of cutting it silently
        inner.with_padding(None);
        inner.with_truncation(None).map_err(|e| Error::file(source, format!("cannot switch off truncation ({e})")))?;
        Ok(TextTokenizer { inner, marian: None })
    }

    /// From a Marian repository's `source.spm` and `vocab.json`.
    pub fn from_marian(spm: &[u8], vocab_json: &[u8]) -> Result<Self> {
        let inner = SpmModel::parse(spm, "source.spm")?.tokenizer("source.spm")?;
        let ids: HashMap<String, u32> = serde_json::from_slice(vocab_json)
            .map_err(|e| Error::file("vocab.json", format!("not a JSON map of pieces to ids ({e})")))?;
        let id = |piece: &str| {
            ids.get(piece).copied().ok_or_else(|| Error::file("vocab.json", format!("it has no `{piece}`")))
        };
        let (unk, eos) = (id("<unk>")?, id("</s>")?);
        let names = ids.iter().map(|(p, &i)| (i, p.clone())).collect();
        Ok(TextTokenizer { inner, marian: Some(MarianVocab { ids, names, unk, eos }) })
    }

    /// Tokenizes `text` with the model's special tokens.
    pub fn encode(&self, text: &str) -> Result<Encoded> {
        if text.trim().is_empty() {
            return Err(Error::EmptyText);
        }
        let add_special = self.marian.is_none();
        let enc = self
            .inner
            .encode_char_offsets(text, add_special)
            .map_err(|e| Error::setting("text", format!("the tokenizer failed ({e})")))?;
        let mut labels = self.labels(text, &enc);
        match &self.marian {
            None => Ok(Encoded { ids: enc.get_ids().to_vec(), labels }),
            Some(vocab) => {
                let mut ids: Vec<u32> =
                    enc.get_tokens().iter().map(|piece| vocab.ids.get(piece).copied().unwrap_or(vocab.unk)).collect();
                ids.push(vocab.eos);
                labels.push("</s>".to_string());
                Ok(Encoded { ids, labels })
            }
        }
    }

    /// What each token shows: the text it covers; its own name for special tokens; and where
    /// several tokens split one character (BERT's jamo, byte-level pieces of a syllable), the
    /// token decoded on its own when that is readable.
    fn labels(&self, text: &str, enc: &tokenizers::Encoding) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        let offsets = enc.get_offsets();
        let shared = |i: usize| {
            (i > 0 && offsets[i - 1] == offsets[i]) || offsets.get(i + 1).is_some_and(|next| *next == offsets[i])
        };
        enc.get_tokens()
            .iter()
            .zip(enc.get_ids())
            .zip(enc.get_special_tokens_mask())
            .enumerate()
            .map(|(i, ((token, &id), &special))| {
                let (start, end) = offsets[i];
                let covered: String = chars.get(start..end.min(chars.len())).unwrap_or(&[]).iter().collect();
                let covered = covered.trim();
                if special == 1 || covered.is_empty() {
                    return token.clone();
                }
                if shared(i) {
                    if let Ok(alone) = self.inner.decode(&[id], false) {
                        let alone = alone.trim().trim_start_matches("##").trim_start_matches('▁');
                        if !alone.is_empty() && !alone.contains('\u{fffd}') {
                            return alone.to_string();
                        }
                    }
                }
                covered.to_string()
            })
            .collect()
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
            None => self
                .inner
                .decode(ids, true)
                .map_err(|e| Error::setting("ids", format!("the tokenizer cannot decode them ({e})"))),
        }
    }

    /// The id of a token the model knows, such as `<pad>`.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match &self.marian {
            Some(vocab) => vocab.ids.get(token).copied(),
            None => self.inner.token_to_id(token),
        }
    }

    /// The name of token `id`, for labelling PAD and start tokens.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match &self.marian {
            Some(vocab) => vocab.names.get(&id).cloned(),
            None => self.inner.id_to_token(id),
        }
    }
}
