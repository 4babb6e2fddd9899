//! Which kernel the products run on: the CPU's best instruction set, asked once a process.

use std::sync::OnceLock;

/// The kernel the products run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Avx512,
    Avx2,
    /// ndarray's product (matrixmultiply)
    Portable,
}

impl Kernel {
    /// Whether this CPU has the kernel's instruction set (the portable product: never, as it
    /// is what the kernels hand back to).
    pub fn available(self) -> bool {
        match self {
            Kernel::Avx512 => is_x86_feature_detected!("avx512f"),
            Kernel::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            Kernel::Portable => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Avx512 => "avx512",
            Kernel::Avx2 => "avx2",
            Kernel::Portable => "portable",
        }
    }
}

/// The kernel chosen for this process: the CPU's best, or the one `HEADMAP_GEMM` names if the
/// CPU has it.
pub fn kernel() -> Kernel {
    static CHOSEN: OnceLock<Kernel> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let best = [Kernel::Avx512, Kernel::Avx2].into_iter().find(|k| k.available()).unwrap_or(Kernel::Portable);
        match std::env::var("HEADMAP_GEMM").as_deref().map(str::trim) {
            Ok("portable") => Kernel::Portable,
            Ok("avx2") if Kernel::Avx2.available() => Kernel::Avx2,
            _ => best,
        }
    })
}
