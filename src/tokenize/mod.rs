//! Text to tokens. The toy model splits words and punctuation by Unicode's word boundaries
//! (UAX #29, below); real models use their own tokenizer (`hf`, with the `hf` feature).
//!
//! Every token says what the model saw ([`Token`]): its own spelling, the stretch of the
//! text it stands for, and a label a reader can read — `[UNK]` stays `[UNK]`, WordPiece's
//! `##` stays, and pieces that split one character (BERT's jamo, byte-level pieces of a
//! syllable) are numbered parts of that character.

use serde::Serialize;
use unicode_segmentation::UnicodeSegmentation;

use crate::error::{Error, Result};

#[cfg(feature = "hf")]
pub mod charsmap;
#[cfg(feature = "hf")]
pub mod growth;
#[cfg(feature = "hf")]
pub mod hf;
#[cfg(feature = "hf")]
pub mod spm;

/// The most tokens one text may have. Attention stores Tq × Tk weights per head, so the cost
/// grows with the square of this.
pub const MAX_TOKENS: usize = 2048;

/// The most characters one text may have, checked before tokenizing: far more than
/// [`MAX_TOKENS`] words need, and a bound on what a link or a pasted text can make the
/// tokenizer (and a label) hold — a word of a million syllables is one toy token.
pub const MAX_TEXT_CHARS: usize = 32_768;

/// The most characters of a word a label shows; a longer word ends in `…` (its `text` keeps it).
pub const MAX_LABEL_CHARS: usize = 40;

/// What a token is, for a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    /// The first (or only) piece of a word.
    Word,
    /// A later piece of the same word (`##ing`).
    Continuation,
    /// One of several pieces that split a single character (jamo, UTF-8 bytes).
    Part,
    /// A token the tokenizer adds (`[CLS]`, `</s>`, a start token).
    Special,
    /// The vocabulary's unknown token, standing for text the model could not read.
    Unknown,
    /// Padding that fills a shorter row of a batch.
    Pad,
}

impl TokenKind {
    /// The name files and the page use: `word`, `continuation`, `part`, `special`, `unknown`, `pad`.
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Word => "word",
            TokenKind::Continuation => "continuation",
            TokenKind::Part => "part",
            TokenKind::Special => "special",
            TokenKind::Unknown => "unknown",
            TokenKind::Pad => "pad",
        }
    }
}

/// One token as the model saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Token {
    /// What a reader is shown: the text it stands for, `##` kept, `[UNK]` as `[UNK]`, a
    /// part of a character as that character with its part number (`동₂`).
    pub label: String,
    /// The token as the vocabulary spells it (`##ing`, `Ġthe`, `▁책`, `[UNK]`).
    pub piece: String,
    pub kind: TokenKind,
    /// The stretch of the original text it stands for; empty for special and PAD tokens.
    pub text: String,
    /// For a `part`: which piece it is (from 1) and of how many.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<[usize; 2]>,
}

impl Token {
    /// A whole word: the toy model's only kind.
    pub fn word(text: &str) -> Self {
        Token {
            label: short_label(text),
            piece: text.to_string(),
            kind: TokenKind::Word,
            text: text.to_string(),
            part: None,
        }
    }

    /// A token with no text of its own: special or padding.
    pub fn marker(piece: &str, kind: TokenKind) -> Self {
        Token { label: short_label(piece), piece: piece.to_string(), kind, text: String::new(), part: None }
    }
}

/// `text` as a label: whole up to [`MAX_LABEL_CHARS`] characters, else cut there with `…`,
/// not before a mark that belongs to the character in front of it (a combining accent, a
/// decomposed Hangul vowel or final, an emoji joiner or modifier). Unicode's grapheme tables
/// would say this exactly but cost the toy widget 11 KiB; these ranges cover what people type.
pub(crate) fn short_label(text: &str) -> String {
    let joins = |c: char| {
        matches!(c as u32, 0x0300..=0x036F | 0x1160..=0x11FF | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x200C..=0x200D
            | 0x20D0..=0x20FF | 0xD7B0..=0xD7FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F | 0x1F3FB..=0x1F3FF
            | 0xE0020..=0xE007F | 0xE0100..=0xE01EF)
    };
    if !text.is_empty() && text.chars().all(invisible) {
        return invisible_label(text);
    }
    let mut chars = text.char_indices().skip(MAX_LABEL_CHARS);
    let mut after_joiner = false;
    for (at, c) in chars.by_ref() {
        if !joins(c) && !after_joiner {
            return format!("{}…", &text[..at]);
        }
        after_joiner = c == '\u{200D}';
    }
    text.to_string()
}

