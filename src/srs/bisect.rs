//! Naming the bad point of a range whose combinations fail: bisection with
//! fresh combinations over sub-ranges, then blst's per-point check on a
//! small range.

use rayon::prelude::*;

use super::combine::{combinations, Key};
use super::group::{digits_for, Subgroup};

/// Ranges at or below this size are checked point by point when bisecting.
const SCAN: usize = 1 << 12;

/// Index (within `points`) of a bad point of a range known to fail.
pub(super) fn bisect<C: Subgroup>(points: &[C::Affine], key: &Key, section: u64, first: usize) -> usize {
    if points.len() <= SCAN {
        return scan::<C>(points);
    }
    let part = points.len().div_ceil(16);
    let digits = digits_for(part);
    let failing: Vec<usize> = points
        .par_chunks(part)
        .enumerate()
        .filter(|(i, chunk)| !combinations::<C>(chunk, key, section, first + i * part, digits).iter().all(C::in_group))
        .map(|(i, _)| i)
        .collect();
    // With probability ≤ 3⁻⁸¹ no part fails although one holds the bad
    // point; the whole range is then scanned point by point.
    match failing.first() {
        Some(&i) => {
            let s = i * part;
            let e = (s + part).min(points.len());
            s + bisect::<C>(&points[s..e], key, section, first + s)
        }
        None => scan::<C>(points),
    }
}

/// The first point that fails blst's per-point check, in a range whose
/// combinations failed (a range of subgroup points cannot fail them).
fn scan<C: Subgroup>(points: &[C::Affine]) -> usize {
    first_bad::<C>(points).expect("a range whose combinations fail holds a point outside the subgroup")
}

/// The first point that fails blst's per-point check, if any.
pub(super) fn first_bad<C: Subgroup>(points: &[C::Affine]) -> Option<usize> {
    points.par_iter().position_first(|p| !C::point_in_group(p))
}
