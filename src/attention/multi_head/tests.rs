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

/// A (rows, cols) matrix of made-up values, different for each `seed`.
fn filled(rows: usize, cols: usize, seed: f32) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(i, j)| ((i * cols + j) as f32 * 0.71 + seed).sin())
}

#[test]
fn what_each_head_writes_adds_up_to_the_block_output() {
    let (d, t) = (6, 4);
    let linear = |seed| Linear::new("w", filled(d, d, seed), Some(filled(1, d, seed + 9.0).row(0).to_owned())).unwrap();
    let mha = MultiHeadAttention::new(linear(1.0), linear(2.0), linear(3.0), linear(4.0), 3).unwrap();
    let x = filled(t, d, 5.0);
    let writes = mha.head_writes(x.view(), x.view(), None, true, &[]).unwrap();
    let bias = mha.w_o.bias.clone().unwrap();
    // each head's write c_h = z_h W_O^h, from its trace: Σ_h c_h + bias is the block's output
    let mut sum = Array2::from_shape_fn((t, d), |(_, j)| bias[j]);
    for h in 0..3 {
        let z = mha.trace(x.view(), x.view(), None, true, h).unwrap().steps.output; // (Tq, d_k)
        let c = z.dot(&mha.w_o.weight.slice(s![h * 2..(h + 1) * 2, ..]));
        for (i, row) in c.rows().into_iter().enumerate() {
            assert!((row.dot(&row).sqrt() - writes.norms[[h, i]]).abs() < 1e-5);
        }
        sum += &c;
        // the value-weighted weights of head h: α_ij ‖v_j W_O^h‖, from the trace's V
        let v = mha.trace(x.view(), x.view(), None, true, h).unwrap().v;
        let vw = v.dot(&mha.w_o.weight.slice(s![h * 2..(h + 1) * 2, ..]));
        let norms = mha.value_norms(x.view()).unwrap();
        for (j, row) in vw.rows().into_iter().enumerate() {
            assert!((row.dot(&row).sqrt() - norms[[h, j]]).abs() < 1e-5);
        }
    }
    let out = mha.forward(x.view(), x.view(), None, true).unwrap().output;
    assert!((&sum - &out).iter().all(|e| e.abs() < 1e-5));
    // shares: in [0, 1], a query's summing to 1
    for column in writes.shares.columns() {
        assert!(column.iter().all(|&p| (0.0..=1.0).contains(&p)));
        assert!((column.sum() - 1.0).abs() < 1e-5);
    }
    // a head turned off writes nothing and has no share
    let off = mha.head_writes(x.view(), x.view(), None, true, &[(1, &HeadEdit::Zero)]).unwrap();
    assert!(off.norms.row(1).iter().all(|&n| n == 0.0));
    assert!(off.shares.row(1).iter().all(|&p| p == 0.0));
    assert!(mha.head_writes(x.view(), x.view(), None, true, &[(3, &HeadEdit::Zero)]).is_err());
}
