//! Generation over the KV cache: the rows each step records equal the rows of one full run over
//! the final text in every layer, head and place; an encoder–decoder's greedy text equals the
//! one written without a cache; a seed draws the same tokens on any number of threads; bad
//! settings and models that cannot write are refused by name. Greedy ids against transformers'
//! `generate` are in tests/generate_parity.rs. Needs `--features hf`.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::{Path, PathBuf};

use common::load;
use headmap::models::generate::{Ended, GenerateRequest, Generation, Sampling};
use headmap::run::Ablation;
use headmap::{Error, Model, Place, Run};

const TOL: f32 = 1e-5;

/// Every fixture that writes text: the decoder-only families and the encoder–decoders.
const WRITERS: [&str; 16] = [
    "gpt2",
    "gpt2-inverse-layer",
    "gpt_neo",
    "gpt_neox",
    "gpt_neox-odd-rotary",
    "gpt_neox-sequential",
    "llama",
    "llama3",
    "mistral",
    "qwen2",
    "bart",
    "marian",
    "t5",
    "t5-v1_1",
    "../../../www/models/headmap-tiny-ko-en",
    "../../../www/models/headmap-tiny-induction",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name)
}

/// The first text of a fixture's reference cases, or the induction model's repeat.
fn prompt(name: &str) -> String {
    if name.contains("induction") {
        return "고양이 공원 노래 꽃 강 가방 고양이 공원".into();
    }
    if name.contains("tiny-ko-en") {
        return "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.".into();
    }
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture(name).join("reference.json")).expect("reference.json")).unwrap();
    let case = &reference["cases"][0];
    let text = case["texts"][0].as_str().or(case["sources"][0].as_str());
    text.expect("a text or a source").to_string()
}

fn greedy(prompt: &str, max_new_tokens: usize) -> GenerateRequest {
    GenerateRequest { prompt: prompt.into(), max_new_tokens, ..GenerateRequest::default() }
}

/// Each written token's rows against the full run's row of the position that wrote it; the
/// largest difference.
fn assert_rows_match(model: &Model, g: &Generation, run: &Run, label: &str) -> f32 {
    let encoder_decoder = model.info().encoder_decoder;
    // the position that wrote token i: after the prompt in a decoder-only model, i itself in
    // an encoder–decoder's target (start token first)
    let first = if encoder_decoder { 0 } else { g.ids.len() - g.generated.len() - 1 };
    let mut worst = 0f32;
    let mut places = vec![(Place::DecoderSelf, false)];
    if encoder_decoder {
        places.push((Place::Cross, true));
    }
    for (place, cross) in places {
        let row = run.place(place).unwrap().row(0).unwrap();
        for (i, w) in g.generated.iter().enumerate() {
            let rows = if cross { &w.rows.cross } else { &w.rows.decoder };
            assert_eq!(rows.len(), row.layers(), "{label}: a row per layer");
            for (layer, got) in rows.iter().enumerate() {
                let full = row.layer(layer).unwrap(); // (H, T, T)
                let q = first + i;
                let (h, tk) = got.dim();
                assert_eq!(h, full.shape()[0], "{label}: heads");
                // the step saw the keys up to itself: the full row's later keys are masked (0)
                for head in 0..h {
                    for k in 0..full.shape()[2] {
                        let want = full[[head, q, k]];
                        let have = if k < tk { got[[head, k]] } else { 0.0 };
                        let d = (have - want).abs();
                        worst = worst.max(d);
                        assert!(
                            d <= TOL,
                            "{label} {place:?} token {i} layer {layer} head {head} key {k}: {have} vs {want}"
                        );
                    }
                }
            }
        }
    }
    worst
}

#[test]
fn the_cache_changes_no_weight_of_any_family() {
    let mut figures = Vec::new();
    for name in WRITERS {
        let model = load(&fixture(name));
        let request = greedy(&prompt(name), 8);
        let g = model.generate_text(&request, |_| true).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!g.generated.is_empty(), "{name}: wrote something");
        let run = model.generated_run(&request, &g).unwrap();
        let worst = assert_rows_match(&model, &g, &run, name);
        figures.push(format!("{name} {} tokens {worst:.1e}", g.generated.len()));
    }
    println!("largest difference, cached steps against one full run: {}", figures.join("; "));
}

