use super::*;
use ndarray::{Array2, Axis};

fn identity(d: usize) -> Linear {
    Linear::new("eye", Array2::eye(d), None).unwrap()
}

#[test]
fn heads_must_divide_d_model() {
    let err = MultiHeadAttention::new(identity(6), identity(6), identity(6), identity(6), 4).unwrap_err();
    assert_eq!(err, Error::HeadsDoNotDivide { d_model: 6, heads: 4 });
    assert!(err.to_string().contains("4 heads do not divide d_model = 6"));
    assert!(split_heads(Array2::zeros((2, 6)).view(), 4).is_err());
}

#[test]
fn projections_of_other_widths_are_rejected() {
    let wide = Linear::new("wide", Array2::zeros((4, 5)), None).unwrap();
    let err = MultiHeadAttention::new(identity(4), wide, identity(4), identity(4), 2).unwrap_err();
    assert_eq!(err.to_string(), "`W_K` has shape [4, 5], expected [4, 4]");
}

#[test]
fn grouped_query_heads_share_keys_and_values() {
    // 4 query heads of width 1 over 2 key/value heads: heads 0, 1 read K/V 0; 2, 3 read 1
    let w_kv = Linear::new("kv", ndarray::array![[1.0f32, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]], None).unwrap();
    let shape = HeadShape { heads: 4, kv_heads: 2, head_dim: 1 };
    let mha = MultiHeadAttention::with_shape(identity(4), w_kv.clone(), w_kv, identity(4), shape).unwrap();
    assert_eq!((0..4).map(|h| mha.kv_head(h)).collect::<Vec<_>>(), [0, 0, 1, 1]);
    let x = ndarray::array![[1.0f32, 2.0, 3.0, 4.0], [0.5, 0.0, -1.0, 2.0]];
    let t = mha.trace(x.view(), x.view(), None, true, 3).unwrap();
    assert_eq!((t.kv_head, t.k.column(0).to_vec()), (1, vec![2.0, 0.0]));
    let all = mha.forward(x.view(), x.view(), None, true).unwrap();
    assert_eq!(all.weights.index_axis(Axis(0), 3), t.steps.weights);
    assert_eq!(mha.weights(x.view(), x.view(), None, true).unwrap(), all.weights);
    let odd = HeadShape { heads: 3, kv_heads: 2, head_dim: 1 };
    assert_eq!(
        MultiHeadAttention::with_shape(identity(4), identity(4), identity(4), identity(4), odd).unwrap_err(),
        Error::KvHeadsDoNotDivide { heads: 3, kv_heads: 2 }
    );
}

#[test]
fn a_head_sees_only_its_own_columns() {
    // With identity projections, head 1's Q is columns 2..4 of the input.
    let mha = MultiHeadAttention::new(identity(4), identity(4), identity(4), identity(4), 2).unwrap();
    let x = ndarray::array![[1.0f32, 0.0, 0.0, 5.0], [0.0, 1.0, 5.0, 0.0]];
    let t = mha.trace(x.view(), x.view(), None, false, 1).unwrap();
    assert_eq!(t.q, ndarray::array![[0.0f32, 5.0], [5.0, 0.0]]);
    assert_eq!(t.steps.scores, ndarray::array![[25.0f32, 0.0], [0.0, 25.0]]);
    assert!(mha.trace(x.view(), x.view(), None, false, 2).is_err());
}
