//! Real-model parity: attention weights (every layer, every head) and hidden states equal to
//! Hugging Face transformers (eager attention, output_attentions=True) within 1e-4.
//! References: tests/fixtures/hf/*/reference.{json,safetensors}, written by
//! scripts/dev/make_hf_fixtures.py. Needs `--features hf`.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::{Path, PathBuf};

use common::{load, read};

use headmap::run::{Batch, Row, Settings, Store};
use headmap::tokenize::Token;
use headmap::{Model, Place, Request};
use ndarray::{ArrayViewD, Axis};
use safetensors::SafeTensors;
use serde_json::Value;

const TOL: f32 = 1e-4;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name)
}

fn rows(ids: &Value, mask: &Value) -> Vec<Row> {
    let ids = ids.as_array().unwrap();
    let mask = mask.as_array().unwrap();
    ids.iter()
        .zip(mask)
        .map(|(ids, mask)| {
            let ids: Vec<u32> = ids.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
            Row {
                tokens: ids.iter().map(|id| Token::word(&id.to_string())).collect(),
                valid: mask.as_array().unwrap().iter().map(|v| v.as_u64() == Some(1)).collect(),
                ids,
            }
        })
        .collect()
}

fn tensor(refs: &SafeTensors, name: &str) -> (Vec<f32>, Vec<usize>) {
    let t = refs.tensor(name).unwrap_or_else(|_| panic!("reference tensor {name}"));
    let data = t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    (data, t.shape().to_vec())
}

fn assert_close(got: &[f32], want: ArrayViewD<f32>, label: &str) -> f32 {
    assert_eq!(got.len(), want.len(), "{label}: sizes differ");
    let mut worst = 0f32;
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        let d = (g - w).abs();
        assert!(d <= TOL, "{label}[{i}]: got {g}, transformers {w} (|Δ| {d} > {TOL})");
        worst = worst.max(d);
    }
    worst
}

/// Compares every place, layer, head and batch row of `name`'s reference cases, with the
/// model in `dir`.
fn check_model(name: &str, model: &Model) -> f32 {
    let dir = fixture(name);
    let reference: Value = serde_json::from_slice(&read(&dir.join("reference.json"))).unwrap();
    let bytes = read(&dir.join("reference.safetensors"));
    let refs = SafeTensors::deserialize(&bytes).unwrap();
    let (mut worst, mut worst_hidden) = (0f32, 0f32);
    for (n, case) in reference["cases"].as_array().unwrap().iter().enumerate() {
        let sources = rows(&case["input_ids"], &case["attention_mask"]);
        let targets = if case.get("decoder_input_ids").is_some() {
            rows(&case["decoder_input_ids"], &case["decoder_attention_mask"])
        } else {
            Vec::new()
        };
        let batch = Batch { sources, targets };
        let from_ids = model.run_batch(&batch, &Settings::trained()).unwrap_or_else(|e| panic!("{name} case {n}: {e}"));
        // the same, keeping only layer inputs: every weight recomputed when asked
        let on_demand = Settings { store: Store::OnDemand, ..Settings::trained() };
        let recomputed = model.run_batch(&batch, &on_demand).unwrap_or_else(|e| panic!("{name} case {n}: {e}"));
        // the same case from its text: tokenizer, padding and the decoder's shifted labels
        let strings = |key: &str| {
            case.get(key).map_or(Vec::new(), |v| v.as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect())
        };
        let texts = if case.get("texts").is_some() { strings("texts") } else { strings("sources") };
        let owned = |v: Vec<&str>| v.into_iter().map(String::from).collect();
        let request = Request { texts: owned(texts), targets: owned(strings("targets")), ..Request::default() };
        let from_text = model.run(&request).unwrap_or_else(|e| panic!("{name} case {n} from text: {e}"));
        for (run, how) in [(&from_ids, "ids"), (&recomputed, "ids, on demand"), (&from_text, "text")] {
            let encoder_decoder = model.info().encoder_decoder;
            let places: &[(Place, &str)] = if encoder_decoder {
                &[
                    (Place::EncoderSelf, "encoder_attentions"),
                    (Place::DecoderSelf, "decoder_attentions"),
                    (Place::Cross, "cross_attentions"),
                ]
            } else {
                &[(model.info().places[0].place, "attentions")]
            };
            for &(kind, key) in places {
                let place = run.place(kind).unwrap();
                for layer in 0..place.layers() {
                    let (data, shape) = tensor(&refs, &format!("case{n}.{key}.{layer}"));
                    let want = ndarray::ArrayD::from_shape_vec(shape, data).unwrap(); // (B, H, Tq, Tk)
                    for b in 0..place.batch() {
                        let got = place.rows[b]
                            .weights()
                            .unwrap()
                            .index_axis(Axis(0), layer)
                            .as_standard_layout()
                            .into_owned();
                        let label = format!("{name} case {n} from {how}: {key} layer {layer} row {b}");
                        worst = worst.max(assert_close(got.as_slice().unwrap(), want.index_axis(Axis(0), b), &label));
                    }
                }
            }
            // an encoder–decoder's encoder and decoder outputs, or the one stack's output
            let stack = |h: &headmap::run::Hidden| h.encoder.clone().or_else(|| h.decoder.clone());
            let hidden: Vec<(&str, Vec<Option<ndarray::Array2<f32>>>)> = if encoder_decoder {
                vec![
                    ("encoder_last_hidden_state", run.hidden.iter().map(|h| h.encoder.clone()).collect()),
                    ("last_hidden_state", run.hidden.iter().map(|h| h.decoder.clone()).collect()),
                ]
            } else {
                vec![("last_hidden_state", run.hidden.iter().map(stack).collect())]
            };
            for (hidden_key, rows) in hidden {
                let (data, shape) = tensor(&refs, &format!("case{n}.{hidden_key}"));
                let want = ndarray::ArrayD::from_shape_vec(shape, data).unwrap();
                for (b, h) in rows.iter().enumerate() {
                    let h = h.as_ref().unwrap_or_else(|| panic!("{name}: no {hidden_key}"));
                    worst_hidden = worst_hidden.max(assert_close(
                        h.as_slice().unwrap(),
                        want.index_axis(Axis(0), b),
                        &format!("{name} case {n} {hidden_key} row {b}"),
                    ));
                }
            }
        }
    }
    println!("{name}: largest difference from transformers: weights {worst:e}, last hidden states {worst_hidden:e}");
    worst
}