#[test]
fn greedy_ids_equal_transformers_generate() {
    // tests/fixtures/generate/greedy.json, from scripts/dev/make_generate_fixtures.py
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/generate/greedy.json");
    let reference: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let ids = |v: &serde_json::Value| -> Vec<u32> {
        v.as_array().unwrap().iter().map(|i| i.as_u64().unwrap() as u32).collect()
    };
    let cases = reference["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 16, "every fixture that writes, and both trained models");
    for (name, case) in cases {
        let dir = if name.starts_with("headmap-") { format!("../../../www/models/{name}") } else { name.clone() };
        let model = load(&fixture(&dir));
        let max_new_tokens = case["max_new_tokens"].as_u64().unwrap() as usize;
        let mut request = greedy(&prompt(&dir), max_new_tokens);
        let g = model.generate_text(&request, |_| true).unwrap();
        if !model.info().encoder_decoder {
            assert_eq!(g.ids[..g.ids.len() - g.generated.len()], ids(&case["prompt_ids"]), "{name}: the prompt");
        }
        assert_eq!(g.ids, ids(&case["output_ids"]), "{name}: greedy ids");
        if let Some(spec) = case["ablate"].as_str() {
            request.ablate = Some(spec.into());
            let g = model.generate_text(&request, |_| true).unwrap();
            assert_eq!(g.ids, ids(&case["ablated_output_ids"]), "{name}: greedy ids with {spec} off");
        }
    }
}

#[test]
fn heads_turned_off_stay_off_in_every_step() {
    for (name, spec) in
        [("gpt2", "1.0,0.1"), ("llama", "0.1"), ("../../../www/models/headmap-tiny-ko-en", "cross:1.2,0.0")]
    {
        let model = load(&fixture(name));
        for ablation in [Ablation::Zero, Ablation::Mean] {
            let request = GenerateRequest { ablate: Some(spec.into()), ablation, ..greedy(&prompt(name), 6) };
            let g = model.generate_text(&request, |_| true).unwrap();
            assert!(!g.ablated.is_empty(), "{name}: says which heads are off");
            let run = model.generated_run(&request, &g).unwrap();
            assert_rows_match(&model, &g, &run, &format!("{name} with {spec} off ({ablation:?})"));
        }
    }
}

#[test]
fn the_trained_model_translates_the_seed_sentence() {
    let model = load(&fixture("../../../www/models/headmap-tiny-ko-en"));
    let g = model.generate_text(&greedy("동물이 길을 건너지 않았다. 그것은 너무 피곤했다.", 40), |_| true).unwrap();
    println!("headmap-tiny-ko-en: {}", g.text);
    assert!(g.text.to_lowercase().contains("animal"), "{}", g.text);
    // it ended on its own end token, kept, and says so
    assert_eq!(g.ids.last(), Some(&3), "{:?}", g.generated.iter().map(|w| &w.token.token).collect::<Vec<_>>());
    assert_eq!(g.ended, Ended::EndToken);
    // Marian's last step is forced to its end token: three asked, three written, ended by the count
    let short = model.generate_text(&greedy("동물이 길을 건너지 않았다. 그것은 너무 피곤했다.", 3), |_| true).unwrap();
    assert_eq!((short.generated.len(), short.ids.last(), short.ended), (3, Some(&3), Ended::MaxNewTokens));
}

#[test]
fn the_induction_model_continues_a_repeat_and_stops_copying_without_its_heads() {
    let model = load(&fixture("../../../www/models/headmap-tiny-induction"));
    let request = greedy("고양이 공원 노래 꽃 강 가방 고양이 공원", 4);
    let g = model.generate_text(&request, |_| true).unwrap();
    let words: Vec<&str> = g.generated.iter().map(|w| w.token.token.as_str()).collect();
    assert_eq!(words, ["노래", "꽃", "강", "가방"]);
    let off = GenerateRequest { ablate: Some("0.3".into()), ..request };
    let g = model.generate_text(&off, |_| true).unwrap();
    let words: Vec<&str> = g.generated.iter().map(|w| w.token.token.as_str()).collect();
    assert_ne!(words, ["노래", "꽃", "강", "가방"], "the previous-token head off, the copy fails");
}

#[test]
fn a_seed_draws_the_same_tokens_on_any_number_of_threads() {
    let model = load(&fixture("gpt2"));
    let sampling = Sampling { temperature: 1.3, top_k: Some(40), top_p: Some(0.95), seed: 2026 };
    let request = GenerateRequest { sampling: Some(sampling), ..greedy(&prompt("gpt2"), 16) };
    let ids = |threads: usize| {
        let pool = headmap::par::pool(threads).unwrap();
        pool.install(|| model.generate_text(&request, |_| true).unwrap().ids)
    };
    let one = ids(1);
    for threads in [2, 3, 4] {
        assert_eq!(ids(threads), one, "{threads} threads");
    }
    // the ids tests/wasm_hf.rs draws in wasm with the same request
    let induction = load(&fixture("../../../www/models/headmap-tiny-induction"));
    let drawn = GenerateRequest {
        sampling: Some(Sampling { temperature: 2.5, top_k: Some(50), top_p: Some(0.95), seed: 11 }),
        ..greedy("고양이 공원 노래 꽃 강", 8)
    };
    let g = induction.generate_text(&drawn, |_| true).unwrap();
    assert_eq!(g.generated.iter().map(|w| w.token.id).collect::<Vec<_>>(), [78, 270, 223, 112, 185, 10, 85, 112]);
    let other = GenerateRequest { sampling: Some(Sampling { seed: 7, ..sampling }), ..request.clone() };
    let g = model.generate_text(&other, |_| true).unwrap();
    assert_ne!(g.ids, one, "another seed, another text");
}

#[test]
fn a_stop_keeps_what_was_written() {
    let model = load(&fixture("gpt2"));
    let mut seen = 0;
    let g = model
        .generate_text(&greedy(&prompt("gpt2"), 10), |_| {
            seen += 1;
            seen < 3
        })
        .unwrap();
    assert_eq!((g.generated.len(), g.ended), (3, Ended::Stopped));
}

#[test]
fn bad_settings_and_models_that_cannot_write_are_refused_by_name() {
    let model = load(&fixture("gpt2"));
    let text = prompt("gpt2");
    let with = |temperature: f32, top_p: Option<f32>| GenerateRequest {
        sampling: Some(Sampling { temperature, top_k: None, top_p, seed: 1 }),
        ..greedy(&text, 3)
    };
    for t in [0.0, -1.0, f32::NAN] {
        assert!(matches!(model.generate_text(&with(t, None), |_| true), Err(Error::BadTemperature { .. })), "{t}");
    }
    for p in [0.0, 1.5, -0.2] {
        assert!(matches!(model.generate_text(&with(1.0, Some(p)), |_| true), Err(Error::BadTopP { .. })), "{p}");
    }
    assert!(matches!(model.generate_text(&greedy("", 3), |_| true), Err(Error::EmptyText)));
    let long = "a ".repeat(5000);
    assert!(matches!(
        model.generate_text(&greedy(&long, 3), |_| true),
        Err(Error::TooLong { .. } | Error::TextTooLong { .. })
    ));
    // a masked LM has a head but writes no text; an encoder without a head has neither
    let roberta = load(&fixture("roberta"));
    assert!(matches!(roberta.generate_text(&greedy("a cat", 3), |_| true), Err(Error::CannotGenerate { .. })));
    let bert = load(&fixture("bert"));
    assert!(matches!(bert.generate_text(&greedy("a cat", 3), |_| true), Err(Error::NoOutputHead { .. })));
    let toy = Model::toy(headmap::ToyConfig::small(1)).unwrap();
    assert!(matches!(toy.generate_text(&greedy("the cat sat", 3), |_| true), Err(Error::CannotGenerate { .. })));
}

#[test]
fn generation_stops_at_the_models_positions() {
    // GPT-2's fixture reads a few dozen positions: asking for more writes up to the last
    let model = load(&fixture("gpt2"));
    let max = model.info().max_tokens;
    let asked = greedy(&prompt("gpt2"), max * 2);
    let g = model.generate_text(&asked, |_| true).unwrap();
    assert_eq!(g.ids.len(), max, "the fixture writes until its positions are full");
    assert_eq!(g.ended, Ended::Positions);
    // the whole text reads back as a run, and as text: the page's "open in every view" runs
    // it again (it refused a text one token past the last position)
    let run = model.generated_run(&asked, &g).unwrap();
    assert_eq!(run.places[0].row(0).unwrap().queries.len(), max);
    assert_eq!(model.tokenize(&g.text).unwrap().ids, g.ids, "the text tokenizes to what was written");
    // a prompt that fills every position leaves no room, and says so
    let full: Vec<u32> = g.ids.clone();
    let text = model.tokenizer().decode(&full).unwrap();
    let e = model.generate_text(&greedy(&text, 1), |_| true).unwrap_err();
    assert_eq!(e, Error::NoRoomToWrite { tokens: max, max });
}
