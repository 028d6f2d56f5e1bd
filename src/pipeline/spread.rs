//! `gpu_index = -1` with the default handles: contiguous groups of circuits
//! on several GPUs at once, one [`super::phases::prove`] per device.

use std::time::Duration;

use crate::assignment::Batch;
use crate::config::Settings;
use crate::error::Result;
use crate::groth16::Intermediates;
use crate::locks;
use crate::srs::Srs;

/// The devices a call runs on: `gpu_index` `Some(i)` → device i; `None`
/// (−1) → the first `min(gpus, num_circuits)` devices, unless the caller
/// passed a lock handle (a handle guards one GPU, so the call stays on
/// device 0).
pub fn spread_devices(gpu_index: Option<usize>, num_circuits: usize, handle_given: bool, gpus: usize) -> Vec<usize> {
    match gpu_index {
        Some(i) => vec![i],
        None if handle_given => vec![0],
        None => (0..gpus.min(num_circuits).max(1)).collect(),
    }
}

/// Splits `0..n` into `k` contiguous ranges whose lengths differ by at most one.
pub fn split_ranges(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    let k = k.clamp(1, n.max(1));
    (0..k).map(|i| (i * n / k)..((i + 1) * n / k)).collect()
}

/// Proves contiguous groups of circuits on several GPUs at once, each group
/// with that device's backend and default lock handle. Returns the sums in
/// circuit order; the first error (in device order) wins.
pub(super) fn prove_spread(
    key: &Srs,
    batch: &Batch<'_>,
    devices: &[usize],
    settings: Settings,
    validated: Duration,
) -> Result<Vec<Intermediates>> {
    let ranges = split_ranges(batch.circuits.len(), devices.len());
    let results: Vec<Result<Vec<Intermediates>>> = std::thread::scope(|scope| {
        let tasks: Vec<_> = devices
            .iter()
            .zip(ranges)
            .map(|(&device, range)| {
                let part = Batch { circuits: batch.circuits[range].to_vec(), ..*batch };
                scope.spawn(move || {
                    let backend = super::select(device, settings)?;
                    backend.prove(key, &part, locks::default_handle(device), settings, device, validated)
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut sums = Vec::with_capacity(batch.circuits.len());
    for r in results {
        sums.extend(r?);
    }
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_index_and_handles_decide_the_devices() {
        assert_eq!(spread_devices(Some(2), 10, false, 4), vec![2]);
        assert_eq!(spread_devices(Some(0), 10, false, 4), vec![0]);
        assert_eq!(spread_devices(None, 10, false, 4), vec![0, 1, 2, 3]);
        assert_eq!(spread_devices(None, 3, false, 8), vec![0, 1, 2]);
        assert_eq!(spread_devices(None, 10, true, 4), vec![0], "a handle guards one GPU");
        assert_eq!(spread_devices(Some(1), 10, true, 4), vec![1], "a handle with an index: that device");
        assert_eq!(spread_devices(None, 10, false, 1), vec![0]);
        assert_eq!(spread_devices(None, 10, false, 0), vec![0], "no GPU: the CPU backend, one group");
    }

    #[test]
    fn ranges_cover_every_circuit_once_in_order_and_balanced() {
        for n in 1..40 {
            for k in 1..10 {
                let r = split_ranges(n, k);
                assert_eq!(r.len(), k.min(n));
                assert_eq!(r.first().unwrap().start, 0);
                assert_eq!(r.last().unwrap().end, n);
                for w in r.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let (lo, hi) = (r.iter().map(|x| x.len()).min().unwrap(), r.iter().map(|x| x.len()).max().unwrap());
                assert!(lo >= 1 && hi - lo <= 1, "n {n} k {k}: {r:?}");
            }
        }
    }
}
