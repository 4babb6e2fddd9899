//! A head's queries and keys summed instead of kept: how many, their sums and the sums of
//! their outer products (f64). That is all the joint embedding ([`super::joint`]) and its
//! principal axes need, so a picture of a corpus of any size is exact in one pass and in
//! memory of d_k² numbers: sentences are added as they come, parts computed apart (threads,
//! Ray's actors) are merged, and only the points drawn need their vectors at the end.
//!
//! With the joint embedding's shift s and scale c, the drawn points are c·q and (k + s)/c, so
//! their sum is c·Σq + (Σk + n_k·s)/c and the sum of their outer products is
//! c²·Σqqᵀ + (Σkkᵀ + s·Σkᵀ + Σk·sᵀ + n_k·ssᵀ)/c²: the covariance follows from the moments.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

use super::pca;
use crate::error::{Error, Result};

/// Queries' and keys' moments of one head: index 0 the queries, 1 the keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    pub count: [usize; 2],
    pub sum: [Array1<f64>; 2],   // (d)
    pub outer: [Array2<f64>; 2], // (d, d)
}

/// The joint embedding and principal axes of a head, from its moments: what places any of its
/// points in the picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    /// Added to every key before the scaling: mean(Q) − mean(K).
    pub shift: Array1<f32>,
    /// What the queries are multiplied by and the keys divided by.
    pub scale: f32,
    /// The mean of the drawn points, (d).
    pub mean: Array1<f64>,
    /// (axes, d): unit vectors, the largest variance first (at most two).
    pub components: Array2<f64>,
    /// The share of the variance each axis carries.
    pub explained: Vec<f32>,
}

impl Moments {
    /// No vectors yet, of width `d`.
    pub fn new(d: usize) -> Self {
        let zero = || Array1::zeros(d);
        let square = || Array2::zeros((d, d));
        Moments { count: [0, 0], sum: [zero(), zero()], outer: [square(), square()] }
    }

    /// The moments of `queries` (Nq, d) and `keys` (Nk, d).
    pub fn of(queries: ArrayView2<f32>, keys: ArrayView2<f32>) -> Result<Self> {
        let mut m = Moments::new(queries.ncols());
        m.add(queries, keys)?;
        Ok(m)
    }

    /// The width of the vectors.
    pub fn d(&self) -> usize {
        self.sum[0].len()
    }

    /// Adds more queries (Nq, d) and keys (Nk, d).
    pub fn add(&mut self, queries: ArrayView2<f32>, keys: ArrayView2<f32>) -> Result<()> {
        let d = self.d();
        for (side, x) in [queries, keys].into_iter().enumerate() {
            if x.ncols() != d {
                return Err(Error::shape("a head's vectors", &[x.nrows(), x.ncols()], &[x.nrows(), d]));
            }
            let x = x.mapv(f64::from);
            self.count[side] += x.nrows();
            self.sum[side] += &x.sum_axis(Axis(0));
            self.outer[side] += &x.t().dot(&x);
        }
        Ok(())
    }

    /// Adds the moments of other vectors of the same head.
    pub fn merge(&mut self, other: &Moments) -> Result<()> {
        if other.d() != self.d() {
            return Err(Error::shape("moments", &[other.d()], &[self.d()]));
        }
        for side in 0..2 {
            self.count[side] += other.count[side];
            self.sum[side] += &other.sum[side];
            self.outer[side] += &other.outer[side];
        }
        Ok(())
    }

    /// Moments given as parts (from a file or another process), checked: a sum of width d, an
    /// outer product of d × d for each side, every number finite, no count without vectors.
    pub fn from_parts(count: [usize; 2], sum: [Array1<f64>; 2], outer: [Array2<f64>; 2]) -> Result<Self> {
        let d = sum[0].len();
        for side in 0..2 {
            if sum[side].len() != d || outer[side].dim() != (d, d) {
                let got = [sum[side].len(), outer[side].nrows(), outer[side].ncols()];
                return Err(Error::shape("moments", &got, &[d, d, d]));
            }
            let bad = sum[side].iter().chain(outer[side].iter()).position(|x| !x.is_finite());
            if let Some(at) = bad {
                return Err(Error::NonFinite { what: "moments".into(), index: vec![side, at] });
            }
        }
        Ok(Moments { count, sum, outer })
    }

    fn mean(&self, side: usize) -> Array1<f64> {
        if self.count[side] == 0 {
            Array1::zeros(self.d())
        } else {
            &self.sum[side] / self.count[side] as f64
        }
    }

