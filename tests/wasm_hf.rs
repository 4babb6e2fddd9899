//! Real models through the wasm API: a tiny BERT and a tiny Marian from their files, as the
//! explorer loads them; their errors, queries and keys, a file of attention, and our wasm
//! kernel. Their parity with transformers is `wasm_hf_parity.rs`. Run with `--features hf` (see
//! scripts/test).
#![cfg(all(target_arch = "wasm32", feature = "hf"))]

mod common;
mod wasm_hf_common;

use headmap::wasm::Model;
use js_sys::Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;
use wasm_hf_common::{bert, get, js, message};

fn floats(value: JsValue) -> Vec<f32> {
    value.dyn_into::<js_sys::Float32Array>().expect("a Float32Array").to_vec()
}

fn first_place(run: &headmap::wasm::Run) -> JsValue {
    let info: JsValue = run.info().unwrap().into();
    get(&info, "places").dyn_into::<Array>().unwrap().get(0)
}

#[wasm_bindgen_test]
fn bert_gives_padding_attention_for_a_batch() {
    let model = bert().unwrap();
    let info: JsValue = model.info().unwrap().into();
    assert_eq!(get(&info, "architecture").as_string().unwrap(), "bert");
    let places: Array = get(&info, "places").dyn_into().unwrap();
    assert_eq!(places.length(), 1);
    assert_eq!(get(&places.get(0), "place").as_string().unwrap(), "encoder_self");
    let run = model.run(js(r#"{"texts":["동물이 길을 건너지 않았다.","Minsu gave a book."]}"#)).unwrap();
    let meta = first_place(&run);
    assert_eq!(get(&meta, "heads").as_f64(), Some(4.0));
    let tokens: JsValue = run.tokens("encoder_self", 0).unwrap().into();
    let keys: Array = get(&tokens, "keys").dyn_into().unwrap();
    assert_eq!(get(&keys.get(0), "label").as_string().unwrap(), "[CLS]");
    assert_eq!(get(&keys.get(0), "kind").as_string().unwrap(), "special");
    let w = run.head("encoder_self", 1, 1, 0).unwrap().to_vec();
    let tk = get(&meta, "tk").as_f64().unwrap() as usize;
    let allowed = run.allowed("encoder_self", 1, 1).unwrap().to_vec();
    for (k, &a) in allowed.iter().enumerate() {
        if a == 0 {
            assert_eq!(w[k], 0.0, "a PAD key at flat index {k} of head 0");
        }
    }
    let row_sum: f32 = w[..tk].iter().sum();
    assert!((row_sum - 1.0).abs() < 1e-5);
    assert!(message(run.head("cross", 0, 0, 0)).contains("this model has no cross attention; it has encoder_self"));
}

#[wasm_bindgen_test]
fn marian_gives_all_three_places_from_spm_files() {
    let model = Model::from_files(
        include_bytes!("fixtures/hf/marian/config.json"),
        include_bytes!("fixtures/hf/marian/model.safetensors"),
        None,
        Some(include_bytes!("fixtures/hf/marian/source.spm").to_vec()),
        Some(include_bytes!("fixtures/hf/marian/vocab.json").to_vec()),
        None,
        None,
    )
    .unwrap();
    let run = model
        .run(js(r#"{"texts":["민수가 영희에게 책을 주었다."],"targets":["Minsu gave Younghee a book."]}"#))
        .unwrap();
    let info: JsValue = run.info().unwrap().into();
    let places: Array = get(&info, "places").dyn_into().unwrap();
    assert_eq!(places.length(), 3);
    for place in places.iter() {
        assert_eq!(get(&place, "layers").as_f64(), Some(2.0), "{:?}", get(&place, "place"));
    }
    let cross = places.get(2);
    assert_eq!(get(&cross, "place").as_string().unwrap(), "cross");
    assert_ne!(get(&cross, "tq").as_f64(), get(&cross, "tk").as_f64());
    assert!(!model.generate("민수가 영희에게 책을 주었다.", 10).unwrap().contains("</s>"));
    let trace: JsValue = run.trace("cross", 0, 1, 2).unwrap().into();
    assert_eq!(get(&trace, "dK").as_f64(), Some(8.0));
}

#[wasm_bindgen_test]
fn broken_files_are_js_errors_naming_the_file() {
    let truncated = &include_bytes!("fixtures/hf/bert/model.safetensors")[..1000];
    let e = message(Model::from_files(
        include_bytes!("fixtures/hf/bert/config.json"),
        truncated,
        None,
        None,
        None,
        None,
        None,
    ));
    assert!(e.starts_with("model.safetensors: not a valid safetensors file"), "{e}");
    let e = message(Model::from_files(
        b"{\"model_type\":\"t5\"}",
        include_bytes!("fixtures/hf/bert/model.safetensors"),
        Some(b"{}".to_vec()),
        None,
        None,
        None,
        None,
    ));
    assert!(e.starts_with("tokenizer.json: the tokenizer does not load"), "{e}");
    let e = message(bert().unwrap().run(js(&format!(r#"{{"texts":["{}"]}}"#, "the ".repeat(80)))));
    assert_eq!(e, "the text has 82 tokens, more than the maximum of 64");
}

#[wasm_bindgen_test]
fn queries_and_keys_cross_to_js_and_rebuild_the_weights() {
    use headmap::wasm::QkCorpus;
    let model = bert().unwrap();
    let run = model.run(js(r#"{"texts":["동물이 길을 건너지 않았다.","a book."]}"#)).unwrap();
    let meta = first_place(&run);
    let (tq, tk) = (get(&meta, "tq").as_f64().unwrap() as usize, get(&meta, "tk").as_f64().unwrap() as usize);
    let v = run.vectors("encoder_self", 1, 1, None).unwrap();
    let (heads, d) = (get(&v, "heads").as_f64().unwrap() as usize, get(&v, "dK").as_f64().unwrap() as usize);
    let divisor = get(&v, "divisor").as_f64().unwrap() as f32;
    let q = js_sys::Float32Array::from(get(&v, "queries")).to_vec();
    let k = js_sys::Float32Array::from(get(&v, "keys")).to_vec();
    assert_eq!((q.len(), k.len()), (heads * tq * d, heads * tk * d));
    assert!((divisor - (d as f32).sqrt()).abs() < 1e-6, "BERT divides by √d_k");
    // softmax of q·k / divisor over the keys the mask lets through is the run's weights
    let allowed = run.allowed("encoder_self", 1, 1).unwrap().to_vec();
    for h in 0..heads {
        let w = run.head("encoder_self", 1, 1, h).unwrap().to_vec();
        for i in 0..tq {
            let score =
                |j: usize| (0..d).map(|c| q[(h * tq + i) * d + c] * k[(h * tk + j) * d + c]).sum::<f32>() / divisor;
            let keys: Vec<usize> = (0..tk).filter(|&j| allowed[i * tk + j] == 1).collect();
            let top = keys.iter().map(|&j| score(j)).fold(f32::NEG_INFINITY, f32::max);
            let sum: f32 = keys.iter().map(|&j| (score(j) - top).exp()).sum();
            for &j in &keys {
                let want = (score(j) - top).exp() / sum;
                assert!((w[i * tk + j] - want).abs() < 1e-5, "head {h} ({i}, {j}): {} vs {want}", w[i * tk + j]);
            }
        }
    }
    // one head alone is that head's slice; a head past the last is refused by name
    let one = run.vectors("encoder_self", 1, 1, Some(heads - 1)).unwrap();
    assert_eq!(get(&one, "heads").as_f64(), Some(1.0));
    let q1 = js_sys::Float32Array::from(get(&one, "queries")).to_vec();
    assert_eq!(q1[..], q[(heads - 1) * tq * d..]);
    assert!(message(run.vectors("encoder_self", 1, 1, Some(heads))).contains("head"));
    // a corpus of both rows leaves PAD out and pictures every head
    let mut corpus = QkCorpus::new();
    assert!(message(corpus.picture(0)).contains("no sentence"));
    corpus.add(&run, "encoder_self", 0, 1).unwrap();
    corpus.add(&run, "encoder_self", 1, 1).unwrap();
    let valid = |row: usize| {
        let t: JsValue = run.tokens("encoder_self", row).unwrap().into();
        get(&t, "queryValid").dyn_into::<Array>().unwrap().iter().filter(|b| b.as_bool() == Some(true)).count()
    };
    let picture = corpus.picture(heads - 1).unwrap();
    assert_eq!(get(&picture, "queries").as_f64().unwrap() as usize, valid(0) + valid(1));
    let coords = js_sys::Float32Array::from(get(&picture, "coords")).to_vec();
    assert_eq!(coords.len(), 4 * (valid(0) + valid(1)));
    assert!(coords.iter().all(|x| x.is_finite()));
    assert!(message(corpus.picture(heads)).contains("head"));
}

#[wasm_bindgen_test]
fn a_file_of_attention_opens_as_a_run_with_no_model() {
    use headmap::wasm::Run;
    let model = bert().unwrap();
    let run = model.run(js(r#"{"texts":["동물이 길을 건너지 않았다.","Minsu gave a book."]}"#)).unwrap();
    let text = js_sys::JSON::stringify(&run.json().unwrap()).unwrap().as_string().unwrap();
    let opened = Run::from_file("run.json", text.as_bytes()).unwrap();
    assert_eq!(
        opened.head("encoder_self", 1, 1, 3).unwrap().to_vec(),
        run.head("encoder_self", 1, 1, 3).unwrap().to_vec()
    );
    assert_eq!(
        opened.allowed("encoder_self", 1, 1).unwrap().to_vec(),
        run.allowed("encoder_self", 1, 1).unwrap().to_vec()
    );
    let info: JsValue = opened.info().unwrap().into();
    assert_eq!(get(&info, "modelType").as_string().unwrap(), "bert");
    assert_eq!(get(&info, "fromFile").as_bool(), Some(true));
    assert!(opened.model().is_none());
    let tokens: JsValue = opened.tokens("encoder_self", 0).unwrap().into();
    assert_eq!(get(&get(&tokens, "keys").dyn_into::<Array>().unwrap().get(0), "kind").as_string().unwrap(), "special");
    // what needs the model says so; what needs only weights works
    assert!(message(opened.trace("encoder_self", 0, 0, 0)).contains("needs the model"));
    assert!(opened.scores("encoder_self", 0, JsValue::UNDEFINED).is_ok());
    let broken = Run::from_file("broken.safetensors", &[1, 2, 3]);
    assert!(message(broken).starts_with("broken.safetensors: not a file of attention weights"));
}

/// headmap's own wasm kernel (src/gemm/wasm.rs): ndarray's product within float rounding for shapes
/// with rows and columns past whole tiles and k past one block, and each value the same bits
/// whichever rows or columns it is computed with (the threaded build splits both).
#[wasm_bindgen_test]
fn the_wasm_kernel_equals_ndarrays_product_and_splits_by_rows_exactly() {
    use ndarray::{s, Array2};
    let mut seed = 1u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    // empty sides, k a whole number of blocks (256) and past them, columns past the last strip of 8
    let shapes = [
        (1, 1, 1),
        (5, 3, 7),
        (13, 300, 19),
        (16, 384, 384),
        (7, 600, 24),
        (3, 2, 8),
        (0, 5, 9),
        (4, 0, 9),
        (4, 5, 0),
        (9, 256, 8),
        (4, 512, 16),
        (6, 32, 3),
        // panels of many strips (`PANEL_FLOATS`): past one panel, a last strip of 4 columns, and
        // a last block of k whose panel is wider
        (5, 300, 300),
        (9, 600, 1100),
        // from 64 rows on, panels of 4 strips, the last one partial
        (70, 300, 300),
        // one row, as a decoder's step and the lens of one position multiply: w read in place
        (1, 576, 1536),
        (1, 7, 37),
        (1, 300, 19),
    ];
    for (m, k, n) in shapes {
        let x = Array2::from_shape_fn((m, k), |_| next());
        let w = Array2::from_shape_fn((k, n), |_| next());
        let mut y = Array2::zeros((m, n));
        headmap::gemm::product_into(x.view(), w.view(), &mut y.view_mut());
        let want = x.dot(&w);
        for (g, e) in y.iter().zip(want.iter()) {
            assert!((g - e).abs() <= 1e-5 * (k as f32).sqrt() + 1e-6, "{m}x{k}x{n}: {g} vs {e}");
        }
        for split in 1..m {
            let mut part = Array2::zeros((m - split, n));
            headmap::gemm::product_into(x.slice(s![split.., ..]), w.view(), &mut part.view_mut());
            assert!(part == y.slice(s![split.., ..]), "{m}x{k}x{n}: rows from {split} differ");
        }
        // columns from a multiple of 32 on, as helpers split a product in the threaded page
        // (row-major w, and a transposed view of it), each piece up to the next such start
        let wt = w.t().to_owned(); // (n, k)
        for c0 in (32..n).step_by(96) {
            let c1 = (c0 + 64).min(n);
            for (w, how) in [(w.view(), "row-major"), (wt.t(), "transposed")] {
                let mut part = Array2::zeros((m, c1 - c0));
                headmap::gemm::product_into(x.view(), w.slice(s![.., c0..c1]), &mut part.view_mut());
                assert!(part == y.slice(s![.., c0..c1]), "{m}x{k}x{n}: columns {c0}..{c1} of a {how} w differ");
            }
        }
        // any layout: x and w transposed in memory (QKᵀ's Kᵀ, GPT-NeoX's weights) and y a
        // block's columns (a head's share of the output) give the same bits
        let xt = x.t().to_owned(); // (k, m)
        let mut wide = Array2::from_elem((m, n + 5), 7.0f32);
        headmap::gemm::product_into(xt.t(), wt.t(), &mut wide.slice_mut(s![.., 2..n + 2]));
        assert!(wide.slice(s![.., 2..n + 2]) == y, "{m}x{k}x{n}: transposed inputs or a column block differ");
        assert!(
            wide.slice(s![.., ..2]).iter().chain(wide.slice(s![.., n + 2..])).all(|&v| v == 7.0),
            "{m}x{k}x{n}: wrote outside y"
        );
    }
}

/// The same seed draws the same tokens in wasm as natively (tests/generate.rs draws these ids),
/// and greedy decoding continues a repeat, one token per step, its rows over every key so far.
#[wasm_bindgen_test]
fn generation_draws_in_wasm_what_it_draws_natively() {
    let model = Model::from_files(
        include_bytes!("../www/models/headmap-tiny-induction/config.json"),
        include_bytes!("../www/models/headmap-tiny-induction/model.safetensors"),
        Some(include_bytes!("../www/models/headmap-tiny-induction/tokenizer.json").to_vec()),
        None,
        None,
        None,
        None,
    )
    .unwrap();
    let request =
        r#"{"prompt":"고양이 공원 노래 꽃 강","maxNewTokens":8,"temperature":2.5,"topK":50,"topP":0.95,"seed":11}"#;
    let mut writer = model.writer(js(request)).unwrap();
    let mut ids = Vec::new();
    while !writer.done() {
        let token: JsValue = writer.step().unwrap().into();
        if token.is_undefined() {
            break;
        }
        ids.push(get(&token, "id").as_f64().unwrap() as u32);
    }
    assert_eq!(ids, [78, 270, 223, 112, 185, 10, 85, 112]);
    let mut greedy = model.writer(js(r#"{"prompt":"고양이 공원 노래 고양이","maxNewTokens":2}"#)).unwrap();
    let first: JsValue = greedy.step().unwrap().into();
    assert_eq!(get(&first, "token").as_string().unwrap(), "공원");
    let keys = get(&first, "keys").as_f64().unwrap() as usize;
    assert_eq!(keys, 5, "<bos> and the prompt's four words");
    let rows = greedy.take(0).unwrap();
    let length = |place: &str| get(&rows, place).unchecked_into::<js_sys::Float32Array>().length() as usize;
    assert_eq!(length("decoder"), 2 * 4 * keys, "[layers, heads, keys]");
    assert_eq!(length("cross"), 0, "a decoder-only model reads no source");
    let again = greedy.take(0).unwrap();
    assert_eq!(get(&again, "decoder").unchecked_into::<js_sys::Float32Array>().length(), 0, "handed over, not kept");
    assert!(message(greedy.take(5).map(|_| ())).contains("token"), "a token not written is refused");
    assert!(message(model.writer(js(r#"{"prompt":"고양이","temperature":0}"#)).map(|_| ())).contains("temperature 0"));
}

/// The trainer in the browser takes the command line's steps (the losses of
/// tests/fixtures/train/curve-seed0.json, written by `headmap train`), scores its heads, and
/// becomes a model every view opens; bad settings are refused by name.
#[wasm_bindgen_test]
fn the_trainer_takes_the_command_lines_steps_and_becomes_a_model() {
    use headmap::wasm::Trainer;
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/train/curve-seed0.json")).expect("the fixture parses");
    let mut trainer = Trainer::new(js(r#"{"seed":0,"batchSize":4}"#)).unwrap();
    let reports: Array = JsValue::from(trainer.steps(20).unwrap()).dyn_into().unwrap();
    assert_eq!((reports.length(), trainer.step()), (20, 20));
    for (i, expected) in fixture["losses"].as_array().unwrap().iter().enumerate() {
        let loss = get(&reports.get(i as u32), "loss").as_f64().unwrap();
        let expected = expected.as_f64().unwrap();
        // the products sum in another order than natively: the same steps, not the same bits
        assert!((loss - expected).abs() < 1e-4 * expected, "step {}: {loss} against {expected}", i + 1);
    }
    let scores: JsValue = trainer.scores().unwrap().into();
    let induction: Array = get(&scores, "induction").dyn_into().unwrap();
    assert_eq!(induction.length(), 2, "two layers");
    let probe = get(&scores, "probe").as_string().unwrap();
    let model = trainer.model().unwrap();
    let run = model.run(js(&format!(r#"{{"texts":["{probe}"]}}"#))).unwrap();
    assert_eq!(get(&first_place(&run), "heads").as_f64(), Some(4.0));
    let files = trainer.files().unwrap();
    for name in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(get(&files, name).is_instance_of::<js_sys::Uint8Array>(), "{name}");
    }
    assert!(message(Trainer::new(js(r#"{"learningRate":-1}"#))).contains("learning rate"));
    assert!(message(Trainer::new(js(r#"{"heads":5}"#))).contains("heads"));
}

/// The raw attention function, on matrices given directly: in this package only, as no page
/// calls it (the toy-only one leaves it out).
#[wasm_bindgen_test]
fn raw_attention_matches_pytorch_across_the_boundary() {
    use common::{assert_close, flat, golden};
    use headmap::wasm::attention;
    use js_sys::{Object, Reflect};
    let fixture = golden();
    for case in fixture["sdpa"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let to_f32 = |key: &str| flat(&case[key]).into_iter().map(|x| x as f32).collect::<Vec<f32>>();
        let d_k = case["q"][0].as_array().unwrap().len();
        let d_v = case["v"][0].as_array().unwrap().len();
        let options = Object::new();
        let kind = case["mask"].as_str().unwrap();
        Reflect::set(&options, &"causal".into(), &kind.starts_with("causal").into()).unwrap();
        Reflect::set(&options, &"scale".into(), &case["scale"].as_bool().unwrap().into()).unwrap();
        if let Some(valid) = case["key_valid"].as_array() {
            let arr: Array = valid.iter().map(|b| JsValue::from(b.as_bool().unwrap())).collect();
            Reflect::set(&options, &"keyValid".into(), &arr).unwrap();
        }
        let got: JsValue =
            attention(&to_f32("q"), &to_f32("k"), &to_f32("v"), d_k, d_v, options.unchecked_into()).unwrap().into();
        assert_close(&floats(get(&get(&got, "weights"), "data")), &flat(&case["weights"]), 1e-5, name);
        assert_close(&floats(get(&get(&got, "output"), "data")), &flat(&case["output"]), 1e-5, name);
    }
    let none = || JsValue::UNDEFINED.unchecked_into();
    assert!(message(attention(&[1.0, 2.0, 3.0], &[1.0, 2.0], &[1.0], 2, 1, none())).contains("do not fill rows of 2"));
    assert!(message(attention(&[f32::NAN, 0.0], &[1.0, 2.0], &[1.0], 2, 1, none())).contains("non-finite"));
    assert!(message(attention(&[1.0, 0.0], &[1.0, 2.0, 3.0, 4.0], &[1.0], 2, 1, none())).contains("`K` has shape"));
}
