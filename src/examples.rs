//! The example sentences of the two articles headmap grew from (`shared/seeds/`), shipped
//! as data so the page, the widget and the tests use the same text.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Example {
    pub id: &'static str,
    pub lang: &'static str,
    pub text: &'static str,
    /// What the article asks the reader to look at, in the reader's language.
    pub note: Note,
}

/// A note in English and in Korean: a reader reads it in the page's language, whatever the
/// example's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Note {
    pub en: &'static str,
    pub ko: &'static str,
}

pub const EXAMPLES: &[Example] = &[
    Example {
        id: "animal-ko",
        lang: "ko",
        text: "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.",
        note: Note {
            en: "When it builds the representation of ‘그것은’ (it), how much does it look at ‘동물이’ (the animal)?",
            ko: "‘그것은’의 표현을 만들 때 ‘동물이’를 얼마나 참고할까?",
        },
    },
    Example {
        id: "animal-en",
        lang: "en",
        text: "The animal didn't cross the street because it was too tired.",
        note: Note {
            en: "How much does “it” look at “animal”?", ko: "‘it’은 ‘animal’을 얼마나 참고할까?"
        },
    },
    Example {
        id: "give-ko",
        lang: "ko",
        text: "민수가 영희에게 책을 주었다.",
        note: Note {
            en: "‘주었다’ (gave): who gave, to whom, what — each head may weigh them differently.",
            ko: "‘주었다’: 누가, 누구에게, 무엇을 — 헤드마다 다른 관계를 볼 수 있다.",
        },
    },
    Example {
        id: "give-en",
        lang: "en",
        text: "Minsu gave Younghee a book.",
        note: Note {
            en: "“gave”: who gave, to whom, what — each head may weigh them differently.",
            ko: "‘gave’: 누가, 누구에게, 무엇을 — 헤드마다 다른 관계를 볼 수 있다.",
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_tokenizes() {
        for e in EXAMPLES {
            let tokens = crate::tokenize::split_words(e.text).unwrap();
            assert!(tokens.len() >= 5, "{}: {tokens:?}", e.id);
        }
    }
}
