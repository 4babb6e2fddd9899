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
    fixture_with(name, |_| {}).unwrap()
}

/// A fixture model with its config changed by `change`.
fn fixture_with(name: &str, change: impl FnOnce(&mut serde_json::Value)) -> Result<Model, Error> {
    fixture_weighing(name, change, &read(name, "model.safetensors"))
}

/// A fixture model with its config changed by `change` and `w` for its weights.
fn fixture_weighing(name: &str, change: impl FnOnce(&mut serde_json::Value), w: &[u8]) -> Result<Model, Error> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name);
    let optional = |f: &str| dir.join(f).exists().then(|| read(name, f));
    let mut config: serde_json::Value = serde_json::from_slice(&read(name, "config.json")).unwrap();
    change(&mut config);
    let c = serde_json::to_vec(&config).unwrap();
    let (t, spm, vocab) = (optional("tokenizer.json"), optional("source.spm"), optional("vocab.json"));
    let files = ModelFiles {
        config: &c,
        weights: w,
        tokenizer: t.as_deref(),
        source_spm: spm.as_deref(),
        vocab: vocab.as_deref(),
        ..ModelFiles::default()
    };
    Model::from_files(&files)
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
    // valid JSON of the wrong kind is not called invalid JSON
    for (doc, found) in [
        (&b"null"[..], "null"),
        (b"[]", "a list"),
        (b" 3 ", "a number"),
        (b"\"bert\"", "text"),
        (b"true", "true or false"),
    ] {
        assert_eq!(
            message(bert_with(Some(doc), None, None)),
            format!("config.json: valid JSON, but {found} where an object of settings belongs"),
            "{}",
            String::from_utf8_lossy(doc)
        );
    }
    let gemma = config_with(|c| c["model_type"] = "gemma".into());
    assert_eq!(
        message(bert_with(Some(&gemma), None, None)),
        "config.json: model_type `gemma` is not supported: headmap reads bert, roberta, xlm-roberta, distilbert, \
         electra, gpt2, gpt_neo, gpt_neox, llama, qwen2, mistral, bart, marian and t5"
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

/// Template post-processors the tokenizers crate reads without the checks its builder makes,
/// and would then panic on while encoding: refused at load, also inside a `Sequence`.
#[test]
fn a_template_the_tokenizer_cannot_apply_is_refused() {
    let tokenizer: serde_json::Value = serde_json::from_slice(&read("bert", "tokenizer.json")).unwrap();
    let with_post = |change: &dyn Fn(&mut serde_json::Value), nested: bool| {
        let mut t = tokenizer.clone();
        change(&mut t["post_processor"]);
        if nested {
            let post = t["post_processor"].take();
            t["post_processor"] = serde_json::json!({"type": "Sequence", "processors": [post]});
        }
        bert_with(None, None, Some(&serde_json::to_vec(&t).unwrap()))
    };
    type Damage<'a> = (&'a str, &'a dyn Fn(&mut serde_json::Value));
    let damaged: [Damage; 4] = [
        ("an undefined special token", &|p| p["single"][0]["SpecialToken"]["id"] = "[CLX]".into()),
        ("text B in the template for one text", &|p| p["single"][1]["Sequence"]["id"] = "B".into()),
        ("more ids than spellings", &|p| p["special_tokens"]["[SEP]"]["ids"] = serde_json::json!([3, 3])),
        ("a pair template's undefined token", &|p| p["pair"][4]["SpecialToken"]["id"] = "[SEQ]".into()),
    ];
    for nested in [false, true] {
        assert!(with_post(&|_| {}, nested).is_ok(), "the undamaged template, nested {nested}");
        for (what, change) in &damaged {
            let e = message(with_post(change, nested));
            assert!(e.starts_with("tokenizer.json: the tokenizer does not load"), "{what}, nested {nested}: {e}");
        }
    }
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

/// The token ids a config gives generation — where the decoder starts (its start token, else
/// PAD), what its last step is forced to — are refused by name when outside the decoder's
/// vocabulary: one past Marian's logits used to index past them at the last token written.
#[test]
fn generation_token_ids_outside_the_vocabulary_are_refused() {
    for (name, setting) in [
        ("marian", "forced_eos_token_id"),
        ("marian", "decoder_start_token_id"),
        ("bart", "forced_eos_token_id"),
        ("bart", "decoder_start_token_id"),
        ("t5", "decoder_start_token_id"),
    ] {
        let config: serde_json::Value = serde_json::from_slice(&read(name, "config.json")).unwrap();
        let vocab = config.get("decoder_vocab_size").filter(|v| !v.is_null()).unwrap_or(&config["vocab_size"]).clone();
        let vocab = vocab.as_u64().unwrap();
        for id in [vocab, 1_000_000_000] {
            let e = message(fixture_with(name, |c| c[setting] = id.into()));
            assert_eq!(
                e,
                format!("config.json: `{setting}` = {id} is impossible: it is outside the vocabulary"),
                "{name}"
            );
        }
        // the last id inside it loads, and writes
        let model = fixture_with(name, |c| c[setting] = (vocab - 1).into()).unwrap();
        model.generate("a b", 2).unwrap();
    }
    // without a start token the decoder starts from PAD, which must be in the decoder's own
    // vocabulary (Marian's may be smaller than the encoder's)
    let e = message(fixture_with("marian", |c| {
        let pad = c["pad_token_id"].as_u64().unwrap();
        c["decoder_start_token_id"] = serde_json::Value::Null;
        c["decoder_vocab_size"] = pad.into();
    }));
    assert!(e.starts_with("config.json: `pad_token_id` = "), "{e}");
    assert!(e.ends_with("is impossible: it is outside the vocabulary"), "{e}");
}

/// Every config switch headmap does not compute is refused by name, not ignored.
#[test]
fn every_refused_switch_is_named() {
    use serde_json::json;
    type Change = Box<dyn FnOnce(&mut serde_json::Value)>;
    let cases: Vec<(&str, Change, &str)> = vec![
        ("roberta", Box::new(|c| c["position_embedding_type"] = "relative_key".into()), "`position_embedding_type` = relative_key is not supported"),
        ("xlm-roberta", Box::new(|c| c["is_decoder"] = true.into()), "`is_decoder` = true is not supported"),
        ("electra", Box::new(|c| c["add_cross_attention"] = true.into()), "`add_cross_attention` = true is not supported"),
        ("bert", Box::new(|c| c["position_embedding_type"] = "relative_key_query".into()), "`position_embedding_type` = relative_key_query"),
        ("gpt2-inverse-layer", Box::new(|c| c["add_cross_attention"] = true.into()), "`add_cross_attention` = true is not supported"),
        ("gpt_neo", Box::new(|c| {
            c["attention_types"] = json!([[["global", "sparse"], 1]]);
            c["attention_layers"] = json!(["global", "sparse"]);
        }), "`attention_types` = sparse is not supported"),
        // transformers reads attention_types: attention_layers must spell the same
        ("gpt_neo", Box::new(|c| c["attention_types"] = json!([[["global", "local"], 5]])), "`attention_types` = 10 is impossible"),
        ("gpt_neo", Box::new(|c| c["attention_layers"] = json!(["global"])), "`attention_layers` = 1 is impossible"),
        ("llama", Box::new(|c| c["rope_parameters"]["rope_type"] = "longrope".into()), "`rope_parameters.rope_type` = longrope is not supported: headmap computes the RoPE types default, linear, dynamic, llama3 and yarn"),
        ("llama3", Box::new(|c| c["rope_scaling"]["rope_type"] = "proportional".into()), "`rope_scaling.rope_type` = proportional is not supported"),
        ("mistral", Box::new(|c| c["rope_parameters"] = json!({"full_attention": {"rope_type": "default"}})), "`rope_parameters.full_attention` = {…} is not supported"),
        ("qwen2", Box::new(|c| c["layer_types"] = json!(["full_attention", "chunked_attention"])), "`layer_types` = chunked_attention is not supported"),
        ("gpt_neox", Box::new(|c| c["rope_scaling"] = json!({"type": "su"})), "`rope_scaling.rope_type` = su is not supported"),
        ("gpt_neox", Box::new(|c| c["rotary_pct"] = 1.5.into()), "`partial_rotary_factor` = 1.5 is impossible: it would turn 24 of a head's 16 dimensions"),
        // so large its width overflows: refused, not a panic (found by tests/loaders.rs)
        ("gpt_neox", Box::new(|c| c["rotary_pct"] = 1e300.into()), "it would turn 18446744073709551615 of a head's 16 dimensions"),
        ("llama", Box::new(|c| c["num_key_value_heads"] = 3.into()), "`num_key_value_heads` = 3 is impossible: it must divide num_attention_heads = 4"),
        ("t5", Box::new(|c| c["feed_forward_proj"] = "gated-mish".into()), "`feed_forward_proj` = mish is not supported"),
        ("t5", Box::new(|c| c["feed_forward_proj"] = "gated-gelu-new".into()), "`feed_forward_proj` = gated-gelu-new is impossible"),
        ("t5-v1_1", Box::new(|c| c["is_decoder"] = true.into()), "`is_decoder` = true is not supported"),
    ];
    for (fixture, change, want) in cases {
        let e = match fixture_with(fixture, change) {
            Ok(_) => panic!("{fixture}: loaded, expected {want}"),
            Err(e) => e.to_string(),
        };
        assert!(e.starts_with("config.json: ") && e.contains(want), "{fixture}: {e}");
    }
    // the switches that change nothing headmap computes load
    fixture_with("distilbert", |c| c["sinusoidal_pos_embds"] = true.into()).unwrap();
    fixture_with("gpt2-inverse-layer", |c| c["reorder_and_upcast_attn"] = false.into()).unwrap();
    fixture_with("llama", |c| c["pretraining_tp"] = 2.into()).unwrap();
}

/// A sharded checkpoint: the index must name shards that were given and tensors they hold.
#[test]
fn a_sharded_checkpoint_with_a_missing_or_wrong_shard_is_refused() {
    use headmap::models::weights::{shard_names, INDEX};
    let dir = "llama-sharded";
    let (config, tokenizer, index) = (read(dir, "config.json"), read(dir, "tokenizer.json"), read(dir, INDEX));
    let names = shard_names(&index).unwrap();
    assert_eq!(names.len(), 4);
    let bytes: Vec<Vec<u8>> = names.iter().map(|n| read(dir, n)).collect();
    let load = |index: &[u8], shards: Vec<(&str, &[u8])>| {
        message(Model::from_files(&ModelFiles {
            config: &config,
            tokenizer: Some(&tokenizer),
            index: Some(index),
            shards,
            ..ModelFiles::default()
        }))
    };
    let all = || names.iter().map(String::as_str).zip(bytes.iter().map(Vec::as_slice)).collect::<Vec<_>>();
    let mut three = all();
    three.remove(1);
    assert_eq!(load(&index, three), format!("{INDEX}: it names the shard `{}`, which was not given", names[1]));
    let mut moved: serde_json::Value = serde_json::from_slice(&index).unwrap();
    moved["weight_map"]["model.norm.weight"] = names[0].clone().into();
    let e = load(&serde_json::to_vec(&moved).unwrap(), all());
    assert_eq!(e, format!("{INDEX}: it puts tensor `model.norm.weight` in `{}`, which does not hold it", names[0]));
    assert!(load(b"{\"metadata\": {}}", all()).contains("not a sharded-checkpoint index"));
    assert!(load(b"{ not json", all()).starts_with(&format!("{INDEX}: not valid JSON")));
    let mut truncated = all();
    truncated[2].1 = &truncated[2].1[..100];
    assert_eq!(
        load(&index, truncated),
        format!("{}: not a valid safetensors file: it is damaged, truncated or of another format", names[2])
    );
}

/// RoBERTa and XLM-R count positions from the padding id: a config that names none reads
/// transformers' default 1, as if it said so (it was once read as BERT's 0).
#[test]
fn a_roberta_config_without_pad_token_id_pads_with_transformers_default() {
    let texts = request(&["The animal did not cross the street.", "It was tired."]);
    for name in ["roberta", "xlm-roberta"] {
        let given = fixture_model(name);
        let absent = fixture_with(name, |c| {
            c.as_object_mut().unwrap().remove("pad_token_id");
        })
        .unwrap();
        assert_eq!(absent.info().max_tokens, given.info().max_tokens, "{name}: positions after pad 1");
        let (a, b) = (given.run(&texts).unwrap(), absent.run(&texts).unwrap());
        assert_eq!(b.places[0].rows[1].weights().unwrap(), a.places[0].rows[1].weights().unwrap(), "{name}");
    }
}

/// A folder's sharded index reads its shards from the folder alone: a name with other folders
/// before it, `..` or a device reads the shard of that name beside the index, or names none.
#[test]
fn a_shard_index_cannot_read_outside_its_folder() {
    use headmap::models::weights::INDEX;
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf/llama-sharded");
    let dir = std::env::temp_dir().join(format!("headmap-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let mut index: serde_json::Value = serde_json::from_slice(&std::fs::read(from.join(INDEX)).unwrap()).unwrap();
    let first = index["weight_map"]["model.norm.weight"].as_str().unwrap().to_string();
    // the same shard through folders of its own: read from this folder, the model loads
    index["weight_map"]["model.norm.weight"] = format!("../../elsewhere/{first}").into();
    std::fs::write(dir.join(INDEX), serde_json::to_vec(&index).unwrap()).unwrap();
    assert!(Model::from_dir(&dir).is_ok());
    for outside in ["/dev/zero", "../../../../../../etc/passwd", ".."] {
        index["weight_map"]["model.norm.weight"] = outside.into();
        std::fs::write(dir.join(INDEX), serde_json::to_vec(&index).unwrap()).unwrap();
        let e = message(Model::from_dir(&dir));
        let name = Path::new(outside).file_name().map_or("..".into(), |n| n.to_string_lossy().to_string());
        assert!(e.starts_with(&dir.join(&name).display().to_string()), "{outside}: {e}");
    }
    // a device in a file's place is refused, not read without end
    std::fs::remove_file(dir.join("config.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("config.json")).unwrap();
    assert!(message(Model::from_dir(&dir)).ends_with("not a regular file"), "config.json as /dev/zero");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A normaliser that makes much of little takes shorter texts, refused before it runs; a text
/// the normaliser empties is empty; a norm's epsilon must be a number from 0.
#[test]
fn texts_a_tokenizer_could_not_take_are_refused_before_it_runs() {
    let growing = |by: usize| {
        let mut tokenizer: serde_json::Value = serde_json::from_slice(&read("bert", "tokenizer.json")).unwrap();
        let replace = serde_json::json!({"type": "Replace", "pattern": {"String": "a"}, "content": "a".repeat(by)});
        let normalizers = [tokenizer["normalizer"].clone(), replace];
        tokenizer["normalizer"] = serde_json::json!({"type": "Sequence", "normalizers": normalizers});
        bert_with(None, None, Some(&serde_json::to_vec(&tokenizer).unwrap()))
    };
    // BERT's normaliser may make 36 characters of one, then each becomes 1,000
    match growing(1000).unwrap().run(&request(&[&"a".repeat(1000)])) {
        Err(Error::TextTooLong { chars, max }) => assert_eq!((chars, max), (1000, (1 << 22) / 36_000)),
        other => panic!("expected TextTooLong, got {:?}", other.err()),
    }
    let e = message(growing(10_000));
    assert!(
        e.starts_with("tokenizer.json: its normaliser can make more than 4194304 characters of a text of 64"),
        "{e}"
    );
    let model = bert_with(None, None, None).unwrap();
    for empty in ["\u{200b}\u{200c}\u{200d}\u{feff}", "\u{301}\u{301}"] {
        assert!(matches!(model.run(&request(&[empty])), Err(Error::EmptyText)), "{empty:?}");
    }
    assert!(model.run(&request(&["[MASK]"])).is_ok(), "a special token typed is text");
    for eps in [-1.0, 1e300] {
        let e = message(bert_with(Some(&config_with(|c| c["layer_norm_eps"] = eps.into())), None, None));
        assert!(e.starts_with("config.json: `") && e.contains("is impossible"), "{eps}: {e}");
    }
}

/// `name`'s weights with every value of `tensors` (f32 or bf16) set to 3e38: finite, so loading
/// takes them, but past what f32 holds once multiplied.
fn huge_weights(name: &str, tensors: &[&str]) -> Vec<u8> {
    let mut bytes = read(name, "model.safetensors");
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    for tensor in tensors {
        let at = &header[*tensor]["data_offsets"];
        let (from, to) = (8 + n + at[0].as_u64().unwrap() as usize, 8 + n + at[1].as_u64().unwrap() as usize);
        let huge = 3e38f32.to_le_bytes();
        match header[*tensor]["dtype"].as_str().unwrap() {
            "F32" => bytes[from..to].chunks_exact_mut(4).for_each(|v| v.copy_from_slice(&huge)),
            "BF16" => bytes[from..to].chunks_exact_mut(2).for_each(|v| v.copy_from_slice(&huge[2..])),
            other => panic!("{other}: no 3e38 in it"),
        }
    }
    bytes
}

/// Weights too large for f32 overflow in a product: the error names the layer and the place,
/// in a post-norm encoder, a pre-norm decoder and while writing, never a NaN heatmap.
#[test]
fn an_overflow_names_its_layer_and_place() {
    let said = |r: Result<headmap::Run, Error>| match r {
        Err(e @ Error::NonFiniteAt { .. }) => e.to_string(),
        other => panic!("expected NonFiniteAt, got {:?}", other.map(|_| ()).err()),
    };
    let bert = huge_weights(
        "bert",
        &["encoder.layer.1.attention.self.query.weight", "encoder.layer.1.attention.self.query.bias"],
    );
    let bert = fixture_weighing("bert", |_| {}, &bert).unwrap();
    let e = said(bert.run(&request(&["The cat sat on the mat."])));
    assert!(e.starts_with("`Q` of layer 1's encoder_self attention holds a non-finite value"), "{e}");
    // two texts of one length run side by side (the stacked encoder), and say the same
    assert_eq!(
        said(bert.run(&request(&["The cat sat.", "The dog ran."]))).split(" at ").next(),
        e.split(" at ").next()
    );

    let llama =
        huge_weights("llama", &["model.layers.1.input_layernorm.weight", "model.layers.1.self_attn.q_proj.weight"]);
    let llama = fixture_weighing("llama", |_| {}, &llama).unwrap();
    let e = said(llama.run(&request(&["The cat sat on the mat."])));
    assert!(e.starts_with("`Q` of layer 1's decoder_self attention holds"), "{e}");
    match llama.generate("The cat", 3) {
        Err(Error::NonFiniteAt { layer: 1, place, .. }) => assert_eq!(place, "decoder_self"),
        other => panic!("expected NonFiniteAt while writing, got {:?}", other.map(|_| ()).err()),
    }
    // past the last attention block only the logits can say it: predictions are refused, not NaN
    let llama = huge_weights(
        "llama",
        &["model.layers.1.post_attention_layernorm.weight", "model.layers.1.mlp.down_proj.weight"],
    );
    let llama = fixture_weighing("llama", |_| {}, &llama).unwrap();
    let options = headmap::models::predict::PredictOptions { top_k: 3, lens: Some(None), ..Default::default() };
    match llama.predict(&request(&["The cat sat on the mat."]), &options) {
        Err(Error::NonFinite { what, .. }) => assert_eq!(what, "the output head's logits"),
        other => panic!("expected NonFinite logits, got {:?}", other.map(|_| ()).err()),
    }
    assert!(matches!(llama.generate("The cat", 3), Err(Error::NonFinite { .. })), "writing");
}