/// The tokenizer gives the ids transformers' tokenizer gave.
fn check_tokens(name: &str, model: &Model) {
    let dir = fixture(name);
    let reference: Value = serde_json::from_slice(&read(&dir.join("reference.json"))).unwrap();
    for case in reference["cases"].as_array().unwrap() {
        let texts = case.get("texts").or_else(|| case.get("sources")).unwrap().as_array().unwrap();
        for (b, text) in texts.iter().enumerate() {
            let want: Vec<u32> = case["input_ids"][b]
                .as_array()
                .unwrap()
                .iter()
                .zip(case["attention_mask"][b].as_array().unwrap())
                .filter(|(_, m)| m.as_u64() == Some(1))
                .map(|(id, _)| id.as_u64().unwrap() as u32)
                .collect();
            let got = model.tokenize(text.as_str().unwrap()).unwrap();
            assert_eq!(got.ids, want, "{name}: ids of {text}");
            assert_eq!(got.tokens.len(), got.ids.len());
        }
    }
}

/// A family's fixture: every place, layer and head from ids, on demand and from text, and the
/// tokenizer's ids.
fn check_family(name: &str) -> Model {
    let model = load(&fixture(name));
    check_model(name, &model);
    check_tokens(name, &model);
    model
}

#[test]
fn tiny_roberta_with_padding_offset_positions_matches_transformers() {
    let model = check_family("roberta");
    assert_eq!(model.info().architecture, "roberta");
    assert_eq!(model.info().max_tokens, 66 - 2, "positions start after the padding id");
}

#[test]
fn tiny_xlm_roberta_in_f16_matches_transformers() {
    assert_eq!(check_family("xlm-roberta").info().architecture, "xlm-roberta");
}

#[test]
fn tiny_distilbert_matches_transformers() {
    check_family("distilbert");
}

#[test]
fn tiny_electra_with_an_embedding_projection_in_bf16_matches_transformers() {
    check_family("electra");
}

