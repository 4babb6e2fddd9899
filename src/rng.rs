//! Deterministic numbers for the toy model.
//!
//! The toy's weights must be the same on every machine and in every future version, so a
//! shared link shows the same heatmap. A fixed, tiny generator (SplitMix64) and a fixed hash
//! (FNV-1a) guarantee that; a crate's generator may change its stream between releases.

/// SplitMix64 (Steele, Lea and Flood, 2014).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A generator for one named tensor: its stream depends only on the seed and the name, so
    /// adding a layer leaves every other layer's weights as they were.
    pub fn for_name(seed: u64, name: &str) -> Self {
        SplitMix64(fnv1a(seed, name.as_bytes()))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), from the top 24 bits so every value is exact in f32.
    pub fn next_signed(&mut self) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
        2.0 * unit - 1.0
    }
}

/// FNV-1a, 64 bits, started from the seed mixed into the offset basis.
pub fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed.wrapping_mul(0x100_0000_01b3);
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_fixed_forever() {
        // Changing these numbers changes every shared toy heatmap: don't.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn signed_values_stay_in_range_and_vary_by_name() {
        let mut a = SplitMix64::for_name(7, "encoder.0.w_q");
        let mut b = SplitMix64::for_name(7, "encoder.0.w_k");
        let xs: Vec<f32> = (0..1000).map(|_| a.next_signed()).collect();
        assert!(xs.iter().all(|x| (-1.0..1.0).contains(x)));
        assert_ne!(xs[0], b.next_signed());
    }
}
