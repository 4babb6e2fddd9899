//! The few functions of f32 the forward pass applies to every score and activation, written
//! without branches so the compiler turns each loop over them into SIMD (wasm simd128, SSE or
//! AVX natively), where libm's scalar `expf` and `erff` cost a call per value.
//!
//! Softmax gives `exp` arguments that are never positive (a score minus its row's largest), so
//! [`exp_neg`] is written for x ≤ 0 only.

use std::mem::MaybeUninit;

/// Values processed side by side: one wasm `v128`, two SSE or one AVX register natively (where
/// two accumulators also hide the adds' latency).
#[cfg(target_arch = "wasm32")]
pub const LANES: usize = 4;
#[cfg(not(target_arch = "wasm32"))]
pub const LANES: usize = 8;

/// e^x for x ≤ 0, within 2 ulp of the exact value; 0 below ln 2⁻¹²⁶ (where e^x would be a
/// subnormal f32) and at −∞, so a hidden key's weight is exactly 0.
///
/// e^x = 2ⁿ · eʳ with n = round(x / ln 2) and |r| ≤ ln 2 / 2: r is taken off in two parts
/// (Cody and Waite), eʳ is 1 + r + r²·P(r) with Cephes' degree-5 P for `expf`, and 2ⁿ is built
/// from its bits.
#[inline(always)]
pub fn exp_neg(x: f32) -> f32 {
    const LOWEST: f32 = -87.336_54; // ln 2⁻¹²⁶
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // adding 1.5·2²³ rounds to an integer, which then sits in the low bits of the mantissa
    const ROUNDER: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4; // 9 significant bits: n·LN2_HI is exact
    const LN2_LO: f32 = -2.121_944_4e-4;
    let clamped = if x < LOWEST { LOWEST } else { x };
    let shifted = clamped * LOG2_E + ROUNDER;
    let n = shifted - ROUNDER; // an integer in -126..=0
    let r = (clamped - n * LN2_HI) - n * LN2_LO;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let e_r = p * (r * r) + r + 1.0;
    // n's low 9 bits moved into the exponent field, plus the bias 127: the f32 2ⁿ
    let two_n = f32::from_bits((shifted.to_bits() << 23).wrapping_add(127 << 23));
    if x < LOWEST {
        0.0
    } else {
        e_r * two_n
    }
}

/// erf(x) within 5·10⁻⁷ of the exact value for every x (libm's `erff`: 1 ulp; GELU's output
/// moves by at most 10⁻⁶).
///
/// x·P(x²)/Q(x²) for |x| ≤ 3.92, a rational fit of degrees 6 and 4 in x² made for headmap
/// (iteratively reweighted least squares towards the smallest largest error, checked in f32);
/// beyond 3.92, erf rounds to ±1 in f32.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const EDGE: f32 = 3.92;
    let x = x.clamp(-EDGE, EDGE); // a NaN stays a NaN
    let t = x * x;
    let p = 1.99209e-8;
    let p = p * t - 1.994_313_8e-6;
    let p = p * t + 1.489_951_4e-4;
    let p = p * t + 3.973_267e-3;
    let p = p * t + 5.139_848e-2;
    let p = p * t + 2.061_231_6e-1;
    let p = p * t + 1.128_378_7;
    let q = 1.024_212_7e-3;
    let q = q * t + 1.488_998_6e-2;
    let q = q * t + 1.175_682_7e-1;
    let q = q * t + 5.160_006e-1;
    let q = q * t + 1.0;
    let y = x * p / q;
    y.clamp(-1.0, 1.0) // near ±3.92 the fit rounds a hair past ±1
}

/// The two loops above compiled again for wider vectors, natively on x86-64: the portable
/// build has only SSE2's 4 lanes, and most x86-64 CPUs have AVX2 (8) or AVX-512 (16). Every
/// lane runs the same IEEE operations (no fused multiply-add is formed), so each version gives
/// the same bits.
#[cfg(target_arch = "x86_64")]
mod x86 {
    #[derive(Clone, Copy)]
    pub enum Simd {
        Sse2,
        Avx2,
        Avx512,
    }

    /// The widest vectors this CPU has (std caches the CPUID answers).
    pub fn widest() -> Simd {
        if std::arch::is_x86_feature_detected!("avx512f") {
            Simd::Avx512
        } else if std::arch::is_x86_feature_detected!("avx2") {
            Simd::Avx2
        } else {
            Simd::Sse2
        }
    }

    #[target_feature(enable = "avx512f")]
    pub fn exp_sum_avx512(xs: &mut [f32], shift: f32) -> f32 {
        super::exp_sum_each(xs, shift)
    }

    #[target_feature(enable = "avx2")]
    pub fn exp_sum_avx2(xs: &mut [f32], shift: f32) -> f32 {
        super::exp_sum_each(xs, shift)
    }

