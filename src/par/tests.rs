//! Split products and passes give the whole one's bits, on any number of threads.

use ndarray::Array2;

use super::*;

#[test]
fn a_split_product_equals_the_whole_one_bit_for_bit() {
    let x = Array2::from_shape_fn((77, 384), |(i, j)| ((i * 31 + j * 17) % 97) as f32 / 97.0 - 0.5);
    let w = Array2::from_shape_fn((384, 160), |(i, j)| ((i * 13 + j * 7) % 89) as f32 / 89.0 - 0.5);
    let whole = product_here(x.view(), w.view());
    for n in [1, 2, 3] {
        let split = pool(n).unwrap().install(|| product(x.view(), w.view()));
        assert_eq!(split, whole, "{n} threads");
    }
}

#[test]
fn a_product_split_by_columns_equals_the_whole_one_with_its_bias() {
    // 16 rows split by columns natively; 1,120 columns make pieces of 576 + 544 on two
    // threads and 384 + 384 + 352 on three
    let x = Array2::from_shape_fn((16, 1024), |(i, j)| ((i * 29 + j * 11) % 83) as f32 / 83.0 - 0.5);
    let w = Array2::from_shape_fn((1024, 1120), |(i, j)| ((i * 7 + j * 19) % 101) as f32 / 101.0 - 0.5);
    let bias = ndarray::Array1::from_shape_fn(1120, |j| j as f32 / 7.0);
    let biased = || product_then(x.view(), w.view(), |mut y, columns| y += &bias.slice(ndarray::s![columns]));
    let whole = pool(1).unwrap().install(biased);
    assert_eq!(whole, product_here(x.view(), w.view()) + &bias);
    for n in [2, 3] {
        #[cfg(not(target_arch = "wasm32"))]
        assert!(pool(n).unwrap().install(|| columns_per_piece(16, 1120)).is_some(), "{n} threads split by columns");
        assert_eq!(pool(n).unwrap().install(biased), whole, "{n} threads");
    }
}

#[test]
fn inside_runs_on_a_pool_thread_and_gives_what_it_computes() {
    // from the test's own thread, outside the global pool: on it when it has several threads
    assert_eq!(rayon::current_thread_index(), None);
    // one forward at a time keeps the pool awake: while another test's holds it, this one runs
    // where it is called, so ask until the pool is free (a fresh clone's CI failed here once)
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let on_pool = loop {
        let here = inside(true, rayon::current_thread_index).is_some();
        if here || threads() == 1 || std::time::Instant::now() > until {
            break here;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert_eq!(on_pool, threads() > 1);
    assert_eq!(inside(false, rayon::current_thread_index), None);
    assert_eq!(inside(true, || 6 * 7), 42);
    // already on a pool's thread, it stays there
    let two = pool(2).unwrap();
    let here = two.install(|| (rayon::current_thread_index(), inside(true, rayon::current_thread_index)));
    assert_eq!(here.0, here.1);
}

#[test]
fn map_keeps_the_order() {
    let items: Vec<usize> = (0..100).collect();
    let squares = pool(2).unwrap().install(|| map(&items, |i| i * i));
    assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
}
