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

/// The device's bucket layout: (groups, buckets per group).
fn device_layout() -> (usize, u32) {
    (subgroup::groups_for(DEVICE_DIGITS), 3u32.pow(DEVICE_DIGITS))
}

/// Page-locks `v`'s points on `dev` ([`BucketSums::pin`]); a panic in the
/// device code leaves them pageable.
///
/// # Safety
/// `v`'s buffer is neither moved nor freed while the returned pin lives.
pub(super) unsafe fn pin_points<T>(dev: &dyn BucketSums, v: &[T]) -> Option<Pin> {
    // SAFETY: the caller's contract.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { dev.pin(v.as_ptr() as *const u8, std::mem::size_of_val(v)) })).ok().flatten()
}

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

/// A page-locking of host memory for uploads (see [`BucketSums::pin`]); its
/// drop unregisters the memory.
pub type Pin = Box<dyn std::any::Any + Send + Sync>;

/// What the device did with one vector.
pub(super) struct DeviceResult {
    /// The vector's page-locking, if the device made one. Declared first, so
    /// that a result dropped whole (an error path) unregisters the memory
    /// before the vector is freed.
    pub(super) pin: Option<Pin>,
    /// Section number (0–3: the G1 sections, 4: b_g2).
    pub(super) section: u64,
    pub(super) vector: Vector,
    /// Its bucket sums, or why the device could not compute them.
    pub(super) sums: Result<Sums>,
    /// Seconds of bucket sums.
    pub(super) seconds: f64,
    /// Seconds spent page-locking the vector.
    pub(super) pin_seconds: f64,
}

