//! The kernels against a product summed in order, and against each other.

use ndarray::{s, Array2};

use super::*;
use crate::rng::SplitMix64;

fn random(rows: usize, cols: usize, rng: &mut SplitMix64) -> Array2<f32> {
    Array2::from_shape_simple_fn((rows, cols), || rng.next_signed())
}

/// Each value summed along `k` in order with one rounding a step: what the kernels promise.
fn in_order(x: &Array2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
    Array2::from_shape_fn((x.nrows(), w.ncols()), |(i, j)| {
        (0..x.ncols()).fold(0.0f32, |sum, k| x[[i, k]].mul_add(w[[k, j]], sum))
    })
}

fn kernels() -> Vec<Kernel> {
    [Kernel::Avx512, Kernel::Avx2].into_iter().filter(|k| k.available()).collect()
}

#[test]
fn every_kernel_sums_in_order_for_every_tile_and_strip() {
    let mut rng = SplitMix64::new(7);
    for kernel in kernels() {
        for m in [1, 2, 3, 5, 6, 7, 8, 9, 13, 25, 31, 32, 45] {
            for k in [1, 3, 17, 64, 300, 700] {
                for n in [1, 5, 16, 31, 32, 33, 48, 70, 256, 290] {
                    let (x, w) = (random(m, k, &mut rng), random(k, n, &mut rng));
                    let mut y = Array2::from_elem((m, n), f32::NAN);
                    assert!(product_with(kernel, x.view(), w.view(), &mut y.view_mut()));
                    assert_eq!(y, in_order(&x, w.view()), "{kernel:?} {m}×{k}·{k}×{n}");
                }
            }
        }
    }
}

#[test]
fn views_with_gaps_are_read_and_written_in_place() {
    let mut rng = SplitMix64::new(8);
    // 11 rows take `pack`'s copy (50 columns end in a narrow strip); 40 copy `w` in the first
    // tiles, which read the slice's rows
    for (kernel, m) in kernels().into_iter().flat_map(|k| [(k, 11), (k, 40)]) {
        // x transposed (columns in order), w a slice of wider rows, y a slice of a wider array
        let xt = random(40, m, &mut rng);
        let wide = random(40, 90, &mut rng);
        let w = wide.slice(s![.., 3..53]);
        let mut out = Array2::from_elem((m, 60), -1.0f32);
        assert!(product_with(kernel, xt.t(), w, &mut out.slice_mut(s![.., 5..55])));
        assert_eq!(out.slice(s![.., 5..55]), in_order(&xt.t().to_owned(), w));
        assert!(out.slice(s![.., ..5]).iter().chain(out.slice(s![.., 55..])).all(|&v| v == -1.0));
    }
}

#[test]
fn a_row_has_its_bits_alone_and_on_either_kernel() {
    let mut rng = SplitMix64::new(9);
    // 25 rows read `w` in place; 45 copy its panels, the first tiles as they read them
    let (x, w) = (random(45, 600, &mut rng), random(600, 300, &mut rng));
    let all: Vec<Array2<f32>> = kernels()
        .into_iter()
        .flat_map(|kernel| [(kernel, 25), (kernel, 45)])
        .map(|(kernel, m)| {
            let x = x.slice(s![..m, ..]);
            let mut y = Array2::zeros((m, 300));
            assert!(product_with(kernel, x, w.view(), &mut y.view_mut()));
            for i in 0..m {
                let mut one = Array2::zeros((1, 300));
                assert!(product_with(kernel, x.slice(s![i..i + 1, ..]), w.view(), &mut one.view_mut()));
                assert_eq!(one.row(0), y.row(i), "{kernel:?}, {m} rows, row {i}");
            }
            y.slice_move(s![..25, ..])
        })
        .collect();
    assert!(all.windows(2).all(|p| p[0] == p[1]), "the kernels or the heights differ");
}

#[test]
fn a_transposed_w_is_copied_into_rows_for_enough_rows_of_x() {
    let mut rng = SplitMix64::new(11);
    let (x, w) = (random(9, 32, &mut rng), random(20, 32, &mut rng));
    for kernel in kernels() {
        let mut y = Array2::zeros((9, 20));
        assert!(product_with(kernel, x.view(), w.t(), &mut y.view_mut()));
        assert_eq!(y, in_order(&x, w.t()));
    }
}

#[test]
fn transposed_weights_and_mismatched_shapes_go_to_the_portable_product() {
    let mut rng = SplitMix64::new(10);
    let (x, w) = (random(4, 8, &mut rng), random(6, 8, &mut rng));
    let mut y = Array2::zeros((4, 6));
    for kernel in kernels() {
        assert!(!product_with(kernel, x.view(), w.t(), &mut y.view_mut()), "column-major w, 4 rows");
        assert!(!product_with(kernel, x.view(), w.view(), &mut y.view_mut()), "k 8 against 6");
    }
    assert!(!product_with(Kernel::Portable, x.view(), w.t(), &mut y.view_mut()));
    // the product the crate asks for is the same either way
    crate::gemm::product_into(x.view(), w.t(), &mut y.view_mut());
    assert!((&y - &x.dot(&w.t())).iter().all(|d| d.abs() < 1e-5));
}
