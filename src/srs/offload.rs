//! The params check's device offload: which device checks, the worker loop
//! that has it compute the bucket sums of the vectors sent to it, and the
//! host's verdict on what comes back.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};

use super::layout::{check, Section};
use super::subgroup::{self, Key};
use super::{G1_BYTES, G2_BYTES};
use crate::config::CheckOn;
use crate::cpu::msm;
use crate::error::{code, Error, Result};

/// Vectors at least this long go to the device when one checks (shorter
/// ones cost more to ship than to check here).
pub(super) const DEVICE_MIN: usize = 1 << 16;
/// Ternary digits per group on the device: 3⁸ buckets, 11 groups.
const DEVICE_DIGITS: u32 = 8;

/// A decoded vector on its way through the device check, and back.
pub(super) enum Vector {
    G1(Vec<G1Affine>),
    G2(Vec<G2Affine>),
}

/// The device's bucket sums of one vector.
pub(super) enum Sums {
    G1(Vec<G1Projective>),
    G2(Vec<G2Projective>),
}

/// What the device did with one vector: (section number, the vector, its
/// bucket sums or the error, seconds).
pub(super) type DeviceResult = (u64, Vector, Result<Sums>, f64);

/// A device that computes the bucket sums of the params loader's subgroup
/// check (`gpu::subgroup`; the host forms and checks the rounds).
pub trait BucketSums: Send + Sync {
    /// Which device, for logs (e.g. `GPU 0`).
    fn name(&self) -> String;
    /// G1 bucket sums, `groups · buckets` points, group-major.
    fn g1(&self, points: &[G1Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<G1Projective>>;
    /// G2 bucket sums, as [`BucketSums::g1`].
    fn g2(&self, points: &[G2Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<G2Projective>>;
}

/// Where a load's long vectors are checked, for a switch value and the file
/// (named in messages): `Ok(None)` for the CPU. The caller supplies it
/// (`crate::params` asks the GPU layer), so this module needs no device code.
pub type CheckDevice<'a> = dyn Fn(CheckOn, &Path) -> Result<Option<Box<dyn BucketSums>>> + Sync + 'a;

/// The device worker's loop: the bucket sums of every vector received on
/// `rx` (digits from the key `words`) until the sender is dropped, each
/// returned with its vector and the device's time.
pub(super) fn bucket_sums(dev: &dyn BucketSums, rx: Receiver<(u64, Vector)>, words: [u32; 8]) -> Vec<DeviceResult> {
    let groups = subgroup::groups_for(DEVICE_DIGITS);
    let buckets = 3u32.pow(DEVICE_DIGITS);
    rx.into_iter()
        .map(|(section, v)| {
            let t = Instant::now();
            let first = subgroup::stream_of(section, 0);
            // A panic in the device code is an error for this
            // vector, which then comes back and is checked here.
            let sums = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &v {
                Vector::G1(p) => dev.g1(p, &words, first, groups, buckets).map(Sums::G1),
                Vector::G2(p) => dev.g2(p, &words, first, groups, buckets).map(Sums::G2),
            }))
            .unwrap_or_else(|_| Err(Error::new(code::EIO, "the device subgroup check panicked".to_string())));
            (section, v, sums, t.elapsed().as_secs_f64())
        })
        .collect()
}

/// Puts the vectors back from the device, in `g1` (by section number) and
/// `g2`, after forming and checking the rounds from their bucket sums; a
/// vector the device did not pass, or could not check, is checked again
/// here (the error then names its bad point). Returns how many vectors fell
/// back to the CPU because the device could not check them, and which
/// sections (0–3: the G1 sections, 4: b_g2) are settled.
pub(super) fn settle(
    path: &Path,
    on_device: Vec<DeviceResult>,
    g1_sections: &[Section; 4],
    b_g2: &Section,
    key: &Key,
    g1: &mut [Option<Vec<G1Affine>>],
    g2: &mut Option<Vec<G2Affine>>,
) -> Result<(usize, [bool; 5])> {
    let mut cpu_fallbacks = 0;
    // Sections the device checked (and passed, or failed and were checked again here).
    let mut checked = [false; 5];
    for (section, v, sums, _) in on_device {
        let (ran, passed) = match sums {
            Ok(Sums::G1(s)) => (true, subgroup::all_in_group::<msm::G1>(&subgroup::combinations_from_sums::<msm::G1>(&s, DEVICE_DIGITS))),
            Ok(Sums::G2(s)) => (true, subgroup::all_in_group::<msm::G2>(&subgroup::combinations_from_sums::<msm::G2>(&s, DEVICE_DIGITS))),
            Err(e) => {
                tracing::warn!(target: "supraseal_c2::srs", section, error = %e.message, "device subgroup check failed to run: checking this vector on the CPU");
                cpu_fallbacks += 1;
                (false, false)
            }
        };
        // A vector the device did not pass is checked here, which names its
        // bad point; the host's verdict is the one that counts.
        let recheck = |ok: Result<()>| {
            if ok.is_ok() && ran {
                tracing::error!(target: "supraseal_c2::srs", section, "the device's subgroup check failed a vector that the CPU check passes: keeping the CPU's verdict");
            }
            ok
        };
        match v {
            Vector::G1(p) => {
                if !passed {
                    recheck(check::<msm::G1>(path, &g1_sections[section as usize], &p, G1_BYTES, key, section))?;
                }
                g1[section as usize] = Some(p);
            }
            Vector::G2(p) => {
                if !passed {
                    recheck(check::<msm::G2>(path, b_g2, &p, G2_BYTES, key, section))?;
                }
                *g2 = Some(p);
            }
        }
        checked[section as usize] = true;
    }
    Ok((cpu_fallbacks, checked))
}
