//! SentencePiece models (`source.spm`, `target.spm`), as Marian repositories ship them in
//! place of a tokenizer.json.
//!
//! A `.spm` file is a protobuf `ModelProto`. headmap reads the three things segmentation
//! needs — the pieces with their scores and types, and the normaliser's precompiled
//! character map — and builds a `tokenizers` Unigram model from them, the way transformers'
//! `SpmConverter` does.

use tokenizers::models::unigram::Unigram;
use tokenizers::normalizers::{Precompiled, Replace, Sequence};
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::{NormalizerWrapper, Tokenizer};

use crate::error::{Error, FileProblem, Result};

/// One entry of the model's vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub piece: String,
    pub score: f32,
    /// 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    pub kind: u64,
}

/// What headmap reads of a `ModelProto`.
#[derive(Debug, Clone, PartialEq)]
pub struct SpmModel {
    pub pieces: Vec<Piece>,
    pub precompiled_charsmap: Vec<u8>,
}

impl SpmModel {
    pub fn parse(bytes: &[u8], source: &str) -> Result<Self> {
        let bad = |why: &str| Error::file(source, FileProblem::NotSentencePiece { reason: why.to_string() });
        let mut pieces = Vec::new();
        let mut precompiled_charsmap = Vec::new();
        for field in Fields::new(bytes) {
            match field.map_err(&bad)? {
                (1, Value::Bytes(piece)) => pieces.push(parse_piece(piece).map_err(&bad)?),
                (4, Value::Bytes(normalizer)) => {
                    for f in Fields::new(normalizer) {
                        if let (2, Value::Bytes(map)) = f.map_err(&bad)? {
                            precompiled_charsmap = map.to_vec();
                        }
                    }
                }
                _ => {}
            }
        }
        if pieces.is_empty() {
            return Err(bad("it has no pieces"));
        }
        Ok(SpmModel { pieces, precompiled_charsmap })
    }

    /// A tokenizer that segments text as SentencePiece does; its ids are positions in the .spm.
    pub fn tokenizer(&self, source: &str) -> Result<Tokenizer> {
        let vocab = self.pieces.iter().map(|p| (p.piece.clone(), f64::from(p.score))).collect();
        let unk = self.pieces.iter().position(|p| p.kind == 2);
        let bad = |why: &str| Error::file(source, FileProblem::NotSentencePiece { reason: why.to_string() });
        let model = Unigram::from(vocab, unk, false).map_err(|_| bad("its pieces do not make a Unigram model"))?;
        let mut tokenizer = Tokenizer::new(model);
        let mut normalizers: Vec<NormalizerWrapper> = Vec::new();
        if !self.precompiled_charsmap.is_empty() {
            super::charsmap::check(&self.precompiled_charsmap)
                .map_err(|why| bad(&format!("its character map is damaged: {why}")))?;
            let map = Precompiled::from(&self.precompiled_charsmap).map_err(|_| bad("its character map is damaged"))?;
            normalizers.push(map.into());
        }
        let spaces = Replace::new(tokenizers::normalizers::replace::ReplacePattern::Regex(" {2,}".into()), " ")
            .map_err(|_| bad("its normaliser cannot be built"))?;
        normalizers.push(spaces.into());
        tokenizer.with_normalizer(Some(Sequence::new(normalizers)));
        tokenizer.with_pre_tokenizer(Some(Metaspace::new('▁', PrependScheme::Always, true)));
        Ok(tokenizer)
    }
}

fn parse_piece(bytes: &[u8]) -> Result<Piece, &'static str> {
    let mut piece = Piece { piece: String::new(), score: 0.0, kind: 1 };
    for field in Fields::new(bytes) {
        match field? {
            (1, Value::Bytes(b)) => piece.piece = String::from_utf8(b.to_vec()).map_err(|_| "a piece is not UTF-8")?,
            (2, Value::Fixed32(bits)) => piece.score = f32::from_bits(bits),
            (3, Value::Varint(kind)) => piece.kind = kind,
            _ => {}
        }
    }
    Ok(piece)
}

enum Value<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// The fields of one protobuf message: (field number, value).
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, at: 0 }
    }

    fn varint(&mut self) -> Result<u64, &'static str> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or("it ends inside a number")?;
            self.at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number is too long")
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or("it is truncated")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let item = (|| {
            let key = self.varint()?;
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    self.take(8)?;
                    Value::Fixed64
                }
                2 => {
                    let n = usize::try_from(self.varint()?).map_err(|_| "a length is too large")?;
                    Value::Bytes(self.take(n)?)
                }
                5 => {
                    let b = self.take(4)?;
                    Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                }
                _ => return Err("it has an unknown wire type"),
            };
            Ok((key >> 3, value))
        })();
        if item.is_err() {
            self.at = self.bytes.len(); // stop after the first error
        }
        Some(item)
    }
}