    #[target_feature(enable = "avx512f")]
    pub fn exp_total_avx512(xs: &[f32], shift: f32) -> f64 {
        super::exp_total_each(xs, shift)
    }

    #[target_feature(enable = "avx2")]
    pub fn exp_total_avx2(xs: &[f32], shift: f32) -> f64 {
        super::exp_total_each(xs, shift)
    }

    #[target_feature(enable = "avx512f")]
    pub fn gelu_avx512(xs: &mut [f32]) {
        super::gelu_each(xs)
    }

    #[target_feature(enable = "avx2")]
    pub fn gelu_avx2(xs: &mut [f32]) {
        super::gelu_each(xs)
    }
}

/// The largest value of `xs`, −∞ for none; `xs` holds no NaN.
pub fn max(xs: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for i in 0..LANES {
            lanes[i] = if chunk[i] > lanes[i] { chunk[i] } else { lanes[i] };
        }
    }
    rest.iter().chain(&lanes).fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m })
}

/// Replaces each x by e^(x − `shift`) (x ≤ `shift`) and returns their sum.
pub fn exp_sum(xs: &mut [f32], shift: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    match x86::widest() {
        // SAFETY: widest() found these instructions on this CPU
        x86::Simd::Avx512 => return unsafe { x86::exp_sum_avx512(xs, shift) },
        x86::Simd::Avx2 => return unsafe { x86::exp_sum_avx2(xs, shift) },
        x86::Simd::Sse2 => {}
    }
    exp_sum_each(xs, shift)
}

#[inline(always)]
fn exp_sum_each(xs: &mut [f32], shift: f32) -> f32 {
    // a plain loop, which the compiler vectorises whole; the sum is a second pass in cache
    for x in xs.iter_mut() {
        *x = exp_neg(*x - shift);
    }
    sum(xs)
}

/// The sum of e^(x − `shift`) over `xs` (x ≤ `shift`), each exp in f32, runs of 256 of them
/// summed in f32 and those sums in f64: a softmax's denominator over a whole vocabulary, which
/// one f32 sum would round, without writing the exps anywhere.
pub fn exp_total(xs: &[f32], shift: f32) -> f64 {
    #[cfg(target_arch = "x86_64")]
    match x86::widest() {
        // SAFETY: widest() found these instructions on this CPU
        x86::Simd::Avx512 => return unsafe { x86::exp_total_avx512(xs, shift) },
        x86::Simd::Avx2 => return unsafe { x86::exp_total_avx2(xs, shift) },
        x86::Simd::Sse2 => {}
    }
    exp_total_each(xs, shift)
}

#[inline(always)]
fn exp_total_each(xs: &[f32], shift: f32) -> f64 {
    // blocks of 256 exps written to the stack by a plain loop (which vectorises, as in
    // exp_sum) and summed in f32; the blocks' sums added in f64
    let mut exps = [0.0f32; 256];
    xs.chunks(exps.len()).fold(0.0, |total, block| {
        let exps = &mut exps[..block.len()];
        for (e, &x) in exps.iter_mut().zip(block) {
            *e = exp_neg(x - shift);
        }
        total + sum(exps) as f64
    })
}

/// GELU in place, x·Φ(x) = x/2 · (1 + erf(x/√2)), with [`erf`].
pub fn gelu(xs: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    match x86::widest() {
        // SAFETY: widest() found these instructions on this CPU
        x86::Simd::Avx512 => return unsafe { x86::gelu_avx512(xs) },
        x86::Simd::Avx2 => return unsafe { x86::gelu_avx2(xs) },
        x86::Simd::Sse2 => {}
    }
    gelu_each(xs)
}

#[inline(always)]
fn gelu_each(xs: &mut [f32]) {
    for x in xs.iter_mut() {
        *x = gelu_one(*x);
    }
}

/// GELU of one value.
#[inline(always)]
pub fn gelu_one(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The sum of `xs`, added lane by lane so the loop vectorises (the order is fixed: the same
/// values always give the same sum).
pub fn sum(xs: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for i in 0..LANES {
            lanes[i] += chunk[i];
        }
    }
    rest.iter().chain(&lanes).fold(0.0, |s, &x| s + x)
}

/// `dst = src · by`, and whether every value of `src` is finite, with the largest product:
/// a row of scores scaled, checked and measured for softmax in one pass, written into values
/// that may not have been written before.
pub fn scale_into(dst: &mut [MaybeUninit<f32>], src: &[f32], by: f32) -> (bool, f32) {
    let mut finite = [0.0f32; LANES];
    let mut max = [f32::NEG_INFINITY; LANES];
    let (d_chunks, s_chunks) = (dst.chunks_exact_mut(LANES), src.chunks_exact(LANES));
    let at = src.len() - s_chunks.remainder().len();
    for (d, s) in d_chunks.zip(s_chunks) {
        for i in 0..LANES {
            let v = s[i] * by;
            finite[i] += s[i] * 0.0;
            max[i] = if v > max[i] { v } else { max[i] };
            d[i].write(v);
        }
    }
    for (d, &s) in dst[at..].iter_mut().zip(&src[at..]) {
        let v = s * by;
        finite[0] += s * 0.0;
        max[0] = if v > max[0] { v } else { max[0] };
        d.write(v);
    }
    let finite = finite.iter().fold(0.0f32, |s, &x| s + x) == 0.0;
    (finite, max.iter().fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m }))
}

