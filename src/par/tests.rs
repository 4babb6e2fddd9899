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
fn beside_runs_where_it_is_called_and_gives_what_it_computes() {
    // from the test's own thread, outside the global pool: there, whatever helps it
    assert_eq!(rayon::current_thread_index(), None);
    let caller = std::thread::current().id();
    assert_eq!(beside(|| std::thread::current().id()), caller);
    assert_eq!(beside(|| 6 * 7), 42);
    // already on a pool's thread, it stays there with no helpers: rayon splits its work
    let two = pool(2).unwrap();
    let (index, (inner, helped)) =
        two.install(|| (rayon::current_thread_index(), beside(|| (rayon::current_thread_index(), imp::helped()))));
    assert_eq!((inner, helped), (index, false));
}

#[test]
fn map_keeps_the_order() {
    let items: Vec<usize> = (0..100).collect();
    let squares = pool(2).unwrap().install(|| map(&items, |i| i * i));
    assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
}

/// `f` with helpers ([`beside`]), once no other test's forward holds the pool: one at a time
/// gets helpers. Whether it got them is given too.
fn with_helpers<R: Send>(f: impl Fn() -> R + Send + Sync) -> (R, bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (out, helped) = beside(|| (f(), imp::helped()));
        if helped || threads() == 1 || std::time::Instant::now() > until {
            return (out, helped);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn work_split_with_helpers_gives_the_whole_ones_bits() {
    let x = Array2::from_shape_fn((16, 1024), |(i, j)| ((i * 29 + j * 11) % 83) as f32 / 83.0 - 0.5);
    let w = Array2::from_shape_fn((1024, 1120), |(i, j)| ((i * 7 + j * 19) % 101) as f32 / 101.0 - 0.5);
    let (split, helped) = with_helpers(|| product(x.view(), w.view()));
    assert_eq!(helped, threads() > 1 && cfg!(not(target_arch = "wasm32")));
    assert_eq!(split, product_here(x.view(), w.view()));
    let items: Vec<usize> = (0..1000).collect();
    let (squares, _) = with_helpers(|| map(&items, |i| i * i));
    assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
    // each piece once, whoever takes it
    let (count, _) = with_helpers(|| {
        let count = std::sync::atomic::AtomicUsize::new(0);
        imp::each((0..1000).collect(), |i: usize| {
            count.fetch_add(i, Ordering::Relaxed);
        });
        count.into_inner()
    });
    assert_eq!(count, 999 * 1000 / 2);
}

#[test]
fn a_piece_that_panics_beside_raises_it_on_the_callers_thread() {
    let caught = std::panic::catch_unwind(|| {
        with_helpers(|| {
            imp::each((0..64).collect(), |i: usize| {
                if i == 63 {
                    panic!("piece {i}");
                }
                std::thread::sleep(std::time::Duration::from_micros(50));
            })
        })
    });
    let payload = caught.expect_err("the piece's panic comes back");
    assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some("piece 63"));
    // and the next work gets its helpers again
    let (_, helped) = with_helpers(|| ());
    assert_eq!(helped, threads() > 1 && cfg!(not(target_arch = "wasm32")));
}

#[test]
fn a_helper_takes_pieces_once_it_is_up() {
    if threads() == 1 || cfg!(target_arch = "wasm32") {
        return;
    }
    // pieces long enough for a helper to wake during them; asked again until one did, as a
    // helper's wake-up is the scheduler's to give
    let caller = std::thread::current().id();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (others, helped) = with_helpers(|| {
            let ran = map(&(0..64).collect::<Vec<usize>>(), |_| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                std::thread::current().id()
            });
            ran.iter().filter(|&&id| id != caller).count()
        });
        if helped && others > 0 {
            return;
        }
        assert!(std::time::Instant::now() < until, "no helper took a piece in a minute of asking");
    }
}

#[test]
fn a_batchs_row_left_over_from_a_whole_round_runs_on_the_caller() {
    if threads() == 1 || cfg!(target_arch = "wasm32") {
        return;
    }
    // one round of a row a thread, then one row left over. The caller's first row is slow, so
    // a helper that is up takes every other row of the round and, given out as pieces, would
    // take the last too; `map_batch` runs it on the caller, after the round. Asked again until
    // a helper took a row, as a helper's wake-up is the scheduler's to give.
    let n = threads();
    let caller = std::thread::current().id();
    let rows: Vec<usize> = (0..=n).collect();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (ran, helped) = with_helpers(|| {
            map_batch(&rows, |&i| {
                std::thread::sleep(std::time::Duration::from_millis(if i == 0 { 30 } else { 1 }));
                (i, std::thread::current().id())
            })
        });
        assert_eq!(ran.iter().map(|r| r.0).collect::<Vec<_>>(), rows);
        if helped && ran[..n].iter().any(|r| r.1 != caller) {
            assert_eq!(ran[n].1, caller, "the row left over ran on a helper");
            return;
        }
        assert!(std::time::Instant::now() < until, "no helper took a row in a minute of asking");
    }
}