/// A device that computes the bucket sums of the params loader's subgroup
/// check (`gpu::subgroup`; the host forms and checks the rounds).
pub trait BucketSums: Send + Sync {
    /// Which device, for logs (e.g. `GPU 0`).
    fn name(&self) -> String;
    /// G1 bucket sums, `groups · buckets` points, group-major.
    fn g1(&self, points: &[G1Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<G1Projective>>;
    /// G2 bucket sums, as [`BucketSums::g1`].
    fn g2(&self, points: &[G2Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<G2Projective>>;
    /// Page-locks `bytes` bytes at `ptr` for uploads to every device, as the
    /// first GPU call of a key would (`gpu::stage::pin_key`), so that the
    /// load pays for it beside the decode instead of the first proof after
    /// it. `None`: not pinned (the registration failed, or proving calls will
    /// not use a GPU); the memory stays pageable.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is live host memory that outlives the returned value.
    unsafe fn pin(&self, ptr: *const u8, bytes: usize) -> Option<Pin>;
}

/// Where a load's long vectors are checked, for a switch value and the file
/// (named in messages): `Ok(None)` for the CPU. The caller supplies it
/// (`crate::params` asks the GPU layer), so this module needs no device code.
pub type CheckDevice<'a> = dyn Fn(CheckOn, &Path) -> Result<Option<Box<dyn BucketSums>>> + Sync + 'a;

/// The device worker's loop: for every vector received on `rx` until the
/// sender is dropped, its page-locking (kept with it: the bucket sums'
/// upload then reads pinned memory, and the first proving call finds the
/// key pinned) and its bucket sums (digits from the key `words`), each
/// returned with the vector and the times.
pub(super) fn bucket_sums(dev: &dyn BucketSums, rx: Receiver<(u64, Vector)>, words: [u32; 8]) -> Vec<DeviceResult> {
    let (groups, buckets) = device_layout();
    rx.into_iter()
        .map(|(section, vector)| {
            let t = Instant::now();
            // SAFETY: the vector's heap buffer does not move or shrink while
            // it travels with its pin, and the result drops the pin first.
            let pin = unsafe {
                match &vector {
                    Vector::G1(p) => pin_points(dev, p),
                    Vector::G2(p) => pin_points(dev, p),
                }
            };
            let pin_seconds = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let first = subgroup::stream_of(section, 0);
            // A panic in the device code is an error for this
            // vector, which then comes back and is checked here.
            let sums = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &vector {
                Vector::G1(p) => dev.g1(p, &words, first, groups, buckets).map(Sums::G1),
                Vector::G2(p) => dev.g2(p, &words, first, groups, buckets).map(Sums::G2),
            }))
            .unwrap_or_else(|_| Err(Error::new(code::EIO, "the device subgroup check panicked".to_string())));
            DeviceResult { pin, section, vector, sums, seconds: t.elapsed().as_secs_f64(), pin_seconds }
        })
        .collect()
}

/// Puts the vectors back from the device, in `g1` (by section number) and
/// `g2`, after forming and checking the rounds from their bucket sums; a
/// vector the device did not pass, or could not check, is checked again
/// here (the error then names its bad point). The vectors' page-lockings go
/// to `pins`, which the caller keeps until the vectors are in the key (or
/// drops before them). Returns how many vectors fell back to the CPU because
/// the device could not check them, and which sections (0–3: the G1
/// sections, 4: b_g2) are settled.
#[allow(clippy::too_many_arguments)]
pub(super) fn settle(
    path: &Path,
    on_device: Vec<DeviceResult>,
    g1_sections: &[Section; 4],
    b_g2: &Section,
    key: &Key,
    g1: &mut [Option<Vec<G1Affine>>],
    g2: &mut Option<Vec<G2Affine>>,
    pins: &mut Vec<(u64, Pin)>,
) -> Result<(usize, [bool; 5])> {
    let mut cpu_fallbacks = 0;
    // Sections the device checked (and passed, or failed and were checked again here).
    let mut checked = [false; 5];
    let want = {
        let (groups, buckets) = device_layout();
        groups * buckets as usize
    };
    for r in on_device {
        // Bindings drop in reverse order: `pin` before `vector`, also when
        // a panic unwinds from here.
        let DeviceResult { vector, pin, section, sums, .. } = r;
        let sums = sums.and_then(|s| {
            let got = match &s {
                Sums::G1(v) => v.len(),
                Sums::G2(v) => v.len(),
            };
            if got == want {
                Ok(s)
            } else {
                Err(Error::new(code::EIO, format!("the device returned {got} bucket sums, expected {want}")))
            }
        });
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
        // bad point; the host's verdict is the one that counts. On a
        // refusal the pin (moved into the closure) is dropped here, before
        // the vector.
        let recheck = |ok: Result<()>, pin: Option<Pin>| {
            ok.map(|()| {
                if ran {
                    tracing::error!(target: "supraseal_c2::srs", section, "the device's subgroup check failed a vector that the CPU check passes: keeping the CPU's verdict");
                }
                pin
            })
        };
        let pin = match vector {
            Vector::G1(p) => {
                // Declared after `p`: dropped first if the check panics.
                let pin = pin;
                let pin = if passed { pin } else { recheck(check::<msm::G1>(path, &g1_sections[section as usize], &p, G1_BYTES, key, section), pin)? };
                g1[section as usize] = Some(p);
                pin
            }
            Vector::G2(p) => {
                let pin = pin;
                let pin = if passed { pin } else { recheck(check::<msm::G2>(path, b_g2, &p, G2_BYTES, key, section), pin)? };
                *g2 = Some(p);
                pin
            }
        };
        pins.extend(pin.map(|p| (section, p)));
        checked[section as usize] = true;
    }
    Ok((cpu_fallbacks, checked))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    use rand::SeedableRng;

    use super::*;
    use crate::srs::{read, source, subgroup::testing::g1_with_torsion, G1_BYTES};

    /// A device that cannot compute bucket sums (every vector is checked on
    /// the CPU) but page-locks: each pin counts itself live until dropped.
    struct PinOnly {
        live: Arc<AtomicUsize>,
        pins: bool,
        /// Answer with no bucket sums at all instead of an error (a device
        /// gone wrong): the host must not trust it.
        empty_sums: bool,
        /// Pin on the loading thread too (the vectors too short for the
        /// device), not only on the device thread.
        loading_thread_pins: bool,
    }

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_sub(1, SeqCst);
        }
    }

    impl BucketSums for PinOnly {
        fn name(&self) -> String {
            "pin-only".into()
        }
        fn g1(&self, _: &[G1Affine], _: &[u32; 8], _: u64, _: usize, _: u32) -> Result<Vec<G1Projective>> {
            if self.empty_sums {
                return Ok(Vec::new());
            }
            Err(Error::new(code::EIO, "no bucket sums here"))
        }
        fn g2(&self, _: &[G2Affine], _: &[u32; 8], _: u64, _: usize, _: u32) -> Result<Vec<G2Projective>> {
            if self.empty_sums {
                return Ok(Vec::new());
            }
            Err(Error::new(code::EIO, "no bucket sums here"))
        }
        unsafe fn pin(&self, _: *const u8, _: usize) -> Option<Pin> {
            let device_thread = std::thread::current().name() == Some("srs-check-gpu");
            (self.pins && (device_thread || self.loading_thread_pins)).then(|| {
                self.live.fetch_add(1, SeqCst);
                Box::new(Counted(self.live.clone())) as Pin
            })
        }
    }

