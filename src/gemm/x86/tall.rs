//! Each kernel's tallest tile in instructions written out: AVX-512's 12 rows × 32 columns and
//! AVX2's 6 rows × 16.
//!
//! Written with intrinsics the compiler computed each row's address of `x` from the last one,
//! a chain of additions a step (eleven for AVX-512) beside the step's broadcasts and
//! multiply–adds, on the ports the multiply–adds use; told to keep four base pointers, it
//! kept twelve and spilled the sums to the stack. Here each row's value is one address: a base
//! pointer (rows 0, 3, 6, 9), the row stride once or twice, and the step as a constant, four
//! steps a pass, so a step is 2 loads of `w`, a broadcast a row and two multiply–adds a row,
//! and a pass adds a few instructions. Each sum still takes the steps of `k` in order, one
//! multiply–add each: the bits are the intrinsic tiles'.

use std::arch::x86_64::{__m256, __m512};

/// Row r's broadcast into `$t` and its two multiply–adds into `$c0` and `$c1`: the value at
/// `$at + $d` bytes, `w`'s row of the step in `$b0` and `$b1` (register names, "zmm24").
macro_rules! row {
    ([$b0:literal, $b1:literal, $t:literal], $c0:literal, $c1:literal, $at:literal, $d:literal) => {
        concat!(
            "vbroadcastss ",
            $t,
            ", dword ptr [",
            $at,
            " + ",
            $d,
            "]\n",
            "vfmadd231ps ",
            $c0,
            ", ",
            $b0,
            ", ",
            $t,
            "\n",
            "vfmadd231ps ",
            $c1,
            ", ",
            $b1,
            ", ",
            $t,
            "\n",
        )
    };
}

