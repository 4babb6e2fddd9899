//! Bad model files and bad text give errors that name the file and the problem.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

use std::path::Path;

use headmap::models::hf::ModelFiles;
use headmap::tokenize::TokenKind;
use headmap::{Error, MaskKind, Model, Place, Request};

fn request(texts: &[&str]) -> Request {
    Request { texts: texts.iter().map(|t| t.to_string()).collect(), ..Request::default() }
}

fn read(model: &str, file: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(model).join(file)).unwrap()
}

/// Loads the tiny BERT with one file swapped for `bad`.
fn bert_with(config: Option<&[u8]>, weights: Option<&[u8]>, tokenizer: Option<&[u8]>) -> Result<Model, Error> {
    let (c, w, t) = (read("bert", "config.json"), read("bert", "model.safetensors"), read("bert", "tokenizer.json"));
    Model::from_files(&ModelFiles {
        config: config.unwrap_or(&c),
        weights: weights.unwrap_or(&w),
        tokenizer: Some(tokenizer.unwrap_or(&t)),
        ..ModelFiles::default()
    })
}

/// A fixture model as its folder holds it: tokenizer.json, or source.spm + vocab.json.
fn fixture_model(name: &str) -> Model {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name);
    let optional = |f: &str| dir.join(f).exists().then(|| read(name, f));
    let (c, w) = (read(name, "config.json"), read(name, "model.safetensors"));
    let (t, spm, vocab) = (optional("tokenizer.json"), optional("source.spm"), optional("vocab.json"));
    let files = ModelFiles {
        config: &c,
        weights: &w,
        tokenizer: t.as_deref(),
        source_spm: spm.as_deref(),
        vocab: vocab.as_deref(),
    };
    Model::from_files(&files).unwrap()
}