/// A character that draws nothing by itself: white space, a control, or one Unicode lets a
/// renderer ignore (zero-width spaces and joiners, direction marks, variation selectors, Hangul
/// fillers, tags). A token made only of them would have a blank label.
fn invisible(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c as u32, 0x00AD | 0x034F | 0x061C | 0x115F..=0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0
            | 0xFFF0..=0xFFF8 | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

/// The label of a text of invisible characters: a space as `␣`, a line break as `⏎` (`\r\n`
/// as one), a tab as `⇥`, any other as its code point (`U+200B`, apart from what goes before
/// it); at most four, then `…`. Written digit by digit: `format!`'s hex costs the toy widget
/// 0.3 KiB more.
fn invisible_label(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.replace("\r\n", "\n").chars().enumerate() {
        if i == 4 {
            out.push('…');
            break;
        }
        match c {
            ' ' => out.push('␣'),
            '\n' | '\r' => out.push('⏎'),
            '\t' => out.push('⇥'),
            c => {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str("U+");
                let code = c as u32;
                let digits = if code > 0xFFFFF {
                    6
                } else if code > 0xFFFF {
                    5
                } else {
                    4
                };
                for k in (0..digits).rev() {
                    out.push(char::from_digit((code >> (4 * k)) & 0xF, 16).map_or('0', |d| d.to_ascii_uppercase()));
                }
            }
        }
    }
    out
}

/// Token ids with their tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    pub ids: Vec<u32>,
    pub tokens: Vec<Token>,
}

/// The share of a text's tokens (special tokens aside) the model could not read as text:
/// unknown tokens and pieces below the character. Above one half, the model's vocabulary
/// does not cover the script.
pub fn unreadable_share(tokens: &[Token]) -> f32 {
    coverage(tokens).unknown
}

/// How much of a text a model read as words of its vocabulary. Shares of the text's tokens
/// (special tokens and PAD aside): `unknown` stood for text the vocabulary lacks (`[UNK]`) or
/// split one character into pieces (jamo, bytes); `letters` spelled a word out a letter at a
/// time (`c ##h ##a ##s ##e ##d`), which a model can read but rarely learnt from. `read` is
/// what is left: tokens that are whole words or ordinary pieces of them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Coverage {
    pub tokens: usize,
    pub unknown: f32,
    pub letters: f32,
    pub read: f32,
}

/// The [`Coverage`] of `tokens`. A word counts as spelled out when it has three or more pieces
/// and at least two thirds of them are a single character: a stem with a one-syllable particle
/// (`동물 ##이`, `길 ##을`) is read, `c ##h ##a ##s ##e ##d` is spelled.
pub fn coverage(tokens: &[Token]) -> Coverage {
    let text: Vec<&Token> = tokens.iter().filter(|t| !matches!(t.kind, TokenKind::Special | TokenKind::Pad)).collect();
    let unknown = text.iter().filter(|t| matches!(t.kind, TokenKind::Unknown | TokenKind::Part)).count();
    // 1. words: a `Word` and the `Continuation`s after it
    let mut letters = 0;
    let mut word: Vec<&Token> = Vec::new();
    let mut close = |word: &mut Vec<&Token>| {
        let single = word.iter().filter(|t| t.text.trim().chars().count() == 1).count();
        if word.len() >= 3 && 3 * single >= 2 * word.len() {
            letters += word.len();
        }
        word.clear();
    };
    for t in &text {
        match t.kind {
            TokenKind::Continuation if !word.is_empty() => word.push(t),
            TokenKind::Word => {
                close(&mut word);
                word.push(t);
            }
            _ => close(&mut word),
        }
    }
    close(&mut word);
    let n = text.len();
    let share = |k: usize| if n == 0 { 0.0 } else { k as f32 / n as f32 };
    Coverage { tokens: n, unknown: share(unknown), letters: share(letters), read: share(n - unknown - letters) }
}

/// `n` in subscript digits, for numbering the parts of one character: `동₂`.
#[cfg(any(feature = "hf", test))]
pub(crate) fn subscript(n: usize) -> String {
    n.to_string().chars().map(|d| char::from_u32(0x2080 + d.to_digit(10).unwrap_or(0)).unwrap_or(d)).collect()
}

