//! The toy Transformer: masks in the places the paper puts them, determinism, and errors.
#![cfg(not(target_arch = "wasm32"))]

use headmap::models::MAX_BATCH;
use headmap::tokenize::MAX_TOKENS;
use headmap::{Error, MaskKind, Model, Place, PlaceRun, Request, ToyConfig};

const ANIMAL_KO: &str = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.";
const GIVE_KO: &str = "민수가 영희에게 책을 주었다.";
const PAD: &str = "[PAD]";

fn small() -> Model {
    Model::toy(ToyConfig::small(1)).unwrap()
}

/// `texts` (and `targets`) run with `mask` alone, in the place the mask
/// belongs to (no mask: encoder self-attention with nothing hidden).
fn run_with(model: &Model, texts: &[&str], targets: &[&str], mask: MaskKind, scale: bool) -> Result<PlaceRun, Error> {
    let place = match mask {
        MaskKind::None | MaskKind::Padding => Place::EncoderSelf,
        MaskKind::Causal => Place::DecoderSelf,
        MaskKind::Cross => Place::Cross,
    };
    let request = Request {
        texts: texts.iter().map(|t| t.to_string()).collect(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        place: Some(place),
        mask: Some(mask),
        scale: Some(scale),
        ..Request::default()
    };
    let mut run = model.run(&request)?;
    assert_eq!(run.places.len(), 1, "only the asked place is kept");
    Ok(run.places.remove(0))
}

fn labels(tokens: &[headmap::tokenize::Token]) -> Vec<&str> {
    tokens.iter().map(|t| t.label.as_str()).collect()
}

#[test]
fn a_padded_batch_gives_pad_keys_no_weight() {
    let run = run_with(&small(), &[ANIMAL_KO, GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    assert_eq!(run.batch(), 2);
    assert_eq!(run.shape(), (4, 9, 9), "(H, Tq, Tk): both rows padded to the longer one");
    assert_eq!(labels(&run.rows[1].keys)[5..], [PAD, PAD, PAD, PAD]);
    assert_eq!(run.rows[1].key_valid, [true, true, true, true, true, false, false, false, false]);
    for ((_, _, _, j), &w) in run.rows[1].weights().unwrap().indexed_iter() {
        if j >= 5 {
            assert_eq!(w, 0.0, "PAD key {j}");
        }
    }
    assert!(!run.what_if);
}

#[test]
fn without_a_mask_pad_keys_soak_up_weight() {
    let run = run_with(&small(), &[ANIMAL_KO, GIVE_KO], &[], MaskKind::None, true).unwrap();
    let pad_weight: f32 = run.rows[1].weights().unwrap().slice(ndarray::s![0, .., ..5, 5..]).sum();
    assert!(pad_weight > 0.5, "PAD columns took {pad_weight} of the real queries' weight");
    assert!(run.what_if, "encoder self-attention is trained with the padding mask");
}

#[test]
fn decoder_self_attention_never_looks_ahead() {
    let run = run_with(&small(), &[ANIMAL_KO], &[], MaskKind::Causal, true).unwrap();
    assert_eq!(run.layers(), 2);
    for ((_, h, i, j), &w) in run.rows[0].weights().unwrap().indexed_iter() {
        if j > i {
            assert_eq!(w, 0.0, "head {h} query {i} sees future key {j}");
        }
    }
}

#[test]
fn cross_attention_is_target_by_source() {
    let run = run_with(
        &small(),
        &[ANIMAL_KO, GIVE_KO],
        &["The animal was tired.", "Minsu gave a book."],
        MaskKind::Cross,
        true,
    )
    .unwrap();
    assert_eq!(labels(&run.rows[0].queries), ["The", "animal", "was", "tired", "."]);
    assert_eq!(run.rows[0].keys.len(), 9);
    assert_eq!(run.shape(), (4, 5, 9), "Tq = target length, Tk = source length");
    // Row 1's source has 5 real tokens: keys 5.. are PAD and masked.
    assert!(run.rows[1].weights().unwrap().slice(ndarray::s![1, .., .., 5..]).iter().all(|&w| w == 0.0));
    let row_sum: f32 = run.rows[1].weights().unwrap().slice(ndarray::s![1, 0, 0, ..]).sum();
    assert!((row_sum - 1.0).abs() < 1e-5);
}

#[test]
fn every_place_at_once_when_none_is_named() {
    let run = small().run(&Request { texts: vec![ANIMAL_KO.into()], ..Request::default() }).unwrap();
    let places: Vec<Place> = run.places.iter().map(|p| p.place).collect();
    assert_eq!(places, Place::ALL);
    let only = run_with(&small(), &[ANIMAL_KO], &[], MaskKind::Causal, true).unwrap();
    assert_eq!(
        only.rows[0].weights().unwrap(),
        run.places[1].rows[0].weights().unwrap(),
        "keeping one place changes nothing in it"
    );
}

#[test]
fn the_same_seed_gives_the_same_heatmap_and_another_seed_does_not() {
    let a = run_with(&small(), &[GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    let b = run_with(&small(), &[GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    let other = Model::toy(ToyConfig::small(2)).unwrap();
    let c = run_with(&other, &[GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    assert_eq!(a.rows[0].weights().unwrap(), b.rows[0].weights().unwrap());
    assert_ne!(a.rows[0].weights().unwrap(), c.rows[0].weights().unwrap());
}

#[test]
fn the_trace_agrees_with_the_run() {
    let model = small();
    let request = Request { texts: vec![ANIMAL_KO.into()], ..Request::default() };
    let run = model.run(&request).unwrap();
    let t = model.trace(&run, Place::DecoderSelf, 0, 1, 3).unwrap();
    assert_eq!(t.steps.weights, run.places[1].rows[0].weights().unwrap().slice(ndarray::s![1, 3, .., ..]));
    assert_eq!(t.q.ncols(), 16, "d_k = 64 / 4");
    assert_eq!(t.steps.masked[[0, 1]], f32::NEG_INFINITY, "the upper triangle is masked before softmax");
    assert!(t.steps.scores[[0, 1]].is_finite(), "raw scores exist everywhere");
    let err = model.trace(&run, Place::DecoderSelf, 0, 2, 0).unwrap_err().to_string();
    assert!(err.contains("layer 2 does not exist"), "{err}");
    assert!(model.trace(&run, Place::DecoderSelf, 1, 0, 0).is_err());
    assert!(model.trace(&run, Place::DecoderSelf, 0, 0, 4).is_err());
}

#[test]
fn the_paper_base_preset_has_eight_heads_of_64() {
    let cfg = ToyConfig::paper_base(1);
    assert_eq!((cfg.d_model, cfg.heads, cfg.d_k()), (512, 8, 64));
    let model = Model::toy(ToyConfig { encoder_layers: 1, decoder_layers: 1, ..cfg }).unwrap();
    let run = run_with(&model, &["Minsu gave Younghee a book."], &[], MaskKind::Padding, true).unwrap();
    assert_eq!(run.shape(), (8, 6, 6));
    // n² d multiply-adds for QKᵀ (seed 000), whatever the number of heads
    assert_eq!(run.cost().score_macs, 6 * 6 * 512);
    assert_eq!(run.cost().weight_bytes, 8 * 6 * 6 * 4);
}

#[test]
fn scaling_off_makes_the_softmax_peakier() {
    let model = Model::toy(ToyConfig { encoder_layers: 1, ..ToyConfig::paper_base(3) }).unwrap();
    let text = "The animal didn't cross the street because it was too tired.";
    let max_weight = |scale| {
        let run = run_with(&model, &[text], &[], MaskKind::Padding, scale).unwrap();
        run.rows[0].weights().unwrap().iter().copied().fold(0.0f32, f32::max)
    };
    assert!(max_weight(false) > max_weight(true), "without ÷√d_k the largest weight grows");
}

#[test]
fn odd_unicode_gives_finite_weights() {
    let model = small();
    for text in
        ["👩‍👩‍👧‍👦🇰🇷", "e\u{301}\u{301}\u{301}", "\u{200b}\u{200d}x", "مرحبا بالعالم", "ㄱㄴㄷ ᄀᄂᄃ", "\u{feff}a\u{0}b"]
    {
        let run = run_with(&model, &[text], &[], MaskKind::Causal, true).unwrap();
        assert!(run.rows[0].weights().unwrap().iter().all(|v| v.is_finite()), "{text:?}");
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let model = small();
    let err = |texts: &[&str], targets: &[&str], mask| run_with(&model, texts, targets, mask, true).unwrap_err();
    assert_eq!(err(&[""], &[], MaskKind::Padding), Error::EmptyText);
    assert_eq!(err(&["   \n"], &[], MaskKind::Padding), Error::EmptyText);
    assert_eq!(err(&[], &[], MaskKind::Padding), Error::EmptyText);
    assert_eq!(err(&["ok", ""], &[], MaskKind::Padding), Error::EmptyText);
    let long = "word ".repeat(MAX_TOKENS + 5);
    assert_eq!(err(&[&long], &[], MaskKind::Padding), Error::TooLong { tokens: MAX_TOKENS + 5, max: MAX_TOKENS });
    let many = vec!["a"; MAX_BATCH + 1];
    assert!(err(&many, &[], MaskKind::Padding).to_string().contains("batch maximum"));
    assert!(err(&["a", "b"], &["c"], MaskKind::Cross).to_string().contains("1 targets for 2 sources"));
    let err = Model::toy(ToyConfig { heads: 7, ..ToyConfig::small(1) }).err().unwrap();
    assert_eq!(err, Error::HeadsDoNotDivide { d_model: 64, heads: 7 });
    assert!(Model::toy(ToyConfig { encoder_layers: 0, ..ToyConfig::small(1) }).is_err());
    assert!(ToyConfig::preset("huge", 1).unwrap_err().to_string().contains("unknown preset"));
}

#[test]
fn a_mask_that_does_not_fit_the_place_is_refused() {
    let request = Request {
        texts: vec!["a b".into()],
        place: Some(Place::Cross),
        mask: Some(MaskKind::Causal),
        ..Request::default()
    };
    assert_eq!(
        small().run(&request).unwrap_err().to_string(),
        "the causal mask does not apply to cross: use cross or none"
    );
}

#[test]
fn a_long_run_keeps_layer_inputs_and_recomputes_the_weights_a_view_asks_for() {
    // 2 rows × 2 layers × 4 heads × 2048² f32 = 268 MB: more than a run keeps whole
    let model = small();
    let long = "word ".repeat(MAX_TOKENS);
    let request = Request { texts: vec![long.clone(), long], place: Some(Place::EncoderSelf), ..Request::default() };
    let run = model.run(&request).unwrap();
    let row = &run.places[0].rows[1];
    assert!(!row.keeps_weights());
    let head = row.head(1, 2).unwrap();
    assert_eq!(head.dim(), (MAX_TOKENS, MAX_TOKENS));
    let traced = model.trace(&run, Place::EncoderSelf, 1, 1, 2).unwrap();
    assert_eq!(head, traced.steps.weights, "recomputed through the block, the same as every step of the trace");
    assert_eq!(row.maxima().unwrap().dim(), (2, 4));
}
