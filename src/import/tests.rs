//! Reading attention files back: every form round-trips a run exactly (f32) or within f16's
//! rounding, and every kind of bad file is refused by name.

use super::*;
use crate::export::{export, safetensors, Precision};
use crate::models::toy::ToyConfig;
use crate::models::Model;
use crate::run::Request;
use crate::tokenize::TokenKind;
use ndarray::Array4;
use safetensors::Dtype;

fn toy_run() -> Run {
    let model = Model::toy(ToyConfig::small(1)).unwrap();
    let request = Request { texts: vec!["a b c d e".into(), "d e".into()], ..Request::default() };
    model.run(&request).unwrap()
}

fn problem(result: Result<Imported>) -> FileProblem {
    match result {
        Err(Error::File { problem, .. }) => problem,
        Err(other) => panic!("not a file problem: {other}"),
        Ok(_) => panic!("the file was accepted"),
    }
}

fn same_weights(a: &Run, b: &Run, tolerance: f32) {
    assert_eq!(a.places.len(), b.places.len());
    for (p, q) in a.places.iter().zip(&b.places) {
        assert_eq!((p.place, p.mask, p.batch()), (q.place, q.mask, q.batch()));
        for (r, s) in p.rows.iter().zip(&q.rows) {
            let (x, y) = (r.weights().unwrap(), s.weights().unwrap());
            assert_eq!(x.shape(), y.shape());
            let worst = x.iter().zip(y.iter()).map(|(u, v)| (u - v).abs()).fold(0.0, f32::max);
            assert!(worst <= tolerance, "{:?} differs by {worst}", p.place);
            assert_eq!(r.query_valid, s.query_valid);
            assert_eq!(
                r.keys.iter().map(|t| (&t.label, t.kind)).collect::<Vec<_>>(),
                s.keys.iter().map(|t| (&t.label, t.kind)).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn json_and_safetensors_read_back_the_run_they_were_written_from() {
    let run = toy_run();
    let json = serde_json::to_vec(&export("toy", &run)).unwrap();
    let back = read("run.json", &json).unwrap();
    assert_eq!(back.model_type, "toy");
    same_weights(&run, &back.run, 0.0);
    let f32s = safetensors("toy", &run, Precision::F32).unwrap();
    same_weights(&run, &read("run.safetensors", &f32s).unwrap().run, 0.0);
    let f16s = safetensors("toy", &run, Precision::F16).unwrap();
    assert!(f16s.len() < f32s.len());
    same_weights(&run, &read("run.safetensors", &f16s).unwrap().run, 1e-3);
}

/// A one-place JSON document of `weights` (L, H, T, T) over `tokens`, with `mask`.
fn document(tokens: &[&str], mask: &str, weights: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "model_type": "test",
        "rows": [{ "attention": { "encoder_self": { "mask": mask, "queries": tokens, "keys": tokens, "weights": weights } } }]
    }))
    .unwrap()
}

#[test]
fn a_hand_written_document_guesses_token_kinds_and_builds_the_mask() {
    let w = serde_json::json!([[[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]]]);
    let file = document(&["[CLS]", "play", "##ing"], "causal", w);
    let run = read("a.json", &file).unwrap().run;
    let row = &run.places[0].rows[0];
    let kinds: Vec<_> = row.keys.iter().map(|t| t.kind).collect();
    assert_eq!(kinds, [TokenKind::Special, TokenKind::Word, TokenKind::Continuation]);
    assert!(!row.mask(0).unwrap().allows(0, 1), "causal: the first query sees only itself");
    assert_eq!(row.maxima().unwrap()[[0, 0]], 1.0);
    assert!(matches!(row.trace(0, 0), Err(Error::NeedsModel)), "nothing to trace without a model");
}

#[test]
fn a_pad_query_may_have_no_weight() {
    let doc = serde_json::json!({ "rows": [{ "attention": { "encoder_self": {
        "mask": "padding", "queries": ["a", "b", "[PAD]"], "keys": ["a", "b", "[PAD]"],
        "query_valid": [true, true, false], "key_valid": [true, true, false],
        "weights": [[[[0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.0, 0.0, 0.0]]]] } } }] });
    assert!(read("pad.json", &serde_json::to_vec(&doc).unwrap()).is_ok());
    let mut real = doc.clone();
    real["rows"][0]["attention"]["encoder_self"]["query_valid"] = serde_json::json!([true, true, true]);
    assert!(matches!(
        problem(read("pad.json", &serde_json::to_vec(&real).unwrap())),
        FileProblem::RowSum { query: 2, .. }
    ));
}

#[test]
fn bad_files_are_refused_by_name() {
    let tokens = ["a", "b"];
    let good = serde_json::json!([[[[0.5, 0.5], [0.25, 0.75]]]]);
    assert!(read("ok.json", &document(&tokens, "padding", good)).is_ok());
    type Case = (&'static str, Vec<u8>, fn(&FileProblem) -> bool);
    let cases: Vec<Case> = vec![
        ("row sum", document(&tokens, "padding", serde_json::json!([[[[0.5, 0.4], [0.25, 0.75]]]])), |p| {
            matches!(p, FileProblem::RowSum { query: 0, .. })
        }),
        ("NaN (null)", document(&tokens, "padding", serde_json::json!([[[[0.5, null], [0.25, 0.75]]]])), |p| {
            matches!(p, FileProblem::NonFiniteWeight { key: 1, .. })
        }),
        ("negative", document(&tokens, "padding", serde_json::json!([[[[1.5, -0.5], [0.25, 0.75]]]])), |p| {
            matches!(p, FileProblem::WeightOutOfRange { .. })
        }),
        ("masked", document(&tokens, "causal", serde_json::json!([[[[0.5, 0.5], [0.25, 0.75]]]])), |p| {
            matches!(p, FileProblem::MaskedWeight { query: 0, key: 1, .. })
        }),
        ("few keys", document(&tokens, "padding", serde_json::json!([[[[1.0], [1.0]]]])), |p| {
            matches!(p, FileProblem::TokensMismatch { tokens: 2, size: 1, .. })
        }),
        ("few queries", document(&tokens, "padding", serde_json::json!([[[[0.5, 0.5]]]])), |p| {
            matches!(p, FileProblem::TokensMismatch { size: 1, .. })
        }),
        ("ragged heads", document(&tokens, "padding", serde_json::json!([[[[1.0, 0.0], [1.0, 0.0]]], []])), |p| {
            matches!(p, FileProblem::WrongShape { .. })
        }),
        ("no weights", br#"{"rows":[{"attention":{"cross":{"queries":["a"],"keys":["b"]}}}]}"#.to_vec(), |p| {
            matches!(p, FileProblem::MissingField { .. })
        }),
        ("no rows", br#"{"rows":[]}"#.to_vec(), |p| matches!(p, FileProblem::MissingField { .. })),
        ("bad place", br#"{"rows":[{"attention":{"nowhere":{"queries":[],"keys":[]}}}]}"#.to_vec(), |p| {
            matches!(p, FileProblem::WrongType { .. })
        }),
        ("truncated JSON", br#"{"rows":[{"attent"#.to_vec(), |p| matches!(p, FileProblem::NotJson { .. })),
        ("another format", br#"{"format":"other","rows":[]}"#.to_vec(), |p| matches!(p, FileProblem::NotAttention)),
        ("binary noise", vec![7u8; 64], |p| matches!(p, FileProblem::NotAttention)),
        ("empty", Vec::new(), |p| matches!(p, FileProblem::NotAttention)),
    ];
    for (name, bytes, expected) in cases {
        let p = problem(read("bad.json", &bytes));
        assert!(expected(&p), "{name}: refused as {p:?}");
    }
}

#[test]
fn a_safetensors_file_must_match_its_metadata() {
    let run = toy_run();
    let good = safetensors("toy", &run, Precision::F16).unwrap();
    // cut anywhere: refused, never a panic
    for cut in [0, 7, 8, 20, good.len() / 2, good.len() - 1] {
        let p = problem(read("cut.safetensors", &good[..cut]));
        assert!(matches!(p, FileProblem::NotAttention | FileProblem::NotSafetensors), "cut at {cut}: {p:?}");
    }
    // a tensor whose shape does not fit the tokens
    let short = Array4::<f32>::from_elem((1, 1, 2, 2), 0.5);
    let meta = serde_json::json!({ "rows": [{ "attention": { "cross": { "queries": ["a", "b", "c"], "keys": ["a", "b"] } } }] });
    let bytes: Vec<u8> = short.iter().flat_map(|v| v.to_le_bytes()).collect();
    let view = safetensors::tensor::TensorView::new(Dtype::F32, vec![1, 1, 2, 2], &bytes).unwrap();
    let file = safetensors::serialize(
        [("rows.0.cross", view)],
        Some(std::collections::HashMap::from([("headmap".to_string(), meta.to_string())])),
    )
    .unwrap();
    assert!(matches!(problem(read("s.safetensors", &file)), FileProblem::TokensMismatch { tokens: 3, size: 2, .. }));
    // a model's own safetensors (no headmap metadata) is not an attention file
    let plain = safetensors::serialize(
        [("w", safetensors::tensor::TensorView::new(Dtype::F32, vec![1, 1, 2, 2], &bytes).unwrap())],
        None,
    )
    .unwrap();
    assert!(matches!(problem(read("model.safetensors", &plain)), FileProblem::NotAttention));
}

#[test]
fn rows_places_and_masks_must_agree() {
    let place = |q: serde_json::Value, k: serde_json::Value, w: serde_json::Value, mask: &str| serde_json::json!({ "mask": mask, "queries": q, "keys": k, "weights": w });
    let square = || {
        place(
            serde_json::json!(["a", "b"]),
            serde_json::json!(["a", "b"]),
            serde_json::json!([[[[1.0, 0.0], [0.5, 0.5]]]]),
            "causal",
        )
    };
    let doc = |rows: serde_json::Value| serde_json::to_vec(&serde_json::json!({ "rows": rows })).unwrap();
    // self-attention over sides of different lengths: refused (rollout would multiply them)
    let wide =
        place(serde_json::json!(["a"]), serde_json::json!(["a", "b"]), serde_json::json!([[[[0.5, 0.5]]]]), "none");
    let p = problem(read("w.json", &doc(serde_json::json!([{ "attention": { "encoder_self": wide } }]))));
    assert!(matches!(p, FileProblem::NotSquare { queries: 1, keys: 2, .. }), "{p:?}");
    // every row has the same places
    let rows = serde_json::json!([{ "attention": { "decoder_self": square() } }, { "attention": { "encoder_self": square() } }]);
    assert!(matches!(problem(read("r.json", &doc(rows))), FileProblem::MissingField { .. }));
    // and one mask per place
    let mut other = square();
    other["mask"] = "none".into();
    let rows =
        serde_json::json!([{ "attention": { "decoder_self": square() } }, { "attention": { "decoder_self": other } }]);
    assert!(matches!(problem(read("m.json", &doc(rows))), FileProblem::WrongType { .. }));
    // weight spread thin over the hidden keys is still weight under the mask
    let t = 8;
    let mut row0 = vec![0.0005f32; t];
    row0[0] = 1.0 - 0.0005 * (t - 1) as f32;
    let causal: Vec<Vec<f32>> = (0..t)
        .map(|i| {
            if i == 0 {
                row0.clone()
            } else {
                (0..t).map(|j| if j <= i { 1.0 / (i + 1) as f32 } else { 0.0 }).collect()
            }
        })
        .collect();
    let tokens: Vec<String> = (0..t).map(|i| format!("w{i}")).collect();
    let leak = place(serde_json::json!(tokens), serde_json::json!(tokens), serde_json::json!([[causal]]), "causal");
    let p = problem(read("l.json", &doc(serde_json::json!([{ "attention": { "decoder_self": leak } }]))));
    assert!(matches!(p, FileProblem::MaskedWeight { query: 0, .. }), "{p:?}");
}

#[test]
fn bf16_rows_sum_to_1_within_bf16_rounding() {
    // 0.7 and 0.3 in bf16 are 0.69921875 and 0.30078125: a sum within 2e-3, not 1e-3
    let weights = [0.7f32, 0.3, 0.3, 0.7].map(|v| half::bf16::from_f32(v + 0.0015));
    let bytes: Vec<u8> = weights.iter().flat_map(|v| v.to_le_bytes()).collect();
    let meta = serde_json::json!({ "rows": [{ "attention": { "encoder_self": { "queries": ["a", "b"], "keys": ["a", "b"] } } }] });
    let view = safetensors::tensor::TensorView::new(Dtype::BF16, vec![1, 1, 2, 2], &bytes).unwrap();
    let file = safetensors::serialize(
        [("rows.0.encoder_self", view)],
        Some(std::collections::HashMap::from([("headmap".to_string(), meta.to_string())])),
    )
    .unwrap();
    assert!(read("b.safetensors", &file).is_ok());
}

#[test]
fn a_file_past_the_limit_is_refused_before_it_is_read() {
    let big = vec![b' '; MAX_FILE_BYTES + 1];
    assert!(matches!(problem(read("big.safetensors", &big)), FileProblem::TooLarge { max: 512, .. }));
    let json = [b"{".as_slice(), &vec![b' '; MAX_JSON_BYTES]].concat();
    assert!(matches!(problem(read("big.json", &json)), FileProblem::TooLarge { max: 64, .. }));
}

#[test]
fn a_place_without_tokens_is_refused_not_divided_by() {
    let empty = br#"{"rows":[{"attention":{"encoder_self":{"queries":[],"keys":[],"weights":[[[]]]}}}]}"#;
    assert!(matches!(problem(read("e.json", empty)), FileProblem::WrongShape { .. }));
    let meta = serde_json::json!({ "rows": [{ "attention": { "cross": { "queries": [], "keys": ["a"] } } }] });
    let view = safetensors::tensor::TensorView::new(Dtype::F32, vec![1, 1, 0, 1], &[]).unwrap();
    let file = safetensors::serialize(
        [("rows.0.cross", view)],
        Some(std::collections::HashMap::from([("headmap".to_string(), meta.to_string())])),
    )
    .unwrap();
    assert!(matches!(problem(read("e.safetensors", &file)), FileProblem::WrongShape { .. }));
}

/// A small file cannot make the page build a grid of more than `MAX_HEADS` heads, nor a token
/// label of more than `MAX_LABEL_CHARS` characters.
#[test]
fn heads_and_labels_past_what_a_page_draws_are_refused() {
    let (layers, heads) = (weights::MAX_HEADS / 64 + 1, 64);
    let one = serde_json::json!([[1.0]]);
    let many = serde_json::json!(vec![vec![one.clone(); heads]; layers]);
    let p = problem(read("many.json", &document(&["a"], "padding", many)));
    assert!(matches!(&p, FileProblem::TooMany { count, .. } if *count == layers * heads), "{p}");
    let fewer = serde_json::json!(vec![vec![one.clone(); heads]; layers - 1]);
    assert!(read("fewer.json", &document(&["a"], "padding", fewer)).is_ok());
    let long = "가".repeat(checks::MAX_LABEL_CHARS + 1);
    let p = problem(read("long.json", &document(&[&long], "padding", serde_json::json!([[one]]))));
    assert!(matches!(&p, FileProblem::TooMany { at, .. } if at.ends_with("query[0]")), "{p}");
}
