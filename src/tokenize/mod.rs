//! Text to tokens. The toy model splits words and punctuation by Unicode's word boundaries
//! (UAX #29, below); real models use their own tokenizer (`hf`, with the `hf` feature).
//!
//! Korean eojeol ("동물이"), English words with apostrophes ("didn't"), emoji sequences (👩‍💻)
//! and numbers each stay one token; spaces are dropped; punctuation stands alone.

use unicode_segmentation::UnicodeSegmentation;

use crate::error::{Error, Result};

#[cfg(feature = "hf")]
pub mod hf;
#[cfg(feature = "hf")]
pub mod spm;

/// The most tokens one text may have. Attention stores Tq × Tk weights per head, so the cost
/// grows with the square of this.
pub const MAX_TOKENS: usize = 2048;

/// Splits `text` into tokens, refusing empty text and text over [`MAX_TOKENS`].
pub fn split_words(text: &str) -> Result<Vec<String>> {
    let tokens: Vec<String> =
        text.split_word_bounds().filter(|piece| !piece.chars().all(char::is_whitespace)).map(str::to_string).collect();
    if tokens.is_empty() {
        return Err(Error::EmptyText);
    }
    if tokens.len() > MAX_TOKENS {
        return Err(Error::TooLong { tokens: tokens.len(), max: MAX_TOKENS });
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn korean_eojeol_and_punctuation() {
        let got = split_words("동물이 길을 건너지 않았다. 그것은 너무 피곤했다.").unwrap();
        assert_eq!(got, ["동물이", "길을", "건너지", "않았다", ".", "그것은", "너무", "피곤했다", "."]);
    }

    #[test]
    fn english_keeps_contractions() {
        let got = split_words("The animal didn't cross the street because it was too tired.").unwrap();
        assert_eq!(got.len(), 12, "{got:?}");
        assert!(got.contains(&"didn't".to_string()));
    }

    #[test]
    fn emoji_and_mixed_scripts() {
        let got = split_words("AI가 👩‍💻 코드를 썼다!").unwrap();
        assert_eq!(got, ["AI가", "👩‍💻", "코드를", "썼다", "!"]);
    }

    #[test]
    fn empty_and_whitespace_are_refused() {
        assert_eq!(split_words(""), Err(Error::EmptyText));
        assert_eq!(split_words(" \t\n\u{3000}"), Err(Error::EmptyText));
    }

    #[test]
    fn too_long_says_how_long() {
        let text = "a ".repeat(MAX_TOKENS + 1);
        assert_eq!(split_words(&text), Err(Error::TooLong { tokens: MAX_TOKENS + 1, max: MAX_TOKENS }));
    }
}
