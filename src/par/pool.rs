//! The threads of the `hf` builds: rayon's pool, natively and in the threaded wasm build.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use rayon::prelude::*;

use crate::error::{Error, Result};

static FROM_ENV: Once = Once::new();

/// Natively the first call sizes the global pool from `HEADMAP_THREADS`, if set.
fn start() {
    #[cfg(not(target_arch = "wasm32"))]
    FROM_ENV.call_once(|| {
        // 0, or a value that is not a number, leaves rayon's default: every core
        if let Some(n) = std::env::var("HEADMAP_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
            // an error means the pool already runs (someone sized it first): that count stands
            let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
        }
    });
    #[cfg(target_arch = "wasm32")]
    FROM_ENV.call_once(|| {});
}

pub fn threads() -> usize {
    // wasm without atomics has no threads, and rayon's pool there is the page's own thread
    if cfg!(all(target_arch = "wasm32", not(target_feature = "atomics"))) {
        return 1;
    }
    start();
    rayon::current_num_threads()
}

pub fn set_threads(n: usize) -> Result<()> {
    let n = n.max(1);
    let mut refused = None;
    FROM_ENV.call_once(|| {
        refused = rayon::ThreadPoolBuilder::new().num_threads(n).build_global().err().map(|e| e.to_string());
    });
    match refused {
        Some(reason) => Err(Error::Thread { reason }),
        None if rayon::current_num_threads() != n => Err(Error::Thread {
            reason: format!("the thread pool already runs {} threads", rayon::current_num_threads()),
        }),
        None => Ok(()),
    }
}

/// Whether a forward keeps the pool's threads awake now: one at a time does.
static AWAKE: AtomicBool = AtomicBool::new(false);

pub fn inside<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let outside = rayon::current_thread_index().is_none();
    let threads = threads();
    if !outside || threads == 1 || AWAKE.swap(true, Ordering::AcqRel) {
        return f();
    }
    let _awake = Reset(&AWAKE, false);
    // a scope runs its body on a pool thread when called from outside the pool; the pool's
    // other threads wait for work awake until the body ends
    let done = AtomicBool::new(false);
    rayon::scope(|s| {
        for _ in 1..threads {
            s.spawn(|_| keep_busy(&done));
        }
        let _ended = Reset(&done, true);
        f()
    })
}

/// Runs the pool's work as it comes until `done`, never sleeping. A rayon thread with
/// nothing to do soon sleeps, and on this machine waking it again cost more than a split of
/// a layer is worth once the process had been idle: MiniLM at 512 tokens on two threads after
/// 300 ms idle took 72 ms, one thread's time, and 40 ms with the threads kept awake
/// (`docs/perf-notes.md`).
fn keep_busy(done: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            std::hint::spin_loop();
        }
    }
}

/// Sets its flag to its value when dropped, even when the work panics: the busy threads
/// stop, and the next forward may keep them awake.
struct Reset<'a>(&'a AtomicBool, bool);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        self.0.store(self.1, Ordering::Release);
    }
}

pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    if items.len() < 2 || threads() == 1 {
        return items.iter().map(f).collect();
    }
    items.par_iter().map(f).collect()
}

pub fn each<T: Send>(items: Vec<T>, f: impl Fn(T) + Sync + Send) {
    items.into_par_iter().for_each(f);
}