#[test]
fn tiny_gpt_neox_parallel_and_sequential_match_transformers() {
    for name in ["gpt_neox", "gpt_neox-sequential"] {
        let model = check_family(name);
        let t = model.run(&Request { texts: vec!["a b c".into()], ..Request::default() }).unwrap();
        let trace = model.trace(&t, Place::DecoderSelf, 0, 1, 0).unwrap();
        let (q, rotated) = (&trace.q, trace.q_rotated.as_ref().expect("rotary: Q turned"));
        let turned = if name == "gpt_neox" { 4 } else { 8 }; // a quarter, a half of d_k 16
        assert_eq!(q.column(turned), rotated.column(turned), "{name}: dimensions past the rotary part pass through");
        assert_ne!(q.row(1), rotated.row(1), "{name}: position 1 turns");
    }
}

#[test]
fn tiny_gpt_neox_with_an_odd_rotary_dimension_matches_transformers() {
    // head_size 6, partial_rotary_factor 0.5: transformers' dim int(6 · 0.5) = 3 gives ⌈3/2⌉ = 2
    // frequencies over 3, and cat((freqs, freqs)) turns 2·2 = 4 dimensions of each head
    let model = check_family("gpt_neox-odd-rotary");
    let t = model.run(&Request { texts: vec!["a b c".into()], ..Request::default() }).unwrap();
    let trace = model.trace(&t, Place::DecoderSelf, 0, 0, 1).unwrap();
    let (q, rotated) = (&trace.q, trace.q_rotated.as_ref().expect("rotary: Q turned"));
    assert_ne!(q.column(3), rotated.column(3), "the fourth dimension turns with the second");
    assert_eq!(q.column(4), rotated.column(4), "the fifth and sixth pass through");
}

#[test]
fn tiny_gpt_neo_with_a_local_layer_matches_transformers() {
    let model = check_family("gpt_neo");
    let info = &model.info().places[0];
    assert_eq!(info.windows, [None, Some(4)], "global then local, window 4");
    let run = model.run(&Request { texts: vec!["a b c d e f g h".into()], ..Request::default() }).unwrap();
    let row = &run.places[0].rows[0];
    let last = row.size().0 - 1;
    assert!(row.mask(0).unwrap().allows(last, 0), "a global layer sees the first token");
    assert!(!row.mask(1).unwrap().allows(last, last - 4) && row.mask(1).unwrap().allows(last, last - 3));
    assert_eq!(row.head(1, 0).unwrap()[[last, 0]], 0.0);
    let trace = model.trace(&run, Place::DecoderSelf, 0, 1, 0).unwrap();
    assert_eq!((trace.steps.scale, &trace.steps.scores), (1.0, &trace.steps.scaled), "GPT-Neo does not scale");
}

#[test]
fn tiny_llama_qwen2_and_mistral_match_transformers() {
    for name in ["llama", "llama3", "qwen2", "mistral"] {
        check_family(name);
    }
    let mistral = load(&fixture("mistral"));
    let place = &mistral.info().places[0];
    assert_eq!((place.heads, place.kv_heads, place.d_k, place.windows[0]), (4, 1, 16, Some(5)));
    let qwen2 = load(&fixture("qwen2"));
    assert_eq!(qwen2.info().places[0].windows, [None, None], "use_sliding_window false: no window");
    let llama = load(&fixture("llama"));
    let run = llama.run(&Request { texts: vec!["a b".into()], ..Request::default() }).unwrap();
    let heads: Vec<usize> = (0..4).map(|h| llama.trace(&run, Place::DecoderSelf, 0, 0, h).unwrap().kv_head).collect();
    assert_eq!(heads, [0, 0, 1, 1], "grouped-query: two query heads per key/value head");
}

#[test]
fn a_sharded_checkpoint_equals_the_single_file() {
    let sharded = check_family("llama-sharded");
    let single = load(&fixture("llama"));
    let request = Request { texts: vec!["동물이 길을 건너지 않았다.".into()], ..Request::default() };
    let (a, b) = (sharded.run(&request).unwrap(), single.run(&request).unwrap());
    assert_eq!(a.places[0].rows[0].weights().unwrap(), b.places[0].rows[0].weights().unwrap());
}

