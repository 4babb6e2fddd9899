//! Properties that hold for any input: what the masks promise, and what softmax guarantees.
#![cfg(not(target_arch = "wasm32"))]

use headmap::attention::multi_head::{concat_heads, split_heads};
use headmap::{scaled_dot_product_attention, Mask};
use ndarray::{Array2, Axis};
use proptest::prelude::*;

fn matrix(rows: usize, cols: usize) -> impl Strategy<Value = Array2<f32>> {
    prop::collection::vec(-3.0f32..3.0, rows * cols)
        .prop_map(move |v| Array2::from_shape_vec((rows, cols), v).expect("sized to fit"))
}

/// Q (Tq, d_k), K (Tk, d_k), V (Tk, d_v) and a random mask (Tq, Tk).
fn problem() -> impl Strategy<Value = (Array2<f32>, Array2<f32>, Array2<f32>, Mask)> {
    (1usize..8, 1usize..8, 1usize..9, 1usize..5).prop_flat_map(|(tq, tk, d_k, d_v)| {
        let allowed = prop::collection::vec(any::<bool>(), tq * tk)
            .prop_map(move |a| Mask::from_allowed(Array2::from_shape_vec((tq, tk), a).expect("sized")));
        (matrix(tq, d_k), matrix(tk, d_k), matrix(tk, d_v), allowed)
    })
}

proptest! {
    #[test]
    fn visible_rows_sum_to_one_and_hidden_cells_are_exactly_zero((q, k, v, mask) in problem()) {
        let a = scaled_dot_product_attention(q.view(), k.view(), v.view(), Some(&mask), true).unwrap();
        for (i, row) in a.weights.axis_iter(Axis(0)).enumerate() {
            let visible = (0..row.len()).any(|j| mask.allows(i, j));
            let sum: f32 = row.sum();
            if visible {
                prop_assert!((sum - 1.0).abs() < 1e-5, "row {} sums to {}", i, sum);
            } else {
                prop_assert_eq!(sum, 0.0);
                prop_assert!(a.fully_masked_rows.contains(&i));
            }
            for (j, &w) in row.iter().enumerate() {
                prop_assert!(w.is_finite() && w >= 0.0);
                if !mask.allows(i, j) {
                    prop_assert_eq!(w, 0.0, "hidden cell ({}, {})", i, j);
                }
            }
        }
    }

    #[test]
    fn causal_weights_are_lower_triangular((q, k, v, _) in problem()) {
        let t = q.nrows().min(k.nrows());
        let (q, k, v) = (q.slice(ndarray::s![..t, ..]), k.slice(ndarray::s![..t, ..]), v.slice(ndarray::s![..t, ..]));
        let a = scaled_dot_product_attention(q, k, v, Some(&Mask::causal(t)), true).unwrap();
        for ((i, j), &w) in a.weights.indexed_iter() {
            if j > i {
                prop_assert_eq!(w, 0.0, "future key ({}, {})", i, j);
            }
        }
        prop_assert_eq!(a.weights[[0, 0]], 1.0, "the first query sees only itself");
    }

    #[test]
    fn pad_key_columns_get_no_weight((q, k, v, _) in problem(), pads in 0usize..4) {
        let tk = k.nrows();
        let valid: Vec<bool> = (0..tk).map(|j| j + pads < tk || j == 0).collect();
        let a = scaled_dot_product_attention(q.view(), k.view(), v.view(), Some(&Mask::key_padding(q.nrows(), &valid)), true).unwrap();
        for (j, column) in a.weights.axis_iter(Axis(1)).enumerate() {
            if !valid[j] {
                prop_assert!(column.iter().all(|&w| w == 0.0), "PAD column {}", j);
            }
        }
    }

    #[test]
    fn scale_off_equals_scale_on_with_q_times_sqrt_dk((q, k, v, mask) in problem()) {
        let sqrt_dk = (q.ncols() as f32).sqrt();
        let off = scaled_dot_product_attention(q.view(), k.view(), v.view(), Some(&mask), false).unwrap();
        let q_big = &q * sqrt_dk;
        let on = scaled_dot_product_attention(q_big.view(), k.view(), v.view(), Some(&mask), true).unwrap();
        for (a, b) in off.weights.iter().zip(on.weights.iter()) {
            prop_assert!((a - b).abs() < 1e-4, "{} vs {}", a, b);
        }
    }

    #[test]
    fn permuting_keys_and_values_permutes_the_weights((q, k, v, _) in problem(), seed in any::<u64>()) {
        let tk = k.nrows();
        let mut order: Vec<usize> = (0..tk).collect();
        let mut s = seed;
        for i in (1..tk).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(i, (s >> 33) as usize % (i + 1));
        }
        let (k2, v2) = (k.select(Axis(0), &order), v.select(Axis(0), &order));
        let a = scaled_dot_product_attention(q.view(), k.view(), v.view(), None, true).unwrap();
        let b = scaled_dot_product_attention(q.view(), k2.view(), v2.view(), None, true).unwrap();
        for i in 0..q.nrows() {
            for (new, &old) in order.iter().enumerate() {
                prop_assert!((b.weights[[i, new]] - a.weights[[i, old]]).abs() < 1e-5);
            }
        }
        for (x, y) in a.output.iter().zip(b.output.iter()) {
            prop_assert!((x - y).abs() < 1e-4, "the output does not depend on key order");
        }
    }

    #[test]
    fn split_then_concat_heads_is_the_identity(t in 1usize..6, heads in 1usize..5, d_k in 1usize..5, seed in any::<u32>()) {
        let d = heads * d_k;
        let x = Array2::from_shape_fn((t, d), |(i, j)| (i * 31 + j * 7) as f32 + seed as f32 * 1e-3);
        let split = split_heads(x.view(), heads).unwrap();
        prop_assert_eq!(split.dim(), (heads, t, d_k));
        prop_assert_eq!(concat_heads(split.view()), x);
    }
}
