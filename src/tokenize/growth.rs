//! How long a text a tokenizer's normaliser may be given. The `tokenizers` crate normalises a
//! whole text before it splits it, and keeps an alignment for every byte it makes: a
//! normaliser that replaces a letter by ten thousand (a `tokenizer.json` may say so) took a
//! 32,000-character text to 15 GB before any count of tokens could refuse it. From the
//! normaliser's settings this bounds how many characters it can make of `n`, `factor · n +
//! extra`, and a text is refused when that could pass [`NORMALIZED_CHARS`].

use base64::Engine;
use serde_json::Value;

use super::MAX_TEXT_CHARS;

/// Characters a normalised text may reach: about 200 MB of the crate's alignments.
pub const NORMALIZED_CHARS: usize = 1 << 22;

/// The longest text `normalizer` (a `tokenizer.json`'s, as JSON; null for none) is given:
/// [`MAX_TEXT_CHARS`], or fewer where the normaliser can make more than [`NORMALIZED_CHARS`]
/// of it.
pub fn max_text_chars(normalizer: &Value) -> usize {
    let (factor, extra) = growth(normalizer);
    let room = (NORMALIZED_CHARS as f64 - extra).max(0.0);
    ((room / factor).floor() as usize).min(MAX_TEXT_CHARS)
}

/// `(factor, extra)`: `normalizer` makes at most `factor · n + extra` characters of `n`.
fn growth(normalizer: &Value) -> (f64, f64) {
    let chars = |key: &str| normalizer.get(key).and_then(Value::as_str).map_or(0, |s| s.chars().count()) as f64;
    match normalizer.get("type").and_then(Value::as_str) {
        None => (1.0, 0.0),
        Some("Sequence") => {
            let steps = normalizer.get("normalizers").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            steps.iter().map(growth).fold((1.0, 0.0), |(f, e), (fi, ei)| (f * fi, e * fi + ei))
        }
        // Unicode's longest decompositions: 4 characters canonically, 18 for compatibility (U+FDFA)
        Some("NFC" | "NFD") => (4.0, 0.0),
        Some("NFKC" | "NFKD") => (18.0, 0.0),
        // a lower-case form is at most 3 characters; UTF-8 bytes as characters at most 4
        Some("Lowercase") => (3.0, 0.0),
        Some("ByteLevel") => (4.0, 0.0),
        Some("Strip" | "StripAccents" | "Nmt") => (1.0, 0.0),
        // spaces around CJK characters, then accents stripped (NFD), then lower case
        Some("BertNormalizer") => (3.0 * 4.0 * 3.0, 0.0),
        Some("Prepend") => (1.0, chars("prepend")),
        Some("Replace") => {
            let content = chars("content");
            match normalizer.get("pattern").and_then(|p| p.get("String")).and_then(Value::as_str) {
                Some(pattern) if !pattern.is_empty() => ((content / pattern.chars().count() as f64).max(1.0), 0.0),
                // a regular expression may match nothing, between every two characters
                _ => (1.0 + content, content),
            }
        }
        Some("Precompiled") => {
            let map = normalizer.get("precompiled_charsmap").and_then(Value::as_str);
            let bytes = map.and_then(|m| base64::engine::general_purpose::STANDARD.decode(m).ok());
            (bytes.map_or(18, |b| super::charsmap::longest_replacement(&b)) as f64, 0.0)
        }
        // a kind this was not written for: as much as Unicode's longest decomposition
        Some(_) => (18.0, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_normalisers_of_real_models_take_every_text_the_models_take() {
        let bert = json!({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true});
        let llama = json!({"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]});
        let xlmr = json!({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]});
        for normalizer in [Value::Null, bert, llama, xlmr] {
            assert_eq!(max_text_chars(&normalizer), MAX_TEXT_CHARS, "{normalizer}");
        }
    }

    #[test]
    fn a_normaliser_that_grows_a_text_takes_shorter_ones() {
        let long = "a".repeat(10_000);
        let replace = json!({"type": "Replace", "pattern": {"String": "a"}, "content": long});
        assert_eq!(max_text_chars(&replace), NORMALIZED_CHARS / 10_000);
        // the same after another step, and a regular expression counts as matching everywhere
        let sequence = json!({"type": "Sequence", "normalizers": [{"type": "NFKC"}, replace]});
        assert_eq!(max_text_chars(&sequence), NORMALIZED_CHARS / 180_000);
        let regex = json!({"type": "Replace", "pattern": {"Regex": "x*"}, "content": "c".repeat(1000)});
        assert_eq!(max_text_chars(&regex), (NORMALIZED_CHARS - 1000) / 1001);
        let prepend = json!({"type": "Prepend", "prepend": "b".repeat(NORMALIZED_CHARS)});
        assert_eq!(max_text_chars(&prepend), 0);
    }
}
