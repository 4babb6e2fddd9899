//! What a native process does with the memory a run frees. A run's weights are large — MiniLM's
//! at 512 tokens are 75 MB, 12.6 MB a layer — and glibc hands blocks that large back to the
//! system when they are freed, so the next run takes fresh pages, each faulted in and zeroed
//! by the kernel: about a third of a 512-token forward on one thread (`docs/perf-notes.md`).
//! The command line and the benches ask glibc to keep them instead, as onnxruntime's arena does.
//! A library does not change its host's allocator: the Python package leaves it as it is.

/// Blocks up to 32 MB (glibc's ceiling for this) come from the heap and stay there once freed,
/// up to 1 GB, for the next run to reuse. Elsewhere than glibc on Linux, nothing.
pub fn keep_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's thresholds; it is called before any thread starts
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