fn message(r: Result<Model, Error>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn config_with(change: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut c: serde_json::Value = serde_json::from_slice(&read("bert", "config.json")).unwrap();
    change(&mut c);
    serde_json::to_vec(&c).unwrap()
}

#[test]
fn malformed_or_unsupported_configs() {
    assert!(message(bert_with(Some(b"{ not json"), None, None)).starts_with("config.json: not valid JSON"));
    assert_eq!(message(bert_with(Some(b"{}"), None, None)), "config.json: it has no `model_type`");
    let llama = config_with(|c| c["model_type"] = "llama".into());
    assert_eq!(
        message(bert_with(Some(&llama), None, None)),
        "config.json: model_type `llama` is not supported: headmap reads bert, gpt2, bart and marian"
    );
    let odd = config_with(|c| c["num_attention_heads"] = 5.into());
    assert!(message(bert_with(Some(&odd), None, None)).contains("5 heads do not divide d_model = 32"));
}

#[test]
fn truncated_or_corrupt_safetensors() {
    let w = read("bert", "model.safetensors");
    let truncated = &w[..w.len() / 2];
    let e = message(bert_with(None, Some(truncated), None));
    assert!(e.starts_with("model.safetensors: not a valid safetensors file"), "{e}");
    assert!(message(bert_with(None, Some(b"\x00\x01garbage"), None))
        .starts_with("model.safetensors: not a valid safetensors file"));
    // a header that claims far more bytes than the file has
    let mut lying = (1u64 << 40).to_le_bytes().to_vec();
    lying.extend_from_slice(&w[8..]);
    assert!(message(bert_with(None, Some(&lying), None)).starts_with("model.safetensors: not a valid safetensors file"));
}

#[test]
fn wrong_shapes_and_missing_tensors_are_named() {
    let wider = config_with(|c| c["intermediate_size"] = 50.into());
    assert_eq!(
        message(bert_with(Some(&wider), None, None)),
        "model.safetensors: tensor `encoder.layer.0.intermediate.dense.weight` has shape [48, 32], expected [50, 32]"
    );
    let deeper = config_with(|c| c["num_hidden_layers"] = 3.into());
    assert_eq!(
        message(bert_with(Some(&deeper), None, None)),
        "model.safetensors: tensor `encoder.layer.2.attention.self.query.weight` is missing"
    );
    let gpt2 = read("gpt2", "config.json");
    let e = message(bert_with(Some(&gpt2), None, None));
    assert!(e.contains("tensor `wte.weight` is missing"), "{e}");
}

#[test]
fn a_tokenizer_that_does_not_load() {
    assert!(message(bert_with(None, None, Some(b"{}"))).starts_with("tokenizer.json: the tokenizer does not load"));
    let c = read("bert", "config.json");
    let w = read("bert", "model.safetensors");
    let none = Model::from_files(&ModelFiles { config: &c, weights: &w, ..ModelFiles::default() });
    assert!(message(none).contains("give tokenizer.json, or for Marian models source.spm and vocab.json"));
    let marian = read("marian", "vocab.json");
    let bad_spm = Model::from_files(&ModelFiles {
        config: &c,
        weights: &w,
        source_spm: Some(b"\x0a\xff\xff"),
        vocab: Some(&marian),
        ..ModelFiles::default()
    });
    assert!(message(bad_spm).starts_with("source.spm: not a SentencePiece model"));
}

#[test]
fn text_longer_than_the_model_allows_is_refused() {
    let model = bert_with(None, None, None).unwrap();
    let long = "the animal ".repeat(40);
    match model.run(&request(&[&long])) {
        Err(Error::TooLong { tokens, max }) => assert_eq!((tokens, max), (82, 64)),
        other => panic!("expected TooLong, got {:?}", other.err()),
    }
    assert!(matches!(model.run(&request(&["  "])), Err(Error::EmptyText)));
}

#[test]
fn byte_level_korean_is_labelled_as_korean() {
    let model = fixture_model("gpt2");
    let text = "동물이 길을 건너지 않았다.";
    let enc = model.tokenize(text).unwrap();
    for token in &enc.tokens {
        assert!(token.text.chars().all(|ch| text.contains(ch)), "token {token:?} is not text from the sentence");
        let label = token.label.trim_end_matches(|c| ('\u{2080}'..='\u{2089}').contains(&c));
        assert!(label.chars().all(|ch| text.contains(ch)), "label {label:?} is not text from the sentence");
    }
    assert!(enc.tokens.iter().any(|t| t.label.contains('동')));
    let run = model.run(&request(&[text, "Minsu gave Younghee a book."])).unwrap();
    assert_eq!(run.places[0].batch(), 2);
    assert!(run.places[0].rows[1].weights().unwrap().iter().all(|v| v.is_finite()));
}

#[test]
fn encoder_decoder_runs_from_text() {
    let model = fixture_model("marian");
    let both = Request {
        targets: vec!["Minsu gave Younghee a book.".into()],
        ..request(&["민수가 영희에게 책을 주었다."])
    };
    let run = model.run(&both).unwrap();
    assert_eq!(run.places.len(), 3);
    let cross = &run.places[2];
    assert_eq!(cross.rows[0].queries[0].label, "<pad>", "the decoder starts from decoder_start_token_id");
    assert_eq!(cross.rows[0].keys.last().unwrap().label, "</s>");
    assert_ne!(cross.shape().1, cross.shape().2, "cross-attention is Tq x Tk");
    let t = model.trace(&run, Place::Cross, 0, 1, 3).unwrap();
    assert_eq!(t.steps.weights, cross.rows[0].head(1, 3).unwrap());
}

#[test]
fn a_syllable_split_into_jamo_shows_each_jamo() {
    // BERT's uncased normaliser decomposes Hangul; all-MiniLM-L6-v2 is such a model.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let (c, w, t) = (read("config.json"), read("model.safetensors"), read("tokenizer.json"));
    let model =
        Model::from_files(&ModelFiles { config: &c, weights: &w, tokenizer: Some(&t), ..ModelFiles::default() })
            .unwrap();
    let enc = model.tokenize("민수가 책을").unwrap();
    assert_eq!(enc.tokens.first().unwrap().label, "[CLS]");
    let inner: Vec<&String> = enc.tokens.iter().map(|t| &t.label).filter(|l| !l.starts_with('[')).collect();
    assert!(inner.iter().all(|l| !l.contains('\u{fffd}') && !l.starts_with("##")), "{inner:?}");
    assert!(inner.windows(2).any(|w| w[0] != w[1]), "the pieces of one syllable are told apart: {inner:?}");
}

#[test]
fn tokens_say_what_the_model_saw() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let (c, w, t) = (read("config.json"), read("model.safetensors"), read("tokenizer.json"));
    let model =
        Model::from_files(&ModelFiles { config: &c, weights: &w, tokenizer: Some(&t), ..ModelFiles::default() })
            .unwrap();
    // WordPiece's ## stays on a later piece of a word
    let enc = model.tokenize("unbelievably tokenized").unwrap();
    let continuation = enc.tokens.iter().find(|t| t.kind == TokenKind::Continuation).expect("a word in pieces");
    assert!(continuation.label.starts_with("##") && continuation.piece.starts_with("##"), "{continuation:?}");
    // jamo of one syllable: numbered parts of that syllable, never lone jamo
    let enc = model.tokenize("동물이 길을").unwrap();
    let parts: Vec<_> = enc.tokens.iter().filter(|t| t.kind == TokenKind::Part).collect();
    for p in &parts {
        let [k, n] = p.part.unwrap();
        assert!(k >= 1 && k <= n && n >= 2, "{p:?}");
        assert!(p.label.starts_with(&p.text) && p.text.chars().count() == 1, "{p:?}");
    }
    // a text the vocabulary cannot read at all is [UNK], with the text it replaced
    let enc = model.tokenize("🦜🦜").unwrap();
    let unk = enc.tokens.iter().find(|t| t.kind == TokenKind::Unknown).expect("an unknown token");
    assert_eq!((unk.label.as_str(), unk.text.as_str()), ("[UNK]", "🦜🦜"));
    assert!(headmap::tokenize::unreadable_share(&model.tokenize("동물이 길을 건너지 않았다.").unwrap().tokens) > 0.5);
    assert!(headmap::tokenize::unreadable_share(&model.tokenize("The animal was tired.").unwrap().tokens) < 0.1);
}

