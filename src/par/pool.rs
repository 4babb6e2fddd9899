//! The threads of the `hf` builds: rayon's pool, natively and in the threaded wasm build.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

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

/// One round of waiting for another thread, awake: a pause, and every 64th round this core
/// offered to any thread the system has waiting for it. The thread waited for may be that
/// one: a helper the scheduler woke on its caller's core, which spinning alone would keep off
/// the core until the next tick (milliseconds). MiniLM at 16 tokens on two threads, each
/// forward after 20 ms idle beside other engines' processes, took 1.86 of one thread's time
/// before, and 0.97 after (`docs/perf-notes.md`).
fn pause(rounds: &mut u32) {
    *rounds = rounds.wrapping_add(1);
    if rounds.is_multiple_of(64) {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

/// Sets its flag to its value when dropped, even when the work panics: the next forward may
/// have the helpers.
struct Reset<'a>(&'a AtomicBool, bool);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        self.0.store(self.1, Ordering::Release);
    }
}

pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    if items.len() < 2 || threads() == 1 || helping() {
        return items.iter().map(f).collect();
    }
    if let Some(desk) = desk() {
        return desk.map(items.iter().collect(), f);
    }
    items.par_iter().map(f).collect()
}

pub fn map_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
    if items.len() < 2 || threads() == 1 || helping() {
        return items.into_iter().map(f).collect();
    }
    if let Some(desk) = desk() {
        return desk.map(items, f);
    }
    items.into_par_iter().map(f).collect()
}

pub fn each<T: Send>(items: Vec<T>, f: impl Fn(T) + Sync + Send) {
    if helping() {
        return items.into_iter().for_each(f);
    }
    if let Some(desk) = desk() {
        desk.map(items, f);
        return;
    }
    items.into_par_iter().for_each(f);
}

/// The value behind `m`, also after a panic elsewhere (the panic itself is raised again).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `f` on this thread, with the pool's other threads asked to help with the pieces it splits
/// ([`each`], [`map`]) as they come. A helper that has not woken yet costs nothing: this
/// thread takes every piece left, so the work never waits on a sleeping thread, and once a
/// helper is up the splits pay. While the work runs, the helpers wait for pieces awake.
pub fn beside<R>(f: impl FnOnce() -> R) -> R {
    let threads = threads();
    if rayon::current_thread_index().is_some() || threads == 1 || AWAKE.swap(true, Ordering::AcqRel) {
        return f();
    }
    let _awake = Reset(&AWAKE, false);
    let desk = Arc::new(Desk::default());
    for _ in 1..threads {
        let desk = Arc::clone(&desk);
        rayon::spawn(move || desk.help());
    }
    let _left = Leave(Arc::clone(&desk));
    DESK.with(|d| d.replace(Some(desk)));
    f()
}

thread_local! {
    /// The desk where this thread posts the pieces it splits, while it runs [`beside`].
    static DESK: RefCell<Option<Arc<Desk>>> = const { RefCell::new(None) };
    /// Whether this thread helps at a desk ([`Desk::help`]).
    static HELPING: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread runs work with helpers ([`beside`]): its splits then cost nothing when
/// no helper is awake, so smaller work splits.
pub fn helped() -> bool {
    DESK.with(|d| d.borrow().is_some())
}

/// Whether this thread is a helper, in a piece of another thread's work: the piece's own
/// splits then run here in turn. The other threads are helping too or the poster; asked to
/// wait for the pool, a helper could run another desk's help loop inside its piece, which
/// would wait for the desk to close while the desk waits for the piece.
pub fn helping() -> bool {
    HELPING.with(Cell::get)
}

/// Where a thread running [`beside`] posts a batch of pieces and its helpers find it.
#[derive(Default)]
struct Desk {
    /// The posted batch and its round, if any: a helper counts itself in under the lock, so
    /// before the poster can take it back, and works on each round once.
    posted: Mutex<Option<(Posted, usize)>>,
    /// Batches posted so far: the round of the next is one more.
    rounds: AtomicUsize,
    /// The posted batch's round, read by the helpers without the lock: one that finished it
    /// waits without taking the lock the poster needs to take it back.
    round: AtomicUsize,
    /// Whether a batch is posted, read by the helpers without the lock while they wait.
    open: AtomicBool,
    /// Set when the work ends: the helpers go back to the pool.
    closed: AtomicBool,
}

/// A batch on the desk: it lives on the poster's stack until every helper counted in it left.
#[derive(Clone, Copy)]
struct Posted(*const Batch<'static>);

// SAFETY: the batch is only read while its poster waits for it (`Desk::share`), and its
// pieces are `Sync`
unsafe impl Send for Posted {}

/// Pieces 0..len, each run once by whoever takes it first.
struct Batch<'a> {
    len: usize,
    next: AtomicUsize,
    run: &'a (dyn Fn(usize) + Sync),
    /// Helpers inside the batch: the poster returns only when none is.
    helpers: AtomicUsize,
    /// A helper's panic, raised again on the poster's thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Batch<'_> {
    /// Runs pieces until none is left.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.len {
                return;
            }
            (self.run)(i);
        }
    }
}