    fn load_with(bytes: &[u8], pins: bool, empty_sums: bool, loading_thread_pins: bool) -> (Result<(crate::srs::Srs, read::LoadReport)>, Arc<AtomicUsize>) {
        let live = Arc::new(AtomicUsize::new(0));
        let dev = live.clone();
        let device = move |_: CheckOn, _: &Path| -> Result<Option<Box<dyn BucketSums>>> {
            Ok(Some(Box::new(PinOnly { live: dev.clone(), pins, empty_sums, loading_thread_pins })))
        };
        (read::load(&source::Memory(bytes), Path::new("pins.params"), CheckOn::Auto, &device, None), live)
    }

    fn load(bytes: &[u8], pins: bool) -> (Result<(crate::srs::Srs, read::LoadReport)>, Arc<AtomicUsize>) {
        load_with(bytes, pins, false, true)
    }

    #[test]
    fn vectors_sent_to_the_device_come_back_pinned_and_a_refused_file_releases_every_pin() {
        let n = DEVICE_MIN;
        let valid = crate::srs::tiny_params(n, n, n, n);
        let (loaded, live) = load(&valid, true);
        let (srs, report) = loaded.expect("a valid file loads");
        assert_eq!((report.cpu_fallbacks, report.pinned), (5, true), "{report:?}");
        assert_eq!(live.load(SeqCst), 5, "h, l, a, b_g1 and b_g2 each pinned once, held by the key");
        assert!(srs.host_pin.get().is_some(), "the first GPU call finds the key pinned");
        drop(srs);
        assert_eq!(live.load(SeqCst), 0, "the key's drop releases its pins");

        // A device that does not pin (proving on the CPU): nothing held.
        let (loaded, live) = load(&valid, false);
        let (srs, report) = loaded.expect("a valid file loads");
        assert!(!report.pinned && srs.host_pin.get().is_none() && live.load(SeqCst) == 0, "{report:?}");

        // A point with 3-torsion in l: refused by the CPU check after the
        // device gave up on it, with every pin released before the error returns.
        let mut bad = valid.clone();
        let k = n / 2 + 7;
        let at = 3 * 96 + 3 * 192 + (4 + G1_BYTES) + (4 + n * G1_BYTES) + 4 + k * G1_BYTES;
        let (p, _) = g1_with_torsion(0, &mut rand_chacha::ChaCha8Rng::seed_from_u64(rand::random()));
        bad[at..at + G1_BYTES].copy_from_slice(&p.to_uncompressed());
        let (loaded, live) = load(&bad, true);
        let Err(e) = loaded else { panic!("a point outside the subgroup is refused") };
        assert!(e.message.contains(&format!("section l at byte offset {at}: point {k}:")), "{}", e.message);
        assert_eq!(live.load(SeqCst), 0, "no pin outlives a refused load");

        // A device that answers with the wrong number of bucket sums is not
        // trusted: every vector is checked on the CPU, the bad one refused.
        let (loaded, live) = load_with(&bad, true, true, true);
        let Err(e) = loaded else { panic!("a device's empty answer must not pass a bad point") };
        assert!(e.message.contains(&format!("point {k}:")), "{}", e.message);
        assert_eq!(live.load(SeqCst), 0);
        let (loaded, _) = load_with(&valid, true, true, true);
        assert_eq!(loaded.expect("a valid file loads").1.cpu_fallbacks, 5);
    }

    #[test]
    fn vectors_too_short_for_the_device_are_pinned_by_the_loading_thread_and_the_key_keeps_pins_only_whole() {
        let n = DEVICE_MIN;
        // h, l, a go to the device; b_g1 and b_g2 (100 points) stay here.
        let file = crate::srs::tiny_params(n, n, n, 100);
        let (loaded, live) = load(&file, true);
        let (srs, report) = loaded.expect("a valid file loads");
        assert_eq!((report.cpu_fallbacks, report.pinned), (3, true), "{report:?}");
        assert_eq!(live.load(SeqCst), 5, "three vectors pinned by the device thread, two by the loading thread");
        drop(srs);
        assert_eq!(live.load(SeqCst), 0);

        // The loading thread's pins refused: part of the key pinned is released.
        let (loaded, live) = load_with(&file, true, false, false);
        let (srs, report) = loaded.expect("a valid file loads");
        assert!(!report.pinned && srs.host_pin.get().is_none(), "{report:?}");
        assert_eq!(live.load(SeqCst), 0, "the first GPU call pins the whole key instead");

        // No vector long enough for the device: nothing pinned in the load.
        let (loaded, live) = load(&crate::srs::tiny_params(100, 100, 100, 100), true);
        let (_, report) = loaded.expect("a valid file loads");
        assert!(!report.pinned && report.device.is_none() && live.load(SeqCst) == 0, "{report:?}");
    }
}
