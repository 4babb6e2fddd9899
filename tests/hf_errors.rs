//! Bad model files and bad text give errors that name the file and the problem.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

use std::path::Path;

use headmap::models::hf::{HfModel, ModelFiles};
use headmap::Error;

fn read(model: &str, file: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(model).join(file)).unwrap()
}

/// Loads the tiny BERT with one file swapped for `bad`.
fn bert_with(config: Option<&[u8]>, weights: Option<&[u8]>, tokenizer: Option<&[u8]>) -> Result<HfModel, Error> {
    let (c, w, t) = (read("bert", "config.json"), read("bert", "model.safetensors"), read("bert", "tokenizer.json"));
    HfModel::load(&ModelFiles {
        config: config.unwrap_or(&c),
        weights: weights.unwrap_or(&w),
        tokenizer: Some(tokenizer.unwrap_or(&t)),
        ..ModelFiles::default()
    })
}

/// A fixture model as its folder holds it: tokenizer.json, or source.spm + vocab.json.
fn fixture_model(name: &str) -> HfModel {
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
    HfModel::load(&files).unwrap()
}

fn message(r: Result<HfModel, Error>) -> String {
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
    let none = HfModel::load(&ModelFiles { config: &c, weights: &w, ..ModelFiles::default() });
    assert!(message(none).contains("give tokenizer.json, or for Marian models source.spm and vocab.json"));
    let marian = read("marian", "vocab.json");
    let bad_spm = HfModel::load(&ModelFiles {
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
    match model.run(&[&long], &[]) {
        Err(Error::TooLong { tokens, max }) => assert_eq!((tokens, max), (82, 64)),
        other => panic!("expected TooLong, got {:?}", other.err()),
    }
    assert!(matches!(model.run(&["  "], &[]), Err(Error::EmptyText)));
}

#[test]
fn byte_level_korean_is_labelled_as_korean() {
    let model = fixture_model("gpt2");
    let text = "동물이 길을 건너지 않았다.";
    let enc = model.tokenizer().encode(text).unwrap();
    for label in &enc.labels {
        assert!(label.chars().all(|ch| text.contains(ch)), "label {label:?} is not text from the sentence");
    }
    assert!(enc.labels.iter().any(|l| l.contains('동')));
    let run = model.run(&[text, "Minsu gave Younghee a book."], &[]).unwrap();
    assert_eq!(run.places[0].batch(), 2);
    assert!(run.places[0].weights[1].iter().all(|w| w.iter().all(|v| v.is_finite())));
}

#[test]
fn encoder_decoder_runs_from_text() {
    let model = fixture_model("marian");
    let run = model.run(&["민수가 영희에게 책을 주었다."], &["Minsu gave Younghee a book."]).unwrap();
    assert_eq!(run.places.len(), 3);
    let cross = &run.places[2];
    assert_eq!(cross.queries[0][0], "<pad>", "the decoder starts from decoder_start_token_id");
    assert_eq!(cross.keys[0].last().unwrap(), "</s>");
    assert_ne!(cross.shape().1, cross.shape().2, "cross-attention is Tq x Tk");
    let t = model.trace(cross, 0, 1, 3).unwrap();
    assert_eq!(t.steps.weights, cross.weights[0][1].index_axis(ndarray::Axis(0), 3));
}

#[test]
fn a_syllable_split_into_jamo_shows_each_jamo() {
    // BERT's uncased normaliser decomposes Hangul; all-MiniLM-L6-v2 is such a model.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let tokenizer = headmap::tokenize::hf::TextTokenizer::from_json(
        &std::fs::read(dir.join("tokenizer.json")).unwrap(),
        "tokenizer.json",
    )
    .unwrap();
    let enc = tokenizer.encode("민수가 책을").unwrap();
    assert_eq!(enc.labels.first().unwrap(), "[CLS]");
    let inner: Vec<&String> = enc.labels.iter().filter(|l| !l.starts_with('[')).collect();
    assert!(inner.iter().all(|l| !l.contains('\u{fffd}') && !l.starts_with("##")), "{inner:?}");
    assert!(inner.windows(2).any(|w| w[0] != w[1]), "the pieces of one syllable are told apart: {inner:?}");
}

#[test]
fn what_if_masks_change_what_a_model_may_see() {
    let model = bert_with(None, None, None).unwrap();
    let text = ["동물이 길을 건너지 않았다.", "a book."];
    let causal = model.run_what_if(&text, &[], Some(headmap::MaskKind::Causal)).unwrap();
    let place = &causal.places[0];
    assert_eq!(place.kind, headmap::MaskKind::Causal);
    for ((_, i, j), &w) in place.weights[0][1].indexed_iter() {
        if j > i {
            assert_eq!(w, 0.0, "BERT under a causal what-if mask sees no future key ({i}, {j})");
        }
    }
    let none = model.run_what_if(&text, &[], Some(headmap::MaskKind::None)).unwrap();
    let pad = none.places[0].key_valid[1].iter().position(|v| !v).unwrap();
    assert!(
        none.places[0].weights[1][0].slice(ndarray::s![.., 0, pad..]).sum() > 0.0,
        "without a mask PAD keys take weight"
    );
    let trained = model.run(&text, &[]).unwrap();
    assert_eq!(trained.places[0].kind, headmap::MaskKind::Padding);
    let marian = fixture_model("marian");
    assert!(marian.run_what_if(&["a"], &[], Some(headmap::MaskKind::None)).is_err());
}
