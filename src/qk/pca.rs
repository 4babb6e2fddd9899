//! Principal components, exactly: the covariance of the points (f64) and its symmetric eigen
//! decomposition (nalgebra), the largest first. Each component's sign is fixed so that its
//! largest loading is positive, so the same points always give the same picture.

use nalgebra::{DMatrix, SymmetricEigen};
use ndarray::{Array2, ArrayView2, Axis};

use crate::error::{Error, Result};

/// Points projected on their first principal components.
#[derive(Debug, Clone, PartialEq)]
pub struct Pca {
    pub coords: Array2<f32>, // (N, dims)
    /// (dims, d): unit vectors, the largest variance first.
    pub components: Array2<f32>,
    /// The share of the variance each component carries, 0..1.
    pub explained: Vec<f32>,
}

/// The first `dims` principal components of `points` (N, d).
pub fn pca(points: ArrayView2<f32>, dims: usize) -> Result<Pca> {
    let (n, d) = points.dim();
    if n == 0 || d == 0 {
        return Err(Error::shape("points", &[n, d], &[n.max(1), d.max(1)]));
    }
    let points = points.mapv(f64::from);
    let mean = points.mean_axis(Axis(0)).expect("n > 0");
    let centred = &points - &mean;
    let cov = centred.t().dot(&centred) / (n.max(2) - 1) as f64; // (d, d)
    let (components, explained) = principal(&cov, dims)?;
    let coords = centred.dot(&components.t()).mapv(|x| x as f32);
    Ok(Pca { coords, components: components.mapv(|x| x as f32), explained })
}

/// The first `dims` unit eigenvectors of the covariance `cov` (d, d), the largest eigenvalue
/// first, each turned so its largest loading is positive: (min(dims, d), d), and the share of
/// the variance each carries.
pub fn principal(cov: &Array2<f64>, dims: usize) -> Result<(Array2<f64>, Vec<f32>)> {
    let d = cov.nrows();
    let dims = dims.min(d);
    // bounded: a covariance that is not finite fails instead of iterating for ever
    let eigen = SymmetricEigen::try_new(DMatrix::from_fn(d, d, |r, c| cov[[r, c]]), f64::EPSILON, 10_000)
        .ok_or_else(|| Error::shape("a covariance", &[d, d], &[d, d]))?;
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    let total: f64 = eigen.eigenvalues.iter().map(|v| v.max(0.0)).sum();
    let mut components = Array2::<f64>::zeros((dims, d));
    for (c, &i) in order.iter().take(dims).enumerate() {
        let v = eigen.eigenvectors.column(i);
        let largest = v.iter().copied().fold(0f64, |m, x| if x.abs() > m.abs() { x } else { m });
        let sign = if largest < 0.0 { -1.0 } else { 1.0 };
        for r in 0..d {
            components[[c, r]] = sign * v[r];
        }
    }
    let explained = order
        .iter()
        .take(dims)
        .map(|&i| if total > 0.0 { (eigen.eigenvalues[i].max(0.0) / total) as f32 } else { 0.0 })
        .collect();
    Ok((components, explained))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_long_axis_first() {
        // Points along (1, 1, 0) with a little spread along (1, −1, 0), the two uncorrelated
        // (u follows + − − + over each four consecutive t).
        let points = Array2::from_shape_fn((48, 3), |(i, c)| {
            let (t, u) = (i as f32 - 23.5, if i % 4 == 0 || i % 4 == 3 { 0.5 } else { -0.5 });
            match c {
                0 => t + u,
                1 => t - u,
                _ => 0.0,
            }
        });
        let p = pca(points.view(), 2).unwrap();
        let s = std::f32::consts::FRAC_1_SQRT_2;
        assert!((p.components[[0, 0]] - s).abs() < 1e-5 && (p.components[[0, 1]] - s).abs() < 1e-5);
        assert!((p.components[[1, 0]].abs() - s).abs() < 1e-5);
        assert!(p.explained[0] > 0.99 && p.explained[0] + p.explained[1] > 0.9999);
        assert!((p.coords[[0, 0]] + 23.5 * 2f32.sqrt()).abs() < 1e-3);
    }

    #[test]
    fn no_points_is_an_error() {
        assert!(pca(Array2::<f32>::zeros((0, 4)).view(), 2).is_err());
    }
}
