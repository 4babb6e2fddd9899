//! The AVX-512 kernel's tallest tile, 12 rows × 32 columns, in instructions written out.
//!
//! Written with intrinsics the compiler computed each row's address of `x` from the last one,
//! a chain of eleven additions a step beside the step's 12 broadcasts and 24 multiply–adds,
//! on the ports the multiply–adds use; told to keep four base pointers, it kept twelve and
//! spilled the sums to the stack. Here each row's value is one address: a base pointer
//! (rows 0, 3, 6, 9), the row stride once or twice, and the step as a constant, four steps a
//! pass, so a step is 2 loads of `w`, 12 broadcasts and 24 multiply–adds, and a pass adds 6
//! instructions. Each sum still takes the steps of `k` in order, one multiply–add each: the
//! bits are the intrinsic tiles'.

use std::arch::x86_64::__m512;

/// Row r's broadcast into zmm26 and its two multiply–adds into zmm`$c0` and zmm`$c1`: the
/// value at `$at + $d` bytes, `w`'s row of the step in zmm24 and zmm25.
macro_rules! row {
    ($c0:literal, $c1:literal, $at:literal, $d:literal) => {
        concat!(
            "vbroadcastss zmm26, dword ptr [",
            $at,
            " + ",
            $d,
            "]\n",
            "vfmadd231ps zmm",
            $c0,
            ", zmm24, zmm26\n",
            "vfmadd231ps zmm",
            $c1,
            ", zmm25, zmm26\n",
        )
    };
}

/// One step of `k`, `$d` bytes into the rows of `x`, `$b` bytes into the strip of `w`.
macro_rules! step {
    ($d:literal, $b:literal) => {
        concat!(
            "vmovups zmm24, zmmword ptr [{pb} + ",
            $b,
            "]\n",
            "vmovups zmm25, zmmword ptr [{pb} + ",
            $b,
            " + 64]\n",
            row!("0", "1", "{a0}", $d),
            row!("2", "3", "{a0} + {s}", $d),
            row!("4", "5", "{a0} + {s}*2", $d),
            row!("6", "7", "{a1}", $d),
            row!("8", "9", "{a1} + {s}", $d),
            row!("10", "11", "{a1} + {s}*2", $d),
            row!("12", "13", "{a2}", $d),
            row!("14", "15", "{a2} + {s}", $d),
            row!("16", "17", "{a2} + {s}*2", $d),
            row!("18", "19", "{a3}", $d),
            row!("20", "21", "{a3} + {s}", $d),
            row!("22", "23", "{a3} + {s}*2", $d),
        )
    };
}

/// `passes` passes of `$steps` steps, `$bytes_x` bytes along the rows of `x` and `$bytes_w`
/// along the strip each, on the sums `c`.
macro_rules! passes {
    ($c:ident, $a:ident, $s:ident, $pb:ident, $passes:expr, $bytes_x:literal, $bytes_w:literal, $($body:expr),+) => {
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
            a0 = inout(reg) $a[0],
            a1 = inout(reg) $a[1],
            a2 = inout(reg) $a[2],
            a3 = inout(reg) $a[3],
            s = in(reg) $s,
            pb = inout(reg) $pb,
            n = inout(reg) $passes => _,
            inout("zmm0") $c[0][0],
            inout("zmm1") $c[0][1],
            inout("zmm2") $c[1][0],
            inout("zmm3") $c[1][1],
            inout("zmm4") $c[2][0],
            inout("zmm5") $c[2][1],
            inout("zmm6") $c[3][0],
            inout("zmm7") $c[3][1],
            inout("zmm8") $c[4][0],
            inout("zmm9") $c[4][1],
            inout("zmm10") $c[5][0],
            inout("zmm11") $c[5][1],
            inout("zmm12") $c[6][0],
            inout("zmm13") $c[6][1],
            inout("zmm14") $c[7][0],
            inout("zmm15") $c[7][1],
            inout("zmm16") $c[8][0],
            inout("zmm17") $c[8][1],
            inout("zmm18") $c[9][0],
            inout("zmm19") $c[9][1],
            inout("zmm20") $c[10][0],
            inout("zmm21") $c[10][1],
            inout("zmm22") $c[11][0],
            inout("zmm23") $c[11][1],
            out("zmm24") _,
            out("zmm25") _,
            out("zmm26") _,
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
pub(super) unsafe fn steps(c: &mut [[__m512; 2]; 12], a: *const f32, x_row: usize, strip: *const f32, kc: usize) {
    let s = x_row * 4; // bytes
    let mut a = [0, 1, 2, 3].map(|j| a.wrapping_add(3 * j * x_row));
    let mut pb = strip;
    if kc >= 4 {
        passes!(
            c,
            a,
            s,
            pb,
            kc / 4,
            "16",
            "512",
            step!("0", "0"),
            step!("4", "128"),
            step!("8", "256"),
            step!("12", "384")
        );
    }
    if !kc.is_multiple_of(4) {
        passes!(c, a, s, pb, kc % 4, "4", "128", step!("0", "0"));
    }
}
