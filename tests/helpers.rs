//! A forward on a pool of three threads: the caller and two helpers (`par::beside`), where
//! the tests of `src/par` and `tests/threads.rs` have this machine's two. A piece a helper
//! takes can split again; those splits run on the helper in turn, and a helper never waits for
//! the pool inside its piece, where it could take up the second helper's loop and wait for the
//! work to end while the work waits for its piece (`par::helping`). That wait needs rayon to
//! hand the helper the second loop at the wrong moment, which this test cannot force: it holds
//! the bits and that twenty forwards end, and the guard holds the rest by construction.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use headmap::{par, Request};

#[test]
fn a_padded_batch_split_everywhere_ends_on_three_threads_with_one_threads_bits() {
    par::set_threads(3).expect("this test's process sizes its own pool");
    par::split_everything(true);
    let model = common::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2"));
    // four rows of unequal length on three threads: the first three go out as one round of
    // pieces (the caller's rows' products, heads and norms split again, a helper's run on it
    // in turn), the fourth runs on the caller split over both helpers (`par::map_batch`)
    let request = Request {
        texts: vec![
            "the cat sat on the mat".into(),
            "a short text beside a longer one, padded".into(),
            "three".into(),
            "and a fourth row, left over after the round of three".into(),
        ],
        ..Request::default()
    };
    let bits = |run: headmap::Run| -> Vec<u32> {
        let rows = run.places.iter().flat_map(|p| &p.rows);
        rows.flat_map(|r| r.weights().unwrap().iter().map(|w| w.to_bits()).collect::<Vec<_>>()).collect()
    };
    let one = par::pool(1).unwrap().install(|| model.run(&request).map(bits)).unwrap();
    let (send, got) = mpsc::channel();
    std::thread::spawn(move || {
        let runs: Vec<_> = (0..20).map(|_| model.run(&request).map(bits)).collect();
        let _ = send.send(runs);
    });
    let runs = got.recv_timeout(Duration::from_secs(300)).expect("20 short forwards beside three threads ended");
    for (i, run) in runs.into_iter().enumerate() {
        assert!(run.unwrap() == one, "forward {i} beside three threads differs from one thread");
    }
}