    /// The joint embedding's shift s = mean(Q) − mean(K) and scale c, c⁴ being the keys' mean
    /// squared norm after the shift over the queries' (see [`joint`]).
    pub fn shift_scale(&self) -> (Array1<f64>, f64) {
        let s = self.mean(0) - self.mean(1);
        let [nq, nk] = self.count.map(|n| n as f64);
        let trace = |m: &Array2<f64>| m.diag().sum();
        let q2 = if nq > 0.0 { trace(&self.outer[0]) / nq } else { 0.0 };
        let k2 = if nk > 0.0 { (trace(&self.outer[1]) + 2.0 * s.dot(&self.sum[1]) + nk * s.dot(&s)) / nk } else { 0.0 };
        let c = if q2 > 0.0 && k2 > 0.0 { (k2 / q2).sqrt().sqrt() } else { 1.0 };
        (s, c)
    }

    /// The joint embedding's first two principal axes over every vector added.
    pub fn axes(&self) -> Result<Axes> {
        let n = self.count[0] + self.count[1];
        if n == 0 {
            return Err(Error::EmptyCorpus);
        }
        let (s, c) = self.shift_scale();
        let nk = self.count[1] as f64;
        let outer = |a: ArrayView1<f64>, b: ArrayView1<f64>| {
            let (a, b) = (a.insert_axis(Axis(1)), b.insert_axis(Axis(0)));
            a.dot(&b)
        };
        let total = &self.sum[0] * c + (&self.sum[1] + &(&s * nk)) / c;
        let mean = &total / n as f64;
        let keys = &self.outer[1]
            + &outer(s.view(), self.sum[1].view())
            + outer(self.sum[1].view(), s.view())
            + outer(s.view(), s.view()) * nk;
        let second = &self.outer[0] * (c * c) + keys / (c * c);
        let cov = (second - outer(mean.view(), mean.view()) * n as f64) / (n.max(2) - 1) as f64;
        let (components, explained) = pca::principal(&cov, 2)?;
        Ok(Axes { shift: s.mapv(|x| x as f32), scale: c as f32, mean, components, explained })
    }
}

impl Axes {
    /// Points of the joint embedding (N, d) on the two axes: (N, 2), the second 0 when d is 1.
    pub fn place(&self, points: ArrayView2<f32>) -> Array2<f32> {
        let centred = points.mapv(f64::from) - &self.mean;
        let on = centred.dot(&self.components.t());
        Array2::from_shape_fn((points.nrows(), 2), |(i, c)| on.get((i, c)).map_or(0.0, |&x| x as f32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qk::joint;
    use crate::rng::SplitMix64 as Rng;

    fn random(rng: &mut Rng, rows: usize, cols: usize, offset: f32, spread: f32) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |(_, c)| offset + c as f32 * 0.3 + spread * rng.next_signed())
    }

    #[test]
    fn moments_in_parts_give_the_axes_of_the_points_at_once() {
        let mut rng = Rng::new(11);
        let (q, k) = (random(&mut rng, 300, 6, 0.5, 2.0), random(&mut rng, 280, 6, -3.0, 0.7));
        // at once: the joint embedding of every point, then its principal components
        let joint = joint::normalize(q.view(), k.view());
        let mut points = Array2::zeros((580, 6));
        points.slice_mut(ndarray::s![..300, ..]).assign(&joint.queries);
        points.slice_mut(ndarray::s![300.., ..]).assign(&joint.keys);
        let once = pca::pca(points.view(), 2).unwrap();
        // in parts of uneven size, merged
        let mut parts = Moments::new(6);
        for (a, b) in [(0, 7), (7, 130), (130, 300)] {
            let mut part = Moments::new(6);
            part.add(q.slice(ndarray::s![a..b, ..]), k.slice(ndarray::s![a.min(280)..b.min(280), ..])).unwrap();
            parts.merge(&part).unwrap();
        }
        let axes = parts.axes().unwrap();
        assert_eq!(axes.scale, joint.scale);
        assert_eq!(axes.shift, joint.shift);
        for (a, b) in axes.components.iter().zip(once.components.iter()) {
            assert!((*a as f32 - b).abs() < 1e-5, "{a} vs {b}");
        }
        for (a, b) in axes.explained.iter().zip(&once.explained) {
            assert!((a - b).abs() < 1e-6);
        }
        let placed = axes.place(points.view());
        for (a, b) in placed.iter().zip(once.coords.iter()) {
            assert!((a - b).abs() < 1e-4 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }

    #[test]
    fn bad_parts_and_no_vectors_are_refused() {
        assert!(matches!(Moments::new(4).axes(), Err(Error::EmptyCorpus)));
        let mut m = Moments::new(4);
        assert!(m.add(Array2::zeros((2, 3)).view(), Array2::zeros((2, 4)).view()).is_err());
        assert!(m.merge(&Moments::new(5)).is_err());
        let sum = [Array1::zeros(2), Array1::from(vec![f64::NAN, 0.0])];
        assert!(Moments::from_parts([1, 1], sum, [Array2::zeros((2, 2)), Array2::zeros((2, 2))]).is_err());
        let sum = [Array1::zeros(2), Array1::zeros(2)];
        assert!(Moments::from_parts([1, 1], sum, [Array2::zeros((2, 2)), Array2::zeros((3, 2))]).is_err());
    }
}