impl Desk {
    /// A helper's loop: waits awake for batches and works on them until the desk closes.
    fn help(&self) {
        if helping() {
            // run by a helper waiting inside its own piece: help there and not here
            return;
        }
        HELPING.with(|h| h.set(true));
        let _helping = Unhelp;
        let (mut last, mut rounds) = (0, 0);
        while !self.closed.load(Ordering::Acquire) {
            if !self.open.load(Ordering::Acquire) || self.round.load(Ordering::Acquire) == last {
                pause(&mut rounds);
                continue;
            }
            let batch = {
                let posted = lock(&self.posted);
                let Some((Posted(batch), round)) = *posted else { continue };
                if round == last {
                    // done with it, and its poster is finishing its last piece
                    drop(posted);
                    pause(&mut rounds);
                    continue;
                }
                last = round;
                // SAFETY: counted in `helpers` under the lock while still posted, so its
                // poster waits for this helper before the batch goes
                let batch = unsafe { &*batch };
                batch.helpers.fetch_add(1, Ordering::Relaxed);
                batch
            };
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| batch.work()));
            if let Err(payload) = ran {
                batch.next.store(batch.len, Ordering::Relaxed);
                lock(&batch.panic).get_or_insert(payload);
            }
            batch.helpers.fetch_sub(1, Ordering::Release);
        }
    }

    /// `f` over `items`, in order, each item a piece for this thread or a helper ([`Desk::share`]).
    fn map<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
        let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
        let made: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
        self.share(items.len(), &|i| {
            let item = lock(&items[i]).take();
            if let Some(item) = item {
                *lock(&made[i]) = Some(f(item));
            }
        });
        // `share` ran every piece, or raised a piece's panic before this
        made.into_iter().map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every piece ran")).collect()
    }

    /// Runs `run` on pieces 0..len, with the helpers that come while this thread works on them.
    fn share(&self, len: usize, run: &(dyn Fn(usize) + Sync)) {
        let batch =
            Batch { len, next: AtomicUsize::new(0), run, helpers: AtomicUsize::new(0), panic: Mutex::new(None) };
        // SAFETY: only the lifetime is forgotten; `Unpost` takes the batch back and waits for
        // every helper in it before it goes, even when a piece panics here
        let posted = Posted(unsafe { std::mem::transmute::<*const Batch<'_>, *const Batch<'static>>(&batch) });
        let round = self.rounds.fetch_add(1, Ordering::Relaxed) + 1;
        *lock(&self.posted) = Some((posted, round));
        self.round.store(round, Ordering::Release);
        self.open.store(true, Ordering::Release);
        let unpost = Unpost(self, &batch);
        batch.work();
        drop(unpost);
        let panicked = lock(&batch.panic).take();
        if let Some(payload) = panicked {
            std::panic::resume_unwind(payload);
        }
    }
}

/// Takes a batch off the desk when dropped and waits until no helper is in it.
struct Unpost<'a>(&'a Desk, &'a Batch<'a>);

impl Drop for Unpost<'_> {
    fn drop(&mut self) {
        // after a panic here, no helper starts another piece
        self.1.next.store(self.1.len, Ordering::Relaxed);
        self.0.open.store(false, Ordering::Release);
        *lock(&self.0.posted) = None;
        let mut rounds = 0;
        while self.1.helpers.load(Ordering::Acquire) > 0 {
            pause(&mut rounds);
        }
    }
}

/// Marks the thread as no longer helping when its help loop ends.
struct Unhelp;

impl Drop for Unhelp {
    fn drop(&mut self) {
        HELPING.with(|h| h.set(false));
    }
}

/// Closes a desk when its work ends and takes it off the thread.
struct Leave(Arc<Desk>);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        DESK.with(|d| d.replace(None));
    }
}

/// The desk of this thread's [`beside`], if it runs one.
fn desk() -> Option<Arc<Desk>> {
    DESK.with(|d| d.borrow().clone())
}
