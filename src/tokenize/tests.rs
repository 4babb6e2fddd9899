//! The toy's word splitter and labels, coverage, and the character limit.

use super::*;

#[test]
fn text_over_the_character_limit_is_refused_before_tokenizing() {
    // one Hangul word of any length is one toy token: the character limit is what bounds it
    let word = "가".repeat(MAX_TEXT_CHARS + 1);
    assert_eq!(
        Tokenizer::Words.encode(&word).err(),
        Some(Error::TextTooLong { chars: MAX_TEXT_CHARS + 1, max: MAX_TEXT_CHARS })
    );
    let encoded = Tokenizer::Words.encode(&"가".repeat(MAX_TEXT_CHARS)).unwrap();
    assert_eq!(encoded.tokens.len(), 1);
    let token = &encoded.tokens[0];
    assert_eq!(token.label.chars().count(), MAX_LABEL_CHARS + 1);
    assert!(token.label.ends_with('…'));
    assert_eq!(token.text.chars().count(), MAX_TEXT_CHARS, "the token keeps its whole text");
    assert_eq!(short_label("동물"), "동물");
    // a token of characters that draw nothing is labelled with what they are, never blank
    assert_eq!(short_label("\u{200B}"), "U+200B");
    assert_eq!(short_label("\u{200D}\u{FE0F}"), "U+200D U+FE0F");
    assert_eq!(short_label("  "), "␣␣");
    assert_eq!(short_label("\n\t\u{3164}"), "⏎⇥ U+3164");
    assert_eq!(short_label("\r\n\r\n"), "⏎⏎", "a Windows line break is one");
    assert_eq!(short_label("\u{200B}\u{200B}\u{200B}\u{200B}\u{200B}"), "U+200B U+200B U+200B U+200B…");
    assert_eq!(short_label("a\u{200B}"), "a\u{200B}", "a visible character is label enough");
    // decomposed Hangul (three code points per syllable) is cut between syllables
    let jamo = "\u{1100}\u{1161}\u{11A8}".repeat(MAX_LABEL_CHARS + 5);
    let label = short_label(&jamo);
    let kept = label.strip_suffix('…').unwrap().chars().count();
    assert!(kept >= MAX_LABEL_CHARS && kept.is_multiple_of(3), "{kept} code points: whole syllables only");
    // an emoji joined by ZWJ stays whole: 👩‍💻 is three code points
    let emoji = format!("{}\u{1F469}\u{200D}\u{1F4BB}tail", "a".repeat(MAX_LABEL_CHARS - 1));
    assert_eq!(short_label(&emoji), format!("{}\u{1F469}\u{200D}\u{1F4BB}…", "a".repeat(MAX_LABEL_CHARS - 1)));
}

fn labels(text: &str) -> Vec<String> {
    split_words(text).unwrap().into_iter().map(|t| t.label).collect()
}

#[test]
fn korean_eojeol_and_punctuation() {
    let got = labels("동물이 길을 건너지 않았다. 그것은 너무 피곤했다.");
    assert_eq!(got, ["동물이", "길을", "건너지", "않았다", ".", "그것은", "너무", "피곤했다", "."]);
}

#[test]
fn english_keeps_contractions() {
    let got = labels("The animal didn't cross the street because it was too tired.");
    assert_eq!(got.len(), 12, "{got:?}");
    assert!(got.contains(&"didn't".to_string()));
}

#[test]
fn emoji_and_mixed_scripts() {
    let got = labels("AI가 👩‍💻 코드를 썼다!");
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

#[test]
fn coverage_counts_unknown_tokens_and_words_spelled_out() {
    let piece =
        |text: &str, kind| Token { label: text.into(), piece: text.into(), kind, text: text.into(), part: None };
    let mut tokens = vec![Token::marker("[CLS]", TokenKind::Special)];
    // "chased" letter by letter, "cat" whole, "hungry" as two ordinary pieces, one [UNK]
    tokens.push(piece("c", TokenKind::Word));
    for c in ["h", "a", "s", "e", "d"] {
        tokens.push(piece(c, TokenKind::Continuation));
    }
    tokens.push(piece("cat", TokenKind::Word));
    tokens.push(piece("hung", TokenKind::Word));
    tokens.push(piece("ry", TokenKind::Continuation));
    tokens.push(Token::marker("[UNK]", TokenKind::Unknown));
    // a Korean stem and its particle, both short: read, not spelled
    tokens.push(piece("길", TokenKind::Word));
    tokens.push(piece("을", TokenKind::Continuation));
    tokens.push(Token::marker("[PAD]", TokenKind::Pad));
    let c = coverage(&tokens);
    assert_eq!(c.tokens, 12, "special and PAD tokens aside");
    assert!((c.letters - 0.5).abs() < 1e-6, "six of twelve spell a word out: {c:?}");
    assert!((c.unknown - 1.0 / 12.0).abs() < 1e-6, "one of twelve unknown: {c:?}");
    assert!((c.read - 5.0 / 12.0).abs() < 1e-6, "{c:?}");
    assert_eq!(coverage(&[]).read, 0.0, "no text, no share");
}

#[test]
fn unreadable_share_counts_unknown_and_part_tokens_only() {
    let part = |k| Token {
        label: format!("동{}", subscript(k)),
        piece: "x".into(),
        kind: TokenKind::Part,
        text: "동".into(),
        part: Some([k, 2]),
    };
    let tokens = [
        Token::marker("[CLS]", TokenKind::Special),
        part(1),
        part(2),
        Token::marker("[UNK]", TokenKind::Unknown),
        Token::word("a"),
        Token::marker("[PAD]", TokenKind::Pad),
    ];
    assert_eq!(unreadable_share(&tokens), 0.75);
    assert_eq!(subscript(12), "₁₂");
}