/// Refuses `text` when it has more than `max` characters: what a tokenizer takes, and what a
/// corpus reader keeps of a text before any tokenizer sees it.
pub fn check_length(text: &str, max: usize) -> Result<()> {
    let chars = text.chars().count();
    if chars > max {
        return Err(Error::TextTooLong { chars, max });
    }
    Ok(())
}

/// How a model turns text into tokens.
pub enum Tokenizer {
    /// The toy model's: words and punctuation by Unicode's word boundaries, no vocabulary.
    Words,
    /// A real model's own tokenizer.
    #[cfg(feature = "hf")]
    Hf(Box<hf::TextTokenizer>),
}

impl Tokenizer {
    /// Tokenizes `text` with the model's special tokens, refusing empty text and text over
    /// [`Tokenizer::max_chars`].
    pub fn encode(&self, text: &str) -> Result<Encoded> {
        check_length(text, self.max_chars())?;
        match self {
            Tokenizer::Words => {
                let tokens = split_words(text)?;
                Ok(Encoded { ids: vec![0; tokens.len()], tokens })
            }
            #[cfg(feature = "hf")]
            Tokenizer::Hf(t) => t.encode(text),
        }
    }

    /// The longest text it takes: [`MAX_TEXT_CHARS`], or fewer where a real tokenizer's
    /// normaliser could make too much of that many.
    pub fn max_chars(&self) -> usize {
        match self {
            Tokenizer::Words => MAX_TEXT_CHARS,
            #[cfg(feature = "hf")]
            Tokenizer::Hf(t) => t.max_chars(),
        }
    }

    /// Text from ids, special tokens left out.
    #[cfg_attr(not(feature = "hf"), allow(unused_variables))]
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match self {
            Tokenizer::Words => Err(Error::TokenizerFailed),
            #[cfg(feature = "hf")]
            Tokenizer::Hf(t) => t.decode(ids),
        }
    }

    /// The spelling of token `id`, for labelling PAD and start tokens.
    #[cfg_attr(not(feature = "hf"), allow(unused_variables))]
    pub fn piece(&self, id: u32) -> Option<String> {
        match self {
            Tokenizer::Words => None,
            #[cfg(feature = "hf")]
            Tokenizer::Hf(t) => t.id_to_token(id),
        }
    }
}

#[cfg(feature = "hf")]
/// What a model's vocabulary offers the induction probe: the ordinary ids random tokens are
/// drawn from, and the special ids a sequence can start with, lowest first.
pub struct Vocabulary {
    pub ordinary: Vec<u32>,
    pub special: Vec<u32>,
}

#[cfg(feature = "hf")]
impl Tokenizer {
    /// The vocabulary, `None` for the toy's words (it has none).
    pub fn vocabulary(&self) -> Option<Vocabulary> {
        match self {
            Tokenizer::Words => None,
            Tokenizer::Hf(t) => Some(Vocabulary { ordinary: t.ordinary_ids(), special: t.special_ids() }),
        }
    }

    /// Token `id` on its own, labelled by the text it decodes to (a piece of a character
    /// decodes to a replacement mark, and is labelled by its spelling instead).
    pub fn token_of(&self, id: u32) -> Token {
        let piece = self.piece(id).unwrap_or_else(|| format!("#{id}"));
        let text = self.decode(&[id]).unwrap_or_default();
        let text = text.trim();
        if text.is_empty() || text.contains('\u{FFFD}') {
            return Token {
                label: short_label(&piece),
                piece: piece.clone(),
                kind: TokenKind::Word,
                text: piece,
                part: None,
            };
        }
        Token { label: short_label(text), piece, kind: TokenKind::Word, text: text.to_string(), part: None }
    }
}

/// Splits `text` into word tokens, refusing empty text and text over [`MAX_TOKENS`].
pub fn split_words(text: &str) -> Result<Vec<Token>> {
    let tokens: Vec<Token> =
        text.split_word_bounds().filter(|piece| !piece.chars().all(char::is_whitespace)).map(Token::word).collect();
    if tokens.is_empty() {
        return Err(Error::EmptyText);
    }
    if tokens.len() > MAX_TOKENS {
        return Err(Error::TooLong { tokens: tokens.len(), max: MAX_TOKENS });
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests;