/// Whether every value is finite: x·0 is 0 for a finite x and NaN for ±∞ or NaN, and a sum of
/// them needs no branch.
pub fn all_finite(xs: &[f32]) -> bool {
    let mut lanes = [0.0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for i in 0..LANES {
            lanes[i] += chunk[i] * 0.0;
        }
    }
    rest.iter().chain(&lanes).fold(0.0f32, |s, &x| s + x * 0.0) == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between an f32 and the exact (f64) value.
    fn ulps(got: f32, want: f64) -> f64 {
        let want32 = want as f32;
        let ulp = (f32::from_bits(want32.to_bits() + 1) - want32) as f64;
        (got as f64 - want).abs() / ulp
    }

    #[test]
    fn exp_is_within_2_ulp_of_the_exact_value_for_every_argument_it_gets() {
        let mut worst = (0.0f64, 0.0f32);
        // every 97th f32 from -0 down to -87.33 (negative floats' bits grow with magnitude)
        let (zero, lowest) = ((-0.0f32).to_bits(), (-87.33f32).to_bits());
        for bits in (zero..=lowest).step_by(97) {
            let x = f32::from_bits(bits);
            let u = ulps(exp_neg(x), (x as f64).exp());
            if u > worst.0 {
                worst = (u, x);
            }
        }
        assert!(worst.0 <= 2.0, "exp({}) is {} ulp off", worst.1, worst.0);
        assert_eq!(exp_neg(0.0), 1.0, "a row's largest score gets exactly e⁰ = 1");
        assert_eq!(exp_neg(-0.0), 1.0);
        assert_eq!(exp_neg(f32::NEG_INFINITY), 0.0, "a hidden key gets exactly 0");
        assert_eq!(exp_neg(-100.0), 0.0);
        assert_eq!(exp_neg(-1.0), (-1.0f32).exp());
    }

    #[test]
    fn erf_is_within_5e_7_of_the_exact_value() {
        let mut worst = (0.0f64, 0.0f32);
        for i in -600_000..=600_000 {
            let x = i as f32 * 1e-5; // -6 ..= 6
            let d = (erf(x) as f64 - libm::erf(x as f64)).abs();
            if d > worst.0 {
                worst = (d, x);
            }
        }
        assert!(worst.0 <= 5e-7, "erf({}) is {:e} off", worst.1, worst.0);
        assert_eq!((erf(0.0), erf(10.0), erf(-10.0), erf(f32::INFINITY)), (0.0, 1.0, -1.0, 1.0));
        assert!(erf(f32::NAN).is_nan(), "a NaN stays a NaN for the finite checks to find");
    }

    #[test]
    fn a_vocabulary_sized_exp_total_is_within_3e_7_of_the_exact_sum() {
        // 250,002 logits (XLM-R's vocabulary) spread over −40..0, in any length's remainder
        for n in [0usize, 3, 250_002] {
            let xs: Vec<f32> = (0..n).map(|i| -((i * 7919 % 4001) as f32) * 0.01).collect();
            let want: f64 = xs.iter().map(|&x| (x as f64).exp()).sum();
            let got = exp_total(&xs, 0.0);
            assert!((got - want).abs() <= 2.5e-7 * want.max(1.0), "{n} terms: {got} vs {want}");
            let each: f64 = xs.iter().map(|&x| exp_neg(x) as f64).sum();
            assert!((got - each).abs() <= 2e-7 * want.max(1.0), "the same exps as one by one");
        }
        assert_eq!(exp_total(&[0.0, f32::NEG_INFINITY], 0.0), 1.0, "a hidden token adds 0");
    }

    #[test]
    fn max_sum_and_finite_see_every_value() {
        for n in [0usize, 1, 7, 8, 9, 31] {
            let mut xs: Vec<f32> = (0..n).map(|i| -(i as f32) * 0.25).collect();
            xs.reverse();
            assert_eq!(max(&xs), if n == 0 { f32::NEG_INFINITY } else { 0.0 }, "max of {n}");
            assert!(all_finite(&xs));
            let want: f64 = xs.iter().map(|&x| (x as f64).exp()).sum();
            let got = exp_sum(&mut xs, 0.0);
            assert!((got as f64 - want).abs() <= 1e-6 * want.max(1.0), "sum of {n}: {got} vs {want}");
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                if n > 0 {
                    let mut ys = xs.clone();
                    ys[n - 1] = bad;
                    assert!(!all_finite(&ys), "{bad} among {n}");
                }
            }
        }
    }
}
