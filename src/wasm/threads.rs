//! The threads of a real-model build: in the threaded one (`threads` feature,
//! www/pkg-hf-threads/) starting the pool of web workers and saying a panic on one of them; in
//! both, how many threads a forward may use.

use wasm_bindgen::prelude::*;

/// Starts `n` threads (web workers sharing this module's memory) for the forward; resolves
/// when they run. Only in the threaded build, on a cross-origin isolated page.
#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

/// In the threaded build, makes a panic on a thread of the pool say its message on the
/// BroadcastChannel `channel` (the page listens there) before the thread stops. That thread
/// aborts, so the thread waiting for its work would wait for ever: the page ends the worker and
/// says what stopped, as it does when the worker itself fails. So does a panic on the worker's
/// own thread while the pool's threads help it with a forward (`par::beside`): they would
/// wait for its next piece, awake, for ever.
#[cfg(feature = "threads")]
#[wasm_bindgen(js_name = reportThreadPanics)]
pub fn report_thread_panics(channel: String) {
    std::panic::set_hook(Box::new(move |info| {
        console_error_panic_hook::hook(info);
        if rayon::current_thread_index().is_some() || crate::par::helped() {
            if let Ok(c) = web_sys::BroadcastChannel::new(&channel) {
                let _ = c.post_message(&JsValue::from_str(&info.to_string()));
            }
        }
    }));
}

/// A deliberate panic on a thread of the pool, or (`abort`) an abort there, as running out of
/// memory aborts, without Rust's panic hook: what the browser tests of a thread that stops run.
#[cfg(feature = "threads")]
#[wasm_bindgen(js_name = panicOnAThread)]
pub fn panic_on_a_thread(abort: bool) {
    rayon::join(
        || (),
        || match abort {
            true => std::process::abort(),
            false => panic!("a deliberate panic on a thread of the pool (a test)"),
        },
    );
}

/// A deliberate panic on the worker's own thread, which stops the core as running out of memory
/// does (wasm's `unreachable`): what the browser test of the page starting afresh runs.
#[wasm_bindgen(js_name = panicHere)]
pub fn panic_here() {
    panic!("a deliberate panic on the worker's thread (a test)");
}

/// The threads a forward may use: 1 in the single-threaded build. In the threaded build ask
/// only after `initThreadPool`: asking first starts rayon's pool of one on this thread, and the
/// pool cannot be started again.
#[wasm_bindgen(js_name = threadCount)]
pub fn thread_count() -> usize {
    crate::par::threads()
}