#[test]
fn what_if_masks_change_what_a_model_may_see() {
    let model = bert_with(None, None, None).unwrap();
    let text = ["동물이 길을 건너지 않았다.", "a book."];
    let with = |mask| Request { place: Some(Place::EncoderSelf), mask: Some(mask), ..request(&text) };
    let causal = model.run(&with(MaskKind::Causal)).unwrap();
    let place = &causal.places[0];
    assert_eq!(place.mask, MaskKind::Causal);
    assert!(place.what_if, "labelled as a what-if");
    for ((_, _, i, j), &w) in place.rows[0].weights().unwrap().slice(ndarray::s![1..2, .., .., ..]).indexed_iter() {
        if j > i {
            assert_eq!(w, 0.0, "BERT under a causal what-if mask sees no future key ({i}, {j})");
        }
    }
    let none = model.run(&with(MaskKind::None)).unwrap();
    let pad = none.places[0].rows[1].key_valid.iter().position(|v| !v).unwrap();
    assert!(
        none.places[0].rows[1].weights().unwrap().slice(ndarray::s![0, .., 0, pad..]).sum() > 0.0,
        "without a mask PAD keys take weight"
    );
    let trained = model.run(&request(&text)).unwrap();
    assert_eq!(trained.places[0].mask, MaskKind::Padding);
    assert!(!trained.places[0].what_if);
    // an encoder–decoder model can be asked a what-if at one place; a cross mask in a
    // self-attention place, or a place the model lacks, is refused
    let marian = fixture_model("marian");
    let what_if = marian
        .run(&Request { place: Some(Place::EncoderSelf), mask: Some(MaskKind::None), ..request(&["a"]) })
        .unwrap();
    assert!(what_if.places[0].what_if);
    assert!(marian
        .run(&Request { place: Some(Place::DecoderSelf), mask: Some(MaskKind::Cross), ..request(&["a"]) })
        .is_err());
    let e = model.run(&Request { place: Some(Place::Cross), ..request(&["a"]) }).unwrap_err().to_string();
    assert_eq!(e, "this model has no cross attention; it has encoder_self");
}

#[test]
fn impossible_configs_are_refused_by_name() {
    let zero = config_with(|c| c["num_hidden_layers"] = 0.into());
    assert_eq!(
        message(bert_with(Some(&zero), None, None)),
        "config.json: `num_hidden_layers` = 0 is impossible: it must be at least 1"
    );
    let no_heads = config_with(|c| c["num_attention_heads"] = 0.into());
    assert!(message(bert_with(Some(&no_heads), None, None)).contains("`num_attention_heads` = 0 is impossible"));
    let huge = config_with(|c| c["max_position_embeddings"] = (1u64 << 40).into());
    assert!(
        message(bert_with(Some(&huge), None, None)).contains("`max_position_embeddings` = 1099511627776 is impossible")
    );
    let small_vocab = config_with(|c| c["vocab_size"] = 10.into());
    assert!(
        message(bert_with(Some(&small_vocab), None, None)).starts_with("config.json: the tokenizer's vocabulary has")
    );
    let wrong_type = config_with(|c| c["hidden_size"] = "wide".into());
    assert_eq!(
        message(bert_with(Some(&wrong_type), None, None)),
        "config.json: `hidden_size` has the wrong type: expected a whole number"
    );
    let unknown_act = config_with(|c| c["hidden_act"] = "mish".into());
    assert!(message(bert_with(Some(&unknown_act), None, None))
        .starts_with("config.json: `hidden_act` = mish is not supported"));
    let e = message(bert_with(Some(b"{\"model_type\": \"bert\", "), None, None));
    assert!(e.starts_with("config.json: not valid JSON (line 1"), "{e}");
    for e in [message(bert_with(Some(b"[1, 2]"), None, None)), message(bert_with(Some(&wrong_type), None, None))] {
        assert!(!e.contains("expected struct") && !e.contains("untagged") && !e.contains("invalid type"), "{e}");
    }
}