#[test]
fn tiny_t5_and_t5_v1_1_match_transformers_in_all_three_places() {
    for name in ["t5", "t5-v1_1"] {
        let model = check_family(name);
        let run =
            model.run(&Request { texts: vec!["a b".into()], targets: vec!["c".into()], ..Request::default() }).unwrap();
        let trace = model.trace(&run, Place::EncoderSelf, 0, 1, 2).unwrap();
        let bias = trace.steps.position_bias.as_ref().expect("the relative position bias is its own step");
        assert_eq!(trace.steps.scale, 1.0, "{name}: no ÷√d_k");
        assert_eq!(trace.steps.biased.as_ref().unwrap(), &(&trace.steps.scaled + bias));
        let cross = model.trace(&run, Place::Cross, 0, 0, 0).unwrap();
        assert!(cross.steps.position_bias.is_none(), "{name}: cross-attention has no position bias");
    }
}

#[test]
fn gpt2_scaled_by_inverse_layer_index_matches_transformers() {
    let model = check_family("gpt2-inverse-layer");
    let run = model.run(&Request { texts: vec!["a b".into()], ..Request::default() }).unwrap();
    let d_k = 8f32; // 32 / 4
    for layer in 0..3 {
        let t = model.trace(&run, Place::DecoderSelf, 0, layer, 0).unwrap();
        assert!((t.steps.scale - d_k.sqrt() * (layer + 1) as f32).abs() < 1e-6, "layer {layer}: {}", t.steps.scale);
    }
}

#[test]
fn tiny_bert_matches_transformers() {
    let model = load(&fixture("bert"));
    check_model("bert", &model);
    check_tokens("bert", &model);
}

#[test]
fn tiny_gpt2_in_f16_matches_transformers() {
    let model = load(&fixture("gpt2"));
    check_model("gpt2", &model);
    check_tokens("gpt2", &model);
}

#[test]
fn tiny_bart_in_bf16_matches_transformers() {
    let model = load(&fixture("bart"));
    check_model("bart", &model);
    check_tokens("bart", &model);
}

#[test]
fn tiny_marian_from_spm_matches_transformers() {
    let model = load(&fixture("marian"));
    check_model("marian", &model);
    check_tokens("marian", &model);
}

#[test]
fn the_tiny_model_trained_here_matches_transformers() {
    // its weights live with the page; the references with the other fixtures
    let model = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("www/models/headmap-tiny-ko-en"));
    check_model("tiny-ko-en", &model);
    check_tokens("tiny-ko-en", &model);
}

#[test]
fn minilm_matches_transformers() {
    // the real weights, fetched by scripts/setup; the references are committed
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    assert!(dir.join("model.safetensors").exists(), "models/all-MiniLM-L6-v2 is missing: run scripts/setup");
    let model = load(&dir);
    check_model("minilm", &model);
    check_tokens("minilm", &model);
}

/// Greedy decoding gives the ids transformers' generate(num_beams=1, do_sample=False) gave.
fn check_greedy(name: &str) {
    let dir = fixture(name);
    let model = load(&dir);
    let reference: Value = serde_json::from_slice(&read(&dir.join("reference.json"))).unwrap();
    for (case, texts) in
        reference["greedy"].as_array().unwrap().iter().zip(reference["cases"][0]["sources"].as_array().unwrap())
    {
        let want: Vec<u32> =
            case["output_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        let max_new = case["max_new_tokens"].as_u64().unwrap() as usize;
        let out = model.generate(texts.as_str().unwrap(), max_new).unwrap();
        assert_eq!(out.ids, want, "{name}: greedy ids");
        assert!(!out.text.contains("</s>"), "special tokens are left out of {:?}", out.text);
    }
}

#[test]
fn greedy_decoding_matches_generate() {
    check_greedy("marian");
    check_greedy("bart");
    // T5: tied (output scaled by d_model^-½, shared head) and untied (its own lm_head); ids from
    // transformers 5.24 generate(num_beams=1, do_sample=False, max_new_tokens=8, use_cache=False)
    for (name, want) in [("t5", [0, 47, 47, 47, 47, 47, 47, 47, 47]), ("t5-v1_1", [0, 47, 47, 47, 47, 70, 13, 12, 47])]
    {
        let out = load(&fixture(name)).generate("민수가 영희에게 책을 주었다.", 8).unwrap();
        assert_eq!(out.ids, want, "{name}: greedy ids");
    }
    // a decoder-only model continues its text; it writes no target of its own for the page
    let gpt2 = load(&fixture("gpt2"));
    let prompt = gpt2.tokenize("a").unwrap().ids.len();
    assert_eq!(gpt2.generate("a", 3).unwrap().ids.len(), prompt + 3);
    assert!(!gpt2.info().can_generate);
}
