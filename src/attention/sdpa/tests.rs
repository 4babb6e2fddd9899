//! Scaled dot-product attention on small hand-made inputs: the seed example's numbers, a fully
//! masked row, the trace against the fast path, and errors that say what.

use super::*;
use ndarray::{array, Array2};

#[test]
fn the_seed_weighted_sum_gives_8_2() {
    // seed 000: 동물 0.7, 길 0.1, 그것 0.2 over V = [10,0], [0,10], [5,5]
    let v = array![[10.0f32, 0.0], [0.0, 10.0], [5.0, 5.0]];
    let got = weighted_sum(array![0.7f32, 0.1, 0.2].view(), v.view()).unwrap();
    assert!((got[0] - 8.0).abs() < 1e-6 && (got[1] - 2.0).abs() < 1e-6, "weighted sum {got}");
}

#[test]
fn the_seed_example_through_the_whole_attention() {
    // Scores ln 0.7, ln 0.1, ln 0.2 make the softmax give the seed's weights exactly.
    let q = array![[1.0f32]];
    let k = array![[0.7f32.ln()], [0.1f32.ln()], [0.2f32.ln()]];
    let v = array![[10.0f32, 0.0], [0.0, 10.0], [5.0, 5.0]];
    let a = scaled_dot_product_attention(q.view(), k.view(), v.view(), None, false).unwrap();
    for (got, want) in a.weights.iter().zip([0.7, 0.1, 0.2]) {
        assert!((got - want).abs() < 1e-6, "weight {got} want {want}");
    }
    assert!((a.output[[0, 0]] - 8.0).abs() < 1e-5 && (a.output[[0, 1]] - 2.0).abs() < 1e-5);
}

#[test]
fn a_fully_masked_row_is_zero_not_nan() {
    let q = Array2::<f32>::ones((2, 4));
    let mask = Mask::key_padding(2, &[false, false, false]);
    let a = scaled_dot_product_attention(
        q.view(),
        Array2::ones((3, 4)).view(),
        Array2::ones((3, 2)).view(),
        Some(&mask),
        true,
    )
    .unwrap();
    assert!(a.weights.iter().all(|&w| w == 0.0));
    assert!(a.output.iter().all(|&o| o == 0.0));
    assert_eq!(a.fully_masked_rows, vec![0, 1]);
}

#[test]
fn trace_steps_agree_with_the_fast_path() {
    let q = array![[1.0f32, 2.0], [0.5, -1.0]];
    let k = array![[0.0f32, 1.0], [1.0, 0.0], [2.0, 2.0]];
    let v = array![[1.0f32], [2.0], [3.0]];
    let mask = Mask::key_padding(2, &[true, true, false]);
    let t = trace(q.view(), k.view(), v.view(), Some(&mask), true).unwrap();
    let a = scaled_dot_product_attention(q.view(), k.view(), v.view(), Some(&mask), true).unwrap();
    assert_eq!(t.weights, a.weights);
    assert_eq!(t.output, a.output);
    assert_eq!(t.scores[[0, 2]], 6.0);
    assert!((t.scaled[[0, 2]] - 6.0 / 2f32.sqrt()).abs() < 1e-6);
    assert_eq!(t.masked[[0, 2]], f32::NEG_INFINITY);
    assert_eq!(t.scale, 2f32.sqrt());
}

#[test]
fn bad_inputs_are_errors_that_say_what() {
    let ok = Array2::<f32>::ones((2, 2));
    let err = scaled_dot_product_attention(ok.view(), Array2::ones((2, 3)).view(), ok.view(), None, true).unwrap_err();
    assert_eq!(err.to_string(), "`K` has shape [2, 3], expected [2, 2]");
    let mut nan = ok.clone();
    nan[[1, 0]] = f32::NAN;
    let err = scaled_dot_product_attention(nan.view(), ok.view(), ok.view(), None, true).unwrap_err();
    assert_eq!(err.to_string(), "`Q` holds a non-finite value (NaN or infinity) at [1, 0]");
    let huge = Array2::from_elem((2, 2), 1e30f32);
    let err = scaled_dot_product_attention(huge.view(), huge.view(), ok.view(), None, true).unwrap_err();
    assert!(err.to_string().contains("scores"), "{err}");
    let err = scaled_dot_product_attention(ok.view(), ok.view(), ok.view(), Some(&Mask::causal(3)), true).unwrap_err();
    assert!(err.to_string().starts_with("`mask` has shape [3, 3]"), "{err}");
}