/// One step of `k` of the 12-row tile, `$d` bytes into the rows of `x`, `$b` bytes into the
/// strip of `w`.
macro_rules! step12 {
    ($d:literal, $b:literal) => {
        concat!(
            "vmovups zmm24, zmmword ptr [{pb} + ",
            $b,
            "]\n",
            "vmovups zmm25, zmmword ptr [{pb} + ",
            $b,
            " + 64]\n",
            row!(["zmm24", "zmm25", "zmm26"], "zmm0", "zmm1", "{a0}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm2", "zmm3", "{a0} + {s}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm4", "zmm5", "{a0} + {s}*2", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm6", "zmm7", "{a1}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm8", "zmm9", "{a1} + {s}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm10", "zmm11", "{a1} + {s}*2", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm12", "zmm13", "{a2}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm14", "zmm15", "{a2} + {s}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm16", "zmm17", "{a2} + {s}*2", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm18", "zmm19", "{a3}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm20", "zmm21", "{a3} + {s}", $d),
            row!(["zmm24", "zmm25", "zmm26"], "zmm22", "zmm23", "{a3} + {s}*2", $d),
        )
    };
}

/// One step of `k` of the 6-row tile, as [`step12`].
macro_rules! step6 {
    ($d:literal, $b:literal) => {
        concat!(
            "vmovups ymm12, ymmword ptr [{pb} + ",
            $b,
            "]\n",
            "vmovups ymm13, ymmword ptr [{pb} + ",
            $b,
            " + 32]\n",
            row!(["ymm12", "ymm13", "ymm14"], "ymm0", "ymm1", "{a0}", $d),
            row!(["ymm12", "ymm13", "ymm14"], "ymm2", "ymm3", "{a0} + {s}", $d),
            row!(["ymm12", "ymm13", "ymm14"], "ymm4", "ymm5", "{a0} + {s}*2", $d),
            row!(["ymm12", "ymm13", "ymm14"], "ymm6", "ymm7", "{a1}", $d),
            row!(["ymm12", "ymm13", "ymm14"], "ymm8", "ymm9", "{a1} + {s}", $d),
            row!(["ymm12", "ymm13", "ymm14"], "ymm10", "ymm11", "{a1} + {s}*2", $d),
        )
    };
}

/// The loop of `$n` passes of the 12-row tile: the pass's steps, then each base pointer moved
/// `$bytes_x` bytes along the rows of `x` and the strip `$bytes_w` along `w`.
macro_rules! passes12 {
    ($c:ident, $a:ident, $s:ident, $pb:ident, $n:expr, $bytes_x:literal, $bytes_w:literal, $($body:expr),+) => {
        std::arch::asm!(
            "2:",
            $($body,)+
            concat!("add {a0}, ", $bytes_x),
            concat!("add {a1}, ", $bytes_x),
            concat!("add {a2}, ", $bytes_x),
            concat!("add {a3}, ", $bytes_x),
            concat!("add {pb}, ", $bytes_w),
            "dec {n}",
            "jnz 2b",
            a0 = inout(reg) $a[0], a1 = inout(reg) $a[1], a2 = inout(reg) $a[2], a3 = inout(reg) $a[3],
            s = in(reg) $s, pb = inout(reg) $pb, n = inout(reg) $n => _,
            inout("zmm0") $c[0][0], inout("zmm1") $c[0][1], inout("zmm2") $c[1][0], inout("zmm3") $c[1][1],
            inout("zmm4") $c[2][0], inout("zmm5") $c[2][1], inout("zmm6") $c[3][0], inout("zmm7") $c[3][1],
            inout("zmm8") $c[4][0], inout("zmm9") $c[4][1], inout("zmm10") $c[5][0], inout("zmm11") $c[5][1],
            inout("zmm12") $c[6][0], inout("zmm13") $c[6][1], inout("zmm14") $c[7][0], inout("zmm15") $c[7][1],
            inout("zmm16") $c[8][0], inout("zmm17") $c[8][1], inout("zmm18") $c[9][0], inout("zmm19") $c[9][1],
            inout("zmm20") $c[10][0], inout("zmm21") $c[10][1], inout("zmm22") $c[11][0], inout("zmm23") $c[11][1],
            out("zmm24") _, out("zmm25") _, out("zmm26") _,
            options(nostack, readonly),
        )
    };
}

/// [`passes12`] for the 6-row tile: two base pointers.
macro_rules! passes6 {
    ($c:ident, $a:ident, $s:ident, $pb:ident, $n:expr, $bytes_x:literal, $bytes_w:literal, $($body:expr),+) => {
        std::arch::asm!(
            "2:",
            $($body,)+
            concat!("add {a0}, ", $bytes_x),
            concat!("add {a1}, ", $bytes_x),
            concat!("add {pb}, ", $bytes_w),
            "dec {n}",
            "jnz 2b",
            a0 = inout(reg) $a[0], a1 = inout(reg) $a[1],
            s = in(reg) $s, pb = inout(reg) $pb, n = inout(reg) $n => _,
            inout("ymm0") $c[0][0], inout("ymm1") $c[0][1], inout("ymm2") $c[1][0], inout("ymm3") $c[1][1],
            inout("ymm4") $c[2][0], inout("ymm5") $c[2][1], inout("ymm6") $c[3][0], inout("ymm7") $c[3][1],
            inout("ymm8") $c[4][0], inout("ymm9") $c[4][1], inout("ymm10") $c[5][0], inout("ymm11") $c[5][1],
            out("ymm12") _, out("ymm13") _, out("ymm14") _,
            options(nostack, readonly),
        )
    };
}

/// `kc` steps of `k` into the sums `c` of 12 rows: the rows of `x` from `a` on (`x_row`
/// floats apart, values side by side) times a copied strip of `w` (kc rows of 32 floats).
///
/// # Safety
/// The CPU has AVX-512F; `a` holds 12 rows of kc values and `strip` kc × 32 floats.
#[target_feature(enable = "avx512f")]
#[allow(unused_assignments)] // the last passes move the pointers past the end, unread
pub(super) unsafe fn steps12(c: &mut [[__m512; 2]; 12], a: *const f32, x_row: usize, strip: *const f32, kc: usize) {
    let s = x_row * 4; // bytes
    let mut a = [0, 1, 2, 3].map(|j| a.wrapping_add(3 * j * x_row));
    let mut pb = strip;
    if kc >= 4 {
        passes12!(
            c,
            a,
            s,
            pb,
            kc / 4,
            "16",
            "512",
            step12!("0", "0"),
            step12!("4", "128"),
            step12!("8", "256"),
            step12!("12", "384")
        );
    }
    if !kc.is_multiple_of(4) {
        passes12!(c, a, s, pb, kc % 4, "4", "128", step12!("0", "0"));
    }
}

/// [`steps12`] for AVX2's 6 rows × 16 columns.
///
/// # Safety
/// The CPU has AVX2 and FMA; `a` holds 6 rows of kc values and `strip` kc × 16 floats.
#[target_feature(enable = "avx2,fma")]
#[allow(unused_assignments)] // the last passes move the pointers past the end, unread
pub(super) unsafe fn steps6(c: &mut [[__m256; 2]; 6], a: *const f32, x_row: usize, strip: *const f32, kc: usize) {
    let s = x_row * 4; // bytes
    let mut a = [a, a.wrapping_add(3 * x_row)];
    let mut pb = strip;
    if kc >= 4 {
        passes6!(
            c,
            a,
            s,
            pb,
            kc / 4,
            "16",
            "256",
            step6!("0", "0"),
            step6!("4", "64"),
            step6!("8", "128"),
            step6!("12", "192")
        );
    }
    if !kc.is_multiple_of(4) {
        passes6!(c, a, s, pb, kc % 4, "4", "64", step6!("0", "0"));
    }
}
