//! The toy Transformer: masks in the places the paper puts them, determinism, and errors.
#![cfg(not(target_arch = "wasm32"))]

use headmap::models::toy::{MAX_BATCH, PAD};
use headmap::tokenize::MAX_TOKENS;
use headmap::{Error, MaskKind, ToyConfig, ToyModel};

const ANIMAL_KO: &str = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.";
const GIVE_KO: &str = "민수가 영희에게 책을 주었다.";

fn small() -> ToyModel {
    ToyModel::new(ToyConfig::small(1)).unwrap()
}

#[test]
fn a_padded_batch_gives_pad_keys_no_weight() {
    let run = small().run(&[ANIMAL_KO, GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    assert_eq!(run.batch(), 2);
    assert_eq!(run.shape(), (4, 9, 9), "(H, Tq, Tk): both rows padded to the longer one");
    assert_eq!(run.keys[1][5..], [PAD, PAD, PAD, PAD]);
    assert_eq!(run.key_valid[1], [true, true, true, true, true, false, false, false, false]);
    for layer in &run.weights[1] {
        for ((_, _, j), &w) in layer.indexed_iter() {
            if j >= 5 {
                assert_eq!(w, 0.0, "PAD key {j}");
            }
        }
    }
}

#[test]
fn without_a_mask_pad_keys_soak_up_weight() {
    let run = small().run(&[ANIMAL_KO, GIVE_KO], &[], MaskKind::None, true).unwrap();
    let pad_weight: f32 = run.weights[1][0].slice(ndarray::s![.., ..5, 5..]).sum();
    assert!(pad_weight > 0.5, "PAD columns took {pad_weight} of the real queries' weight");
}

#[test]
fn decoder_self_attention_never_looks_ahead() {
    let run = small().run(&[ANIMAL_KO], &[], MaskKind::Causal, true).unwrap();
    assert_eq!(run.layers(), 2);
    for layer in &run.weights[0] {
        for ((h, i, j), &w) in layer.indexed_iter() {
            if j > i {
                assert_eq!(w, 0.0, "head {h} query {i} sees future key {j}");
            }
        }
    }
}

#[test]
fn cross_attention_is_target_by_source() {
    let run = small()
        .run(&[ANIMAL_KO, GIVE_KO], &["The animal was tired.", "Minsu gave a book."], MaskKind::Cross, true)
        .unwrap();
    assert_eq!(run.queries[0], ["The", "animal", "was", "tired", "."]);
    assert_eq!(run.keys[0].len(), 9);
    assert_eq!(run.shape(), (4, 5, 9), "Tq = target length, Tk = source length");
    // Row 1's source has 5 real tokens: keys 5.. are PAD and masked.
    assert!(run.weights[1][1].slice(ndarray::s![.., .., 5..]).iter().all(|&w| w == 0.0));
    let row_sum: f32 = run.weights[1][1].slice(ndarray::s![0, 0, ..]).sum();
    assert!((row_sum - 1.0).abs() < 1e-5);
}

#[test]
fn the_same_seed_gives_the_same_heatmap_and_another_seed_does_not() {
    let a = small().run(&[GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    let b = small().run(&[GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    let c = ToyModel::new(ToyConfig::small(2)).unwrap().run(&[GIVE_KO], &[], MaskKind::Padding, true).unwrap();
    assert_eq!(a.weights, b.weights);
    assert_ne!(a.weights, c.weights);
}

#[test]
fn the_trace_agrees_with_the_run() {
    let model = small();
    let run = model.run(&[ANIMAL_KO], &[], MaskKind::Causal, true).unwrap();
    let t = model.trace(&run, 0, 1, 3).unwrap();
    assert_eq!(t.steps.weights, run.weights[0][1].index_axis(ndarray::Axis(0), 3));
    assert_eq!(t.q.ncols(), 16, "d_k = 64 / 4");
    assert_eq!(t.steps.masked[[0, 1]], f32::NEG_INFINITY, "the upper triangle is masked before softmax");
    assert!(t.steps.scores[[0, 1]].is_finite(), "raw scores exist everywhere");
    assert!(model.trace(&run, 0, 2, 0).unwrap_err().to_string().contains("layer 2 does not exist"));
    assert!(model.trace(&run, 1, 0, 0).is_err());
    assert!(model.trace(&run, 0, 0, 4).is_err());
}

#[test]
fn the_paper_base_preset_has_eight_heads_of_64() {
    let cfg = ToyConfig::paper_base(1);
    assert_eq!((cfg.d_model, cfg.heads, cfg.d_k()), (512, 8, 64));
    let model = ToyModel::new(ToyConfig { encoder_layers: 1, decoder_layers: 1, ..cfg }).unwrap();
    let run = model.run(&["Minsu gave Younghee a book."], &[], MaskKind::Padding, true).unwrap();
    assert_eq!(run.shape(), (8, 6, 6));
    // n² d multiply-adds for QKᵀ (seed 000), whatever the number of heads
    assert_eq!(run.cost().score_macs, 6 * 6 * 512);
    assert_eq!(run.cost().weight_bytes, 8 * 6 * 6 * 4);
}

#[test]
fn scaling_off_makes_the_softmax_peakier() {
    let model = ToyModel::new(ToyConfig { encoder_layers: 1, ..ToyConfig::paper_base(3) }).unwrap();
    let text = "The animal didn't cross the street because it was too tired.";
    let max_weight = |scale| {
        let run = model.run(&[text], &[], MaskKind::Padding, scale).unwrap();
        let w = &run.weights[0][0];
        w.iter().copied().fold(0.0f32, f32::max)
    };
    assert!(max_weight(false) > max_weight(true), "without ÷√d_k the largest weight grows");
}

#[test]
fn odd_unicode_gives_finite_weights() {
    let model = small();
    for text in
        ["👩‍👩‍👧‍👦🇰🇷", "e\u{301}\u{301}\u{301}", "\u{200b}\u{200d}x", "مرحبا بالعالم", "ㄱㄴㄷ ᄀᄂᄃ", "\u{feff}a\u{0}b"]
    {
        let run = model.run(&[text], &[], MaskKind::Causal, true).unwrap();
        assert!(run.weights[0].iter().all(|w| w.iter().all(|v| v.is_finite())), "{text:?}");
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let model = small();
    assert_eq!(model.run(&[""], &[], MaskKind::Padding, true).unwrap_err(), Error::EmptyText);
    assert_eq!(model.run(&["   \n"], &[], MaskKind::Padding, true).unwrap_err(), Error::EmptyText);
    assert_eq!(model.run(&[], &[], MaskKind::Padding, true).unwrap_err(), Error::EmptyText);
    assert_eq!(model.run(&["ok", ""], &[], MaskKind::Padding, true).unwrap_err(), Error::EmptyText);
    let long = "word ".repeat(MAX_TOKENS + 5);
    assert_eq!(
        model.run(&[&long], &[], MaskKind::Padding, true).unwrap_err(),
        Error::TooLong { tokens: MAX_TOKENS + 5, max: MAX_TOKENS }
    );
    let many = vec!["a"; MAX_BATCH + 1];
    assert!(model.run(&many, &[], MaskKind::Padding, true).unwrap_err().to_string().contains("batch maximum"));
    assert!(model
        .run(&["a", "b"], &["c"], MaskKind::Cross, true)
        .unwrap_err()
        .to_string()
        .contains("1 targets for 2 sources"));
    let err = ToyModel::new(ToyConfig { heads: 7, ..ToyConfig::small(1) }).err().unwrap();
    assert_eq!(err, Error::HeadsDoNotDivide { d_model: 64, heads: 7 });
    assert!(ToyModel::new(ToyConfig { encoder_layers: 0, ..ToyConfig::small(1) }).is_err());
    assert!(ToyConfig::preset("huge", 1).unwrap_err().to_string().contains("unknown preset"));
}
