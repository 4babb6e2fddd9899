//! t-SNE of a head's joint embedding (van der Maaten and Hinton, 2008; Barnes–Hut, from the
//! `bhtsne` crate), started from the PCA picture scaled small, as openTSNE starts: no random
//! start, so the same corpus always gives the same picture.

use ndarray::{Array2, ArrayView2};

#[cfg(not(target_arch = "wasm32"))]
use crate::error::Error;
use crate::error::Result;

/// The perplexity used where the points allow it (each point's effective neighbours).
pub const PERPLEXITY: f32 = 30.0;
/// Gradient steps.
pub const EPOCHS: usize = 750;

/// What hears each step: sent to the one thread that fits, natively.
#[cfg(not(target_arch = "wasm32"))]
pub trait Progress: FnMut(usize) + Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: FnMut(usize) + Send> Progress for T {}
#[cfg(target_arch = "wasm32")]
pub trait Progress: FnMut(usize) {}
#[cfg(target_arch = "wasm32")]
impl<T: FnMut(usize)> Progress for T {}

/// `points` (N, d) placed in two dimensions, starting from `start` (N, 2) (the PCA picture);
/// `progress(epoch)` after each of the `epochs` steps. Too few points for a neighbourhood
/// (fewer than 8) keep their start.
pub fn tsne(
    points: ArrayView2<f32>,
    start: ArrayView2<f32>,
    epochs: usize,
    progress: impl Progress,
) -> Result<Array2<f32>> {
    let n = points.nrows();
    if n < 8 {
        return Ok(start.to_owned());
    }
    // bhtsne asks for 3 · perplexity neighbours of each point, fewer than the points there are
    let perplexity = PERPLEXITY.min(((n - 2) / 3) as f32).max(1.0);
    let data = points.as_standard_layout().to_owned();
    let rows: Vec<&[f32]> = data.rows().into_iter().map(|r| r.to_slice().expect("standard layout")).collect();
    // the start scaled to a standard deviation of 1e-4 on its first axis
    let sd = {
        let c = start.column(0);
        let mean = c.sum() / n as f32;
        (c.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / n as f32).sqrt()
    };
    let k = if sd > 0.0 { 1e-4 / sd } else { 1.0 };
    let init: Vec<f32> = start.iter().map(|x| x * k).collect();
    let fit = || {
        let mut fit: bhtsne::tSNE<f32, &[f32]> = bhtsne::tSNE::new(&rows);
        let mut progress = progress;
        fit.perplexity(perplexity)
            .epochs(epochs.max(1))
            .initial_embedding(init)
            .epoch_callback(move |epoch, _| progress(epoch + 1))
            .barnes_hut(0.5, |a: &&[f32], b: &&[f32]| {
                a.iter().zip(b.iter()).map(|(x, y)| (x - y) * (x - y)).sum::<f32>().sqrt()
            });
        fit.embedding()
    };
    // one thread: sums in one order, the same picture every time (wasm has one anyway)
    #[cfg(not(target_arch = "wasm32"))]
    let coords = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::Thread { reason: e.to_string() })?
        .install(fit);
    // wasm: one thread in the single-threaded build; in the threaded build the page's pool (a
    // pool of one would need the page's progress callback to cross threads), whose sums may
    // differ in their last bits from run to run
    #[cfg(target_arch = "wasm32")]
    let coords = fit();
    Ok(Array2::from_shape_vec((n, 2), coords).expect("two coordinates a point"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_two_clouds_and_repeats_itself() {
        // two clouds of 40 points in 5 dimensions, far apart
        let points = Array2::from_shape_fn((80, 5), |(i, c)| {
            (if i < 40 { 0.0 } else { 20.0 }) + ((i * 7 + c * 13) % 11) as f32 * 0.1
        });
        let start = Array2::from_shape_fn((80, 2), |(i, c)| ((i * 3 + c) % 17) as f32);
        let mut seen = 0;
        let a = tsne(points.view(), start.view(), 300, |e| seen = e).unwrap();
        assert_eq!(seen, 300);
        let b = tsne(points.view(), start.view(), 300, |_| {}).unwrap();
        assert_eq!(a, b, "the same start gives the same picture");
        let centre = |r: std::ops::Range<usize>| {
            let n = r.len() as f32;
            r.fold([0f32; 2], |m, i| [m[0] + a[[i, 0]] / n, m[1] + a[[i, 1]] / n])
        };
        let (c0, c1) = (centre(0..40), centre(40..80));
        let spread =
            (0..40).map(|i| ((a[[i, 0]] - c0[0]).powi(2) + (a[[i, 1]] - c0[1]).powi(2)).sqrt()).fold(0f32, f32::max);
        let apart = ((c0[0] - c1[0]).powi(2) + (c0[1] - c1[1]).powi(2)).sqrt();
        assert!(apart > 2.0 * spread, "clouds {apart} apart, each within {spread}");
    }

    #[test]
    fn a_handful_of_points_keep_their_start() {
        let start = Array2::from_shape_fn((4, 2), |(i, c)| (i + c) as f32);
        assert_eq!(tsne(Array2::<f32>::zeros((4, 3)).view(), start.view(), 10, |_| {}).unwrap(), start);
    }
}
