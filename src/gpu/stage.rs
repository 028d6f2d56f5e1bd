//! Phases 0, 1 and 3 of a GPU call (docs/ARCHITECTURE.md §5): sorting the
//! caller's a/b/c into page-locked (copied directly) and pageable (copied
//! through the device's [`super::staging`] ring, or registered with
//! `SUPRASEAL_C2_HOST_STAGING=register`), pre-staging them on the device
//! under the memory lock, and unpinning.
//!
//! Phase 1 uses only operations that wait for no other stream:
//! `cuMemGetInfo`, pool attribute queries, idle pre-stage vectors handed back
//! by earlier calls (no driver allocation: see [`ScalarBuf`]), stream-ordered
//! allocation from the pre-stage pool on this call's upload stream when there
//! are too few (which maps new memory when the pool is short: once per burst,
//! see `grow_stage_pool`), `cuMemcpyHtoDAsync` from pinned memory and
//! `cuMemsetD8Async` for the zero padding. cudarc records a write event per
//! buffer; the compute stream waits on those events when phase 2 first uses a
//! buffer. Nothing here waits for another stream, trims the pool or frees
//! memory another stream uses, with two exceptions of the resident key
//! ([`super::resident`]): its one-time upload synchronises this call's own
//! upload stream, and its release issues a free that the device orders after
//! the last reads (no host wait).

use std::ffi::c_void;

use blstrs::Scalar;

use std::sync::atomic::Ordering;
use std::sync::Arc;


use super::device::{cuda_err, Gpu, HostRegistration, Registration};
use super::pins::{self, PinLease};
use super::call::GpuCall;
use super::faults::check_alloc;
use super::words::limbs;
pub use super::scalar_buf::ScalarBuf;
use super::resident::{self, KeyPlan, Residency, Room};
use crate::backend::{Abc, Admission};
use crate::config::FaultPhase;
use crate::error::Result;

/// The key's vector lengths in points (set in phase 0), which bound the
/// device memory of phase 2's steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyShape {
    pub h: usize,
    pub l: usize,
    pub a: usize,
    pub b_g1: usize,
    pub b_g2: usize,
}

impl KeyShape {
    pub fn of(srs: &crate::srs::Srs) -> Self {
        KeyShape { h: srs.h.len(), l: srs.l.len(), a: srs.a.len(), b_g1: srs.b_g1.len(), b_g2: srs.b_g2.len() }
    }
}

/// Device bytes one circuit's phase 2 holds at its peak, for a domain of n
/// and a key of shape `key` under `settings` (the G2 MSMs' placement, the
/// chunk size), on the fallback path (a, b, c uploaded in phase
/// 2; pre-staged, they are counted in phase 1 and the peak is the same or
/// lower). Phase 2's steps run one after another and each frees its buffers
/// before the next, so the peak is the largest step:
/// - the quotient: a, b, c and the twiddle tables ([`super::ntt::quotient_bytes`]);
/// - the H-MSM: the n coefficients (32 B each) and one chunk of bases with
///   its MSM's buffers ([`super::msm::msm_chunked_bytes`]); over the
///   resident key, larger MSMs that stay within the quotient's bytes
///   ([`super::msm::h_msm_budget`]);
/// - each G1 sum (L, A′, B′): its scalars (at most one per base, and one
///   more chunk of them for the next circuit's copy) and a chunked MSM, or a
///   chunked batch addition of up to
///   [`PASS_CIRCUITS`](super::batch_add::PASS_CIRCUITS) circuits at once;
/// - B′ in G2: the batch addition, and with `g2_msm_on_device` the MSM.
///
/// Admission reserves this for whichever call computes, and the fallback
/// needs no more than it (`gpu_proofs` checks the measured high-water mark
/// against it).
pub fn compute_peak_bytes(n: usize, key: &KeyShape, settings: &crate::config::Settings) -> usize {
    let (quotient, h, sums) = peak_steps(n, key, settings);
    quotient.max(h).max(sums)
}

/// The steps of [`compute_peak_bytes`]: the quotient's, the H-MSM's, and
/// the largest of the sums' (L, A′, B′ in G1 and B′ in G2: MSMs and batch
/// additions).
fn peak_steps(n: usize, key: &KeyShape, settings: &crate::config::Settings) -> (usize, usize, usize) {
    use super::batch_add::{batch_add_bytes, PASS_CIRCUITS};
    use super::msm::{chunk_points, msm_chunked_bytes, G1, G2};
    let chunk = settings.gpu_chunk;
    let quotient = super::ntt::quotient_bytes(n);
    let h = 32 * n + msm_chunked_bytes::<G1>(key.h, chunk);
    // An MSM's scalars, and a second buffer of them for the next circuit's
    // copy (`msm_many`, at most one chunk of points).
    let scalars = |m: usize, points: usize| 32 * (m + m.min(points));
    let g1 = [key.l, key.a, key.b_g1]
        .into_iter()
        .map(|m| (scalars(m, chunk_points::<G1>(chunk)) + msm_chunked_bytes::<G1>(m, chunk)).max(batch_add_bytes::<G1>(m, PASS_CIRCUITS, chunk)))
        .max()
        .unwrap_or(0);
    let g2_msm = if settings.g2_msm_on_device { scalars(key.b_g2, chunk_points::<G2>(chunk)) + msm_chunked_bytes::<G2>(key.b_g2, chunk) } else { 0 };
    (quotient, h, g1.max(batch_add_bytes::<G2>(key.b_g2, PASS_CIRCUITS, chunk)).max(g2_msm))
}

/// Device bytes that the tails' sets put ahead over a streamed key
/// ([`super::msm::put_ahead`]: a tail's gathered bases and scalars) may take
/// together, for a domain of `n`: the call's peak ([`compute_peak_bytes`])
/// less the largest of the sums' steps. Phase 2 puts them ahead only once
/// the H-MSMs are done (the quotient's and H-MSM's buffers freed), and any
/// step that runs beside them (a batch addition, a tail MSM, whose own
/// buffers of bases and scalars the set replaces) takes at most that
/// largest step. Zero where the sums' step is the peak.
pub fn tails_ahead_room(n: usize, key: &KeyShape, settings: &crate::config::Settings) -> usize {
    let (quotient, h, sums) = peak_steps(n, key, settings);
    quotient.max(h).saturating_sub(sums)
}

/// Device bytes of the last circuit's H-MSM step with the batch additions
/// of `circuits` beside it ([`crate::backend::Backend::beside_h_msm`]), and
/// the call's peak ([`compute_peak_bytes`], which admission counts), for a
/// domain of `n`. The H step holds the coefficients (32·n) and either the
/// quotient's b (32·n more, until the H-MSM starts) or the H-MSM, which
/// keeps to its chunked bytes while batch additions run beside it (also over
/// a resident key, where it would otherwise take
/// [`super::msm::h_msm_budget`]). Beside it, the largest of the batch
/// additions (chunk buffers and a pass's scratch; the bases read in place
/// from a resident key need none, so this over-counts there). Where the sum
/// is within the peak, running both at once stays within what admission
/// reserved: the quotient's c and its scratch are freed by then, and at
/// porep-32g its a, b, c are the peak.
pub fn beside_h_msm_bytes(n: usize, key: &KeyShape, settings: &crate::config::Settings, circuits: usize) -> (usize, usize) {
    use super::msm::{msm_chunked_bytes, G1};
    let h_step = 32 * n + msm_chunked_bytes::<G1>(key.h, settings.gpu_chunk).max(32 * n);
    (h_step + largest_batch_add_bytes(key, settings, circuits), compute_peak_bytes(n, key, settings))
}

/// The largest of the batch additions of `circuits` over `key` (L, A′, B′
/// in G1 and B′ in G2), with their chunk buffers (a streamed key's).
fn largest_batch_add_bytes(key: &KeyShape, settings: &crate::config::Settings, circuits: usize) -> usize {
    use super::batch_add::batch_add_bytes;
    use super::msm::{G1, G2};
    let chunk = settings.gpu_chunk;
    [key.l, key.a, key.b_g1]
        .into_iter()
        .map(|m| batch_add_bytes::<G1>(m, circuits, chunk))
        .chain([batch_add_bytes::<G2>(key.b_g2, circuits, chunk)])
        .max()
        .unwrap_or(0)
}

/// Over a resident key, the device bytes the last H-MSM may take while the
/// batch additions of `circuits` run beside it
/// ([`crate::backend::Backend::beside_h_msm`] with
/// `SUPRASEAL_C2_BATCH_ADD_BESIDE=on`): the call's peak less the
/// coefficients (32·n) and the largest batch addition as if the key
/// streamed (chunk buffers and a pass's scratch), so that the sum stays
/// within what admission reserved also where the key is released between
/// this decision and the H-MSM. `None` where that leaves less than the
/// H-MSM's one-piece bytes over the resident key
/// ([`super::msm::h_msm_resident_bytes`]): beside a smaller H-MSM the
/// batch additions would cost more than they hide, or where the quotient's
/// b (freed when the H-MSM starts) does not fit beside them.
/// At porep-32g: 6.95 GB (one circuit) and 6.76 GB (ten) against the one
/// piece's 3.01 GB (K = 128, its sort beside the accumulation included:
/// [`super::MsmTuning::for_points`]).
pub fn beside_resident_h_msm_cap(n: usize, key: &KeyShape, settings: &crate::config::Settings, circuits: usize) -> Option<usize> {
    let peak = compute_peak_bytes(n, key, settings);
    let batch = largest_batch_add_bytes(key, settings, circuits);
    let cap = peak.checked_sub(32 * n)?.checked_sub(batch)?;
    (cap >= 32 * n && cap >= super::msm::h_msm_resident_bytes(key.h, settings.gpu_chunk)).then_some(cap)
}

/// Phase 0, once per key (later calls return at once; concurrent first calls
/// wait for the one that registers): page-locks the key's query vectors
/// uploaded in phase 2 (h, l, a, b_g1, b_g2; [`Registration::Key`]), kept
/// in the key's `host_pin`, which [`Srs`](crate::srs::Srs) drops before the
/// vectors. Registration pins 96 B per G1 point and 192 B per G2 point, a
/// one-time cost of about a second per few GB; where it fails (e.g.
/// RLIMIT_MEMLOCK), the vectors registered so far stay pinned, the rest stay
/// pageable and a warning is logged: uploads are then slower, not wrong.
pub(super) fn pin_key(gpu: &Arc<Gpu>, srs: &crate::srs::Srs) {
    srs.host_pin.get_or_init(|| {
        let t = std::time::Instant::now();
        let g1 = [srs.h(), srs.l(), srs.a(), srs.b_g1()].map(|v| (v.as_ptr() as *const c_void, std::mem::size_of_val(v)));
        let g2 = (srs.b_g2().as_ptr() as *const c_void, std::mem::size_of_val(srs.b_g2()));
        let mut pinned: Vec<HostRegistration> = Vec::new();
        for (ptr, bytes) in g1.into_iter().chain([g2]).filter(|&(_, bytes)| bytes > 0) {
            // SAFETY: the vector lives as long as `srs`, whose `host_pin`
            // (these registrations) is dropped before the vector.
            match unsafe { gpu.register_host(ptr, bytes, Registration::Key) } {
                Ok(r) => pinned.push(r),
                Err(error) => tracing::warn!(bytes, ?error, "key vector not pinned: its uploads stay pageable"),
            }
        }
        tracing::info!(vectors = pinned.len(), ms = t.elapsed().as_millis() as u64, "key pinned for GPU uploads");
        Box::new(pinned)
    });
}

/// How many pre-stage vectors a call should hold at once to grow the pool
/// for itself and `others` waiting calls of its shape (`own` vectors each),
/// given `have` vectors ready (idle, or in the pre-stage pool's cache) and
/// room for `room` newly mapped ones; `None` when those cover it or the
/// call's own allocations are all the growth.
pub fn growth_target(others: usize, own: usize, have: usize, room: usize) -> Option<usize> {
    let target = ((others + 1) * own).min(have + room);
    (others > 0 && target > have.max(own)).then_some(target)
}

/// What phase 1 stages ([`GpuCall::admit`]'s decision, from its figures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase1 {
    /// The first `circuits` circuits, whole.
    Whole { circuits: usize, new_room: usize },
    /// The first `vectors` (1 or 2) of circuit 0's a, b, c.
    Part { vectors: usize, new_room: usize },
    /// Nothing.
    Fallback,
}

/// Phase 1's decision for a call whose `pinned` ≥ 1 first circuits are
/// stageable, `one` bytes of a, b, c each, given `avail` bytes (after a
/// resident key's upload, counting `reusable` bytes of idle pre-stage
/// vectors and the pre-stage pool's cache) and the `reserve` (margin and a
/// computing call's peak): whole circuits where one fits beside the reserve,
/// else (`part`: `SUPRASEAL_C2_PRESTAGE=on`) [`part_vectors`] of circuit 0,
/// else nothing. `new_room` is what new pool mappings (for this call and
/// the calls waiting behind it) may take: free memory beyond the reserve,
/// the reusable memory the staged vectors take aside.
pub fn phase1_plan(avail: usize, reserve: usize, reusable: usize, one: usize, pinned: usize, part: bool) -> Phase1 {
    if one.saturating_add(reserve) <= avail {
        let circuits = ((avail - reserve) / one).min(pinned);
        return Phase1::Whole { circuits, new_room: avail - reserve - reusable.min(circuits * one) };
    }
    let vectors = if part { part_vectors(avail, reserve, reusable, one / 3) } else { 0 };
    match vectors {
        0 => Phase1::Fallback,
        vectors => Phase1::Part { vectors, new_room: avail.saturating_sub(reusable).saturating_sub(reserve) },
    }
}

/// How many of circuit 0's a, b, c (`vector` bytes each) phase 1 stages
/// where the whole circuit does not fit beside the `reserve` (margin and a
/// computing call's peak): as many as fit, at most two. `avail` counts
/// `reusable` bytes of idle pre-stage vectors and the pre-stage pool's
/// cache, which serve pre-stages only, so only `k` vectors' worth of them
/// count for `k` vectors: the computing call's reserve must fit in the rest.
/// On an 80 GB card with porep-32g's key resident, a call admitted while
/// another computes finds ~10.4 GB beside the reserve: a and b (4.3 GB each).
pub fn part_vectors(avail: usize, reserve: usize, reusable: usize, vector: usize) -> usize {
    (1..=2).rev().find(|&k| fits_beside_reserve(k * vector, avail, reserve, reusable)).unwrap_or(0)
}

/// Whether `bytes` of pre-stage vectors fit beside the `reserve` in
/// `avail`, of which `reusable` (idle pre-stage vectors and the pool's
/// cache) serve pre-stages only: they count only up to `bytes`, so the
/// reserve must fit in the rest. Saturating (a margin of up to 2^44 − 1 MiB
/// parses).
fn fits_beside_reserve(bytes: usize, avail: usize, reserve: usize, reusable: usize) -> bool {
    bytes.saturating_add(reserve) <= avail.saturating_sub(reusable) + reusable.min(bytes)
}

/// How many more of circuit 0's a, b, c (`vector` bytes each) a call that
/// has `have` of them staged stages while it waits for a busy compute lock
/// ([`GpuCall::restage_first`]), from phase 1's figures taken again:
/// `avail` (counting `reusable` bytes of idle pre-stage vectors and the
/// pool's cache, of which only `k` vectors' worth count for `k` vectors, as
/// in [`part_vectors`]) against the `reserve`. The rest of the circuit where
/// it fits; else, with `part` (`SUPRASEAL_C2_PRESTAGE=on`), as many as fit;
/// else none. On an 80 GB card with porep-32g's key resident, a third call
/// that fell back (one call computing, one pre-staged) finds the whole
/// circuit's room once the computing call's phase 2 ends.
pub fn restage_vectors(avail: usize, reserve: usize, reusable: usize, vector: usize, have: usize, part: bool) -> usize {
    let missing = 3usize.saturating_sub(have);
    match (1..=missing).rev().find(|&k| fits_beside_reserve(k * vector, avail, reserve, reusable)) {
        Some(k) if part || k == missing => k,
        _ => 0,
    }
}

/// How many of the next circuit's a, b, c (`vector` bytes each) phase 2
/// stages beside the H-MSM it is about to run, its coefficients (one more
/// `vector`) already on the device and `h_work` more bytes still to be
/// allocated by it. All three where they fit beside a computing call's peak
/// (`room.avail` against `room.reserve`, phase 1's rule). Else as many as
/// fit both in the call's own peak (`room.reserve` less `margin`: the
/// largest step, which the H-MSM's footprint leaves part of unused) and in
/// the compute pool's free memory less the margin, at most two: staging
/// ahead then never raises the call's peak, so admission's reserve for a
/// computing call still holds. On a 16 GiB card at porep-32g that is one
/// vector (the H-MSM step holds ~7.6 GB of a 13.4 GB peak with a shared
/// bucket table, ~6.3 GB with one MSM per chunk).
pub fn ahead_vectors(room: &Room, vector: usize, h_work: usize, margin: usize) -> usize {
    if (3 * vector).saturating_add(room.reserve) <= room.avail {
        return 3;
    }
    let peak = room.reserve.saturating_sub(margin);
    let in_peak = peak.saturating_sub(vector + h_work) / vector.max(1);
    let in_free = room.compute_avail.saturating_sub(margin + h_work) / vector.max(1);
    in_peak.min(in_free).min(2)
}

/// [`ahead_vectors`] beside an H-MSM over a streamed key that takes
/// `ramped` bytes with its ramp (`SUPRASEAL_C2_STREAMED_MSM=table-ramp`)
/// and `plain` with chunks of one size: where the plain bytes leave room
/// for more vectors, those, and the cap the H-MSM then keeps to (`Some`:
/// its ramp yields), else the ramp's count and no cap. A vector staged
/// ahead saves more of the next circuit's hold than the ramp saves of this
/// H-MSM: at porep-32g as a 16 GiB card (H100, 88f932e) the ramp took
/// ~55 ms off each H-MSM, and the vector it left no room for added
/// ~150 ms to each NTT step.
pub fn ahead_beside_streamed(room: &Room, vector: usize, ramped: usize, plain: usize, margin: usize) -> (usize, Option<usize>) {
    let (k, k_plain) = (ahead_vectors(room, vector, ramped, margin), ahead_vectors(room, vector, plain, margin));
    if k_plain > k {
        (k_plain, Some(plain))
    } else {
        (k, None)
    }
}

/// One circuit's a, b, c on the device, or the first of them: 4·n u64 words
/// each (n scalars in Montgomery form, zero-padded past `abc_size`). Phase 1
/// stages all three; staging ahead in phase 2 may stage only a, or a and b
/// ([`GpuCall::prefetch_inputs`]), and the quotient uploads the rest in its
/// turn ([`super::ntt::quotient`] takes its inputs one at a time).
pub struct StagedAbc {
    /// a, b, c in that order; `None` past the staged ones.
    pub v: [Option<ScalarBuf>; 3],
    /// Per vector (a, b, c): its copy from a pageable host buffer is still
    /// to be made through the staging ring ([`GpuCall::fill_ring`]); the padding
    /// is written.
    pub unfilled: [bool; 3],
}

impl StagedAbc {
    /// How many of a, b, c are on the device (or on their way).
    pub fn staged(&self) -> usize {
        self.v.iter().flatten().count()
    }
}

/// How one circuit's a/b/c go up, decided in phase 0 or by the pinning
/// thread ([`GpuCall::pin`]), with its holds on ranges this library
/// registered ([`pins`]; none with the staging ring).
pub(super) struct CircuitPins {
    _leases: Vec<PinLease>,
    /// The circuit may be staged ahead of its turn: its buffers are all
    /// page-locked, or the ring copies them.
    usable: bool,
    /// Per vector (a, b, c): page-locked (by this library or its owner) or
    /// empty, so copied directly, asynchronously, at DMA speed.
    direct: [bool; 3],
}

impl GpuCall {
    /// This call no longer waits for phase 1 (idempotent).
    pub(super) fn done(&self) {
        if self.awaiting.swap(false, Ordering::SeqCst) {
            self.exec.gpu.awaiting_stage.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Phase 0, per key: records its shape and vectors (once per call) and
    /// pins them ([`pin_key`]).
    pub(super) fn set_key(&self, srs: &crate::srs::Srs) {
        let _ = self.key.set((KeyShape::of(srs), KeyPlan::of(srs)));
        resident::watch(srs);
        pin_key(&self.exec.gpu, srs);
    }

    /// Whether this call's key (phase 0's) has its copy on the device now
    /// and the settings let calls read it there.
    pub(super) fn key_on_device(&self) -> bool {
        let srs_id = self.key.get().map(|k| k.1.srs_id);
        self.exec.settings.key_resident && self.exec.gpu.memory.resident_key().is_some_and(|r| Some(r.srs_id) == srs_id)
    }

    /// The key's vector lengths (zero before phase 0: direct use by tests).
    pub(super) fn key_shape(&self) -> KeyShape {
        self.key.get().map(|k| k.0).unwrap_or_default()
    }

    /// Phase 1's steps, for the call's report.
    pub(super) fn detail(&self) -> Option<String> {
        let d = self.detail.lock().unwrap_or_else(|p| p.into_inner());
        (!d.is_empty()).then(|| format!("{d} ms"))
    }

    /// Decides how circuit `ci`'s a/b/c go up. With the staging ring (the
    /// default): buffers the caller page-locked (`cuMemHostAlloc` or its own
    /// registration, both ends of each) go up directly, the others through
    /// the ring; nothing is registered. With `SUPRASEAL_C2_HOST_STAGING=register`,
    /// or where the ring could not be made: page-locks the non-empty buffers
    /// through the process-wide registry ([`pins::pin`]): each range once,
    /// however many circuits or calls pass it; a range already page-locked by
    /// its owner is used as it is; a refusal leaves only that range pageable.
    /// Returns why the circuit is not wholly page-locked, if it is not (its
    /// uploads then run from pageable memory, in phase 2).
    pub(super) fn pin(&self, ci: usize, abc: &Abc<'_>) -> Option<String> {
        let exec = &self.exec;
        if self.ring().is_some() {
            let direct = abc.map(|v| v.is_empty() || exec.gpu.is_page_locked(v.as_ptr() as *const c_void, std::mem::size_of_val(v)));
            self.record_pins(ci, CircuitPins { _leases: Vec::new(), usable: true, direct });
            return None;
        }
        let mut leases = Vec::new();
        let mut why = None;
        for v in abc.iter().filter(|v| !v.is_empty()) {
            let (ptr, bytes) = (v.as_ptr() as *const c_void, std::mem::size_of_val(*v));
            // SAFETY: `v` is a live host buffer of `bytes` bytes for the whole
            // call (caller contract); the lease is dropped by `unpin_circuit`
            // or `unpin`, after the copies from it.
            let lease = unsafe { pins::pin(&exec.gpu, ptr, bytes) };
            if !lease.state.is_pinned() && why.is_none() {
                why = Some(format!("circuit {ci}: cuMemHostRegister of {bytes} B: {:?}", lease.state));
            }
            leases.push(lease);
        }
        let usable = why.is_none();
        self.record_pins(ci, CircuitPins { _leases: leases, usable, direct: [usable; 3] });
        why
    }

    fn record_pins(&self, ci: usize, p: CircuitPins) {
        let mut pins = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        if pins.len() <= ci {
            pins.resize_with(ci + 1, || None);
        }
        pins[ci] = Some(p);
    }

    /// The device's staging ring, unless this call registers its inputs
    /// (`SUPRASEAL_C2_HOST_STAGING=register`).
    fn ring(&self) -> Option<&super::staging::StagingRing> {
        (!self.exec.settings.register_inputs).then(|| self.exec.gpu.staging()).flatten()
    }

    /// Whether circuit `ci` may be staged ahead now: (`.0`) it is wholly
    /// page-locked or the ring copies it, and (`.1`) which of its vectors
    /// go up directly from their buffers.
    fn stageable(&self, ci: usize) -> (bool, [bool; 3]) {
        let pins = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        pins.get(ci).and_then(Option::as_ref).map_or((false, [false; 3]), |p| (p.usable, p.direct))
    }

    /// Makes the copies of a staged circuit that go through the staging ring
    /// ([`StagedAbc::unfilled`]), on the upload stream: the CPU part (copying
    /// the caller's memory into the ring's buffers) on this thread and the
    /// ring's filler threads; returns once every copy is enqueued. Nothing
    /// to do for vectors already filled or copied directly. Returns the
    /// bytes it copied.
    pub(super) fn fill_ring(&self, [a, b, c]: &Abc<'_>, staged: &mut StagedAbc) -> Result<usize> {
        let exec = &self.exec;
        if !staged.unfilled.contains(&true) {
            return Ok(0);
        }
        let Some(ring) = exec.gpu.staging() else {
            return Err(crate::error::Error::new(crate::error::code::EFAULT, "staged inputs await the staging ring, which does not exist"));
        };
        let (t, mut bytes) = (std::time::Instant::now(), 0);
        for (k, (v, what)) in [(a, "staging a"), (b, "staging b"), (c, "staging c")].into_iter().enumerate() {
            if let (true, Some(d)) = (staged.unfilled[k], staged.v[k].as_mut()) {
                ring.fill(&exec.gpu, &self.upload, limbs(v), &mut d.slice_mut(..4 * v.len()), exec.settings.staging_threads, what)?;
                staged.unfilled[k] = false;
                bytes += std::mem::size_of_val(*v);
            }
        }
        tracing::debug!(
            target: "supraseal_c2::gpu::stage",
            ms = crate::log::round1(t.elapsed().as_secs_f64() * 1e3),
            bytes,
            "a, b, c copied through the staging ring"
        );
        Ok(bytes)
    }

    /// The fallback path's upload of one vector (compute lock held), into a
    /// new zero-padded buffer of `n` scalars from the compute pool, on the
    /// call's upload stream: it overlaps the quotient's transforms of the
    /// vectors before it, and the kernels that read it wait for its copy
    /// (the buffer's write event). Through the staging ring when the call
    /// uses it and the buffer is pageable, else directly (asynchronous only
    /// from page-locked memory).
    pub(super) fn upload_padded(&self, v: &[Scalar], n: usize, what: &str) -> Result<ScalarBuf> {
        let exec = &self.exec;
        // SAFETY: the first 4·len words are written below, before any read.
        let mut d = unsafe { exec.alloc_padded_on::<u64>(&self.upload, 4 * n, 4 * v.len(), what) }?;
        let dst = &mut d.slice_mut(..4 * v.len());
        super::staging::copy_to_device(&exec.gpu, self.ring(), &self.upload, limbs(v), dst, exec.settings.staging_threads, what)?;
        Ok(ScalarBuf::owned(d))
    }

    /// Lets go of circuit `ci`'s pins. The caller has seen every copy from
    /// its buffers complete (its quotient was synchronised).
    pub(super) fn unpin_circuit_pins(&self, ci: usize) {
        let taken = {
            let mut pins = self.pins.lock().unwrap_or_else(|p| p.into_inner());
            pins.get_mut(ci).and_then(Option::take)
        };
        drop(taken);
    }

    /// Phase 3 (and drop): waits for this call's two streams, then lets go
    /// of every pin left. Errors are ignored: the buffers stay the caller's
    /// either way.
    pub(super) fn unpin_all(&self) {
        let exec = &self.exec;
        let pins = std::mem::take(&mut *self.pins.lock().unwrap_or_else(|p| p.into_inner()));
        if pins.iter().all(Option::is_none) {
            return;
        }
        let _ = exec.gpu.ctx.bind_to_thread();
        let _ = self.upload.synchronize();
        let _ = exec.stream.synchronize();
        drop(pins);
    }

    /// Phase 1, see [`crate::backend::Backend::prestage`].
    pub(super) fn prestage_inputs(&self, inputs: &[Abc<'_>], n: usize) -> Admission<StagedAbc> {
        let admission = self.admit(inputs, n);
        self.done();
        admission
    }

    fn admit(&self, inputs: &[Abc<'_>], n: usize) -> Admission<StagedAbc> {
        let _ = self.domain.set(n);
        let exec = &self.exec;
        let settings = &exec.settings;
        // The circuits stageable so far, from the first: an N-circuit call
        // sorts (or pins) its circuits one after another, the first in phase 0.
        let pinned = (0..inputs.len()).take_while(|&ci| self.stageable(ci).0).count();
        let one = 3 * n * std::mem::size_of::<Scalar>();
        let need = pinned.max(1) * one;
        let t = std::time::Instant::now();
        let room = exec.gpu.memory.room(n, &self.key_shape(), settings, need);
        self.step("info", t);
        let (mut room, reuse) = match room {
            Ok(r) => r,
            Err(e) => return Admission::Fallback(e.message),
        };
        // What the running phase 2 gives back comes before this call's turn
        // only where no other lock handle lets a phase 2 overlap it.
        if !self.one_phase2_at_a_time() {
            room.returning = 0;
        }
        let reserve = room.reserve;
        let avail = room.avail - self.keep_key_resident(room);
        if !settings.prestage {
            return Admission::Fallback("SUPRASEAL_C2_PRESTAGE=off".into());
        }
        if pinned == 0 {
            return Admission::Fallback("host buffers not pinned (circuit 0)".into());
        }
        // The tests' switch takes the part path whatever the room (its pool
        // growth for waiting calls limited to what the pool holds).
        let forced = settings.prestage_part_forced.map(|vectors| Phase1::Part { vectors, new_room: 0 });
        let why = || match forced {
            Some(_) => "SUPRASEAL_C2_PRESTAGE_PART (tests)".to_string(),
            None => format!("pre-stage needs {one} B + {reserve} B reserve (margin + a computing call's peak) but {avail} B are free"),
        };
        let plan = forced.unwrap_or_else(|| phase1_plan(avail, reserve, reuse.reusable, one, pinned, settings.prestage_part));
        let k = match plan {
            Phase1::Fallback => return Admission::Fallback(why()),
            Phase1::Part { vectors, new_room } => {
                self.grow_stage_pool(vectors, n, new_room, reuse.stage_cached, reuse.idle);
                return match self.stage_first(0, &inputs[0], n, vectors) {
                    Ok(staged) => Admission::Part { staged, vectors, why: why() },
                    Err(e) => Admission::Fallback(format!("pre-stage allocation failed: {}", e.message)),
                };
            }
            // As many stageable circuits as fit; phase 2 stages the rest ahead
            // of their turn where it can (`prefetch`), else uploads them itself.
            Phase1::Whole { circuits, new_room } => {
                self.grow_stage_pool(3 * circuits, n, new_room, reuse.stage_cached, reuse.idle);
                circuits
            }
        };
        let mut staged = Vec::with_capacity(k);
        for (ci, abc) in inputs[..k].iter().enumerate() {
            match self.stage_first(ci, abc, n, 3) {
                Ok(s) => staged.push(s),
                // Dropping `staged` hands its vectors back to the idle list.
                Err(e) => return Admission::Fallback(format!("pre-stage allocation failed: {}", e.message)),
            }
        }
        // Copies through the ring are left to the pipeline, outside the
        // memory lock (a ring buffer's reuse can wait for another call's
        // kernels): the first circuit's between the two locks (beside the
        // wait for a busy compute lock, or before a free one is taken), the
        // later ones' beside this call's own H-MSMs.
        Admission::Staged(staged)
    }

    /// Phase 2 (compute lock held): stages circuit `ci`'s a, b, c on the
    /// upload stream, to go up while an earlier circuit of the call computes
    /// (copies through the ring are left to [`GpuCall::fill_ring`], which the
    /// pipeline runs beside the H-MSM). Only when the circuit is stageable
    /// (page-locked, or copied through the ring: a pageable copy would block
    /// this thread), pre-staging is on, no other call is in flight on the
    /// device (their admissions reserve a computing call's peak, not this
    /// memory), and free memory holds it beside a computing step's peak and
    /// the margin; else `None`, and the circuit's phase 2 uploads it.
    pub(super) fn prefetch_inputs(&self, ci: usize, abc: &Abc<'_>, n: usize) -> Option<StagedAbc> {
        let exec = &self.exec;
        let settings = &exec.settings;
        let active = exec.gpu.active.load(Ordering::SeqCst);
        let skip = if !settings.prestage {
            Some("pre-staging is off")
        } else if !self.stageable(ci).0 {
            Some("the circuit is not (yet) wholly page-locked, and no staging ring copies it")
        } else if active != 1 {
            Some("other calls are in flight on the device")
        } else {
            None
        };
        if let Some(why) = skip {
            tracing::debug!(circuit = ci, active, why, "next circuit not staged ahead: it uploads in its turn");
            return None;
        }
        let vector = n * std::mem::size_of::<Scalar>();
        let key = self.key_shape();
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take().filter(|d| d.len() == 4 * n);
        let (mut room, _) = exec.gpu.memory.room(n, &key, settings, 3 * vector).ok()?;
        // The last quotient's b buffer serves the first vector staged in part.
        room.compute_avail += if spare.is_some() { vector } else { 0 };
        // The H-MSM's buffers: larger MSMs where it reads this call's key
        // on the device; over a streamed key, a ramp's larger chunks only
        // where they cost no vector staged here.
        let (h_work, k) = if self.key_on_device() {
            let h_work = super::msm::h_msm_resident_bytes(key.h, settings.gpu_chunk);
            (h_work, ahead_vectors(&room, vector, h_work, settings.vram_margin))
        } else {
            let budget = super::msm::h_msm_budget(key.h, settings.gpu_chunk);
            let streamed = |ramp| super::msm::h_msm_streamed_bytes(key.h, settings.gpu_chunk, settings.streamed_msm_table, ramp, budget);
            let (h_work, plain) = (streamed(settings.streamed_msm_ramp), streamed(false));
            match ahead_beside_streamed(&room, vector, h_work, plain, settings.vram_margin) {
                (k, Some(cap)) => {
                    tracing::debug!(circuit = ci, ramp = h_work, plain, k, "the H-MSM's ramp yields to staging ahead");
                    self.h_msm_cap.store(cap, Ordering::SeqCst);
                    (cap, k)
                }
                (k, None) => (h_work, k),
            }
        };
        if k == 0 {
            tracing::debug!(circuit = ci, vector, h_work, ?room, "no room to stage the next circuit ahead");
            return None;
        }
        let t = std::time::Instant::now();
        let staged = if k == 3 {
            drop(spare);
            self.stage_first(ci, abc, n, 3)
        } else {
            self.stage_part(ci, abc, n, k, spare)
        };
        match staged {
            Ok(staged) => {
                tracing::debug!(circuit = ci, vectors = k, ms = t.elapsed().as_secs_f64() * 1e3, unfilled = ?staged.unfilled, "next circuit staged ahead");
                Some(staged)
            }
            Err(e) => {
                tracing::debug!(circuit = ci, error = %e.message, "staging the next circuit ahead failed: it uploads in its turn");
                None
            }
        }
    }

    /// Readies enough idle pre-stage vectors for this call and the calls
    /// queued behind it.
    ///
    /// A new vector maps new device memory, and on the H200 a mapping while
    /// another call's kernels or copies ran took 20–150 ms, inside the
    /// memory lock (in the 2^24 bench, every memory-lock hold over 20 ms was a
    /// growth). So the call that finds too few grows the set at once for
    /// itself and every call in flight that has not staged yet (assumed to be
    /// of this call's shape: `own_vectors` vectors of `n` scalars): it
    /// allocates the missing vectors on its upload stream (the pool's cache
    /// serves the first ones, the rest are mapped) and puts them on the idle
    /// list, where they stay, handed from call to call, until the device
    /// goes idle. New mappings take at most `new_room` bytes (free memory
    /// beyond the compute reserve); an allocation failure just ends the
    /// growth. Not counted by `SUPRASEAL_C2_FAULT_ALLOC` (admission-checked
    /// here instead). This is a blocking driver call under the memory lock,
    /// made once per burst instead of once per call.
    fn grow_stage_pool(&self, own_vectors: usize, n: usize, new_room: usize, stage_cached: usize, idle: usize) {
        let exec = &self.exec;
        let vec_bytes = 32 * n;
        let others = exec.gpu.awaiting_stage.load(std::sync::atomic::Ordering::SeqCst).saturating_sub(1);
        let idle_vectors = idle / vec_bytes;
        let Some(target) = growth_target(others, own_vectors, (stage_cached + idle) / vec_bytes, new_room / vec_bytes) else {
            return;
        };
        let t = std::time::Instant::now();
        let mut got = idle_vectors;
        while got < target {
            // SAFETY: handed out by `take_idle_stage` only to `stage_first`,
            // which writes every word before any read.
            match unsafe { exec.gpu.memory.stage_alloc(&self.upload, 4 * n, "pre-stage pool growth") } {
                Ok(d) => exec.gpu.memory.keep_idle_stage(d),
                Err(_) => break,
            }
            got += 1;
        }
        self.step(&format!("pool to {got} vectors"), t);
    }

    /// The resident key's part of phase 1 ([`resident::admit`]): the device
    /// bytes it took from the room (a new upload), else 0; logged in the
    /// call's phase-1 detail. With `SUPRASEAL_C2_KEY_RESIDENT=off` the call
    /// uploads nothing and reads no copy, but still releases one for room.
    fn keep_key_resident(&self, room: resident::Room) -> usize {
        let exec = &self.exec;
        let plan = self.key.get().map(|k| k.1.clone()).unwrap_or_default();
        let t = std::time::Instant::now();
        // SAFETY: the plan is this call's key, which the call holds until it ends.
        match unsafe { resident::admit(&exec.gpu, &self.upload, &plan, room, exec.settings.key_resident) } {
            Residency::Uploaded { bytes } => {
                self.step(&format!("key resident ({bytes} B)"), t);
                bytes.min(room.avail)
            }
            Residency::Released { bytes } => {
                self.step(&format!("resident key released ({bytes} B)"), t);
                0
            }
            Residency::Kept | Residency::Streamed => 0,
        }
    }

    /// Appends "name ms" to this call's phase-1 detail.
    pub(super) fn step(&self, name: &str, since: std::time::Instant) {
        use std::fmt::Write;
        let mut d = self.detail.lock().unwrap_or_else(|p| p.into_inner());
        let sep = if d.is_empty() { "" } else { ", " };
        let _ = write!(d, "{sep}{name} {:.1}", since.elapsed().as_secs_f64() * 1e3);
    }

    /// Allocates the first `k` of circuit `ci`'s three vectors (a, b, c in
    /// that order; all three at `k` = 3) from the pre-stage pool and writes
    /// their padding; a vector copied directly has its copy enqueued too,
    /// one copied through the ring is left [`StagedAbc::unfilled`].
    fn stage_first(&self, ci: usize, abc: &Abc<'_>, n: usize, k: usize) -> Result<StagedAbc> {
        let mut staged = StagedAbc { v: Default::default(), unfilled: [false; 3] };
        // Dropping `staged` on an error hands its vectors back.
        self.stage_vectors(ci, abc, n, &mut staged, k)?;
        Ok(staged)
    }

    /// [`Backend::restage`](crate::backend::Backend::restage): while this
    /// call waits for a busy compute lock (the memory lock taken again),
    /// stages as many more of circuit 0's a, b, c as [`restage_vectors`]
    /// allows in the room now, from the pre-stage pool as phase 1 does.
    /// `None` where trying again cannot add any: circuit 0 whole, pre-staging
    /// or its retry off, fault injection on, host buffers not stageable, or an allocation that
    /// failed (the vectors it added are handed back; the circuit keeps what
    /// phase 1 staged and uploads the rest in its turn).
    pub(super) fn restage_first(&self, abc: &Abc<'_>, n: usize, staged: &mut Option<StagedAbc>) -> Option<crate::backend::Restaged> {
        let exec = &self.exec;
        let settings = &exec.settings;
        let have = staged.as_ref().map_or(0, StagedAbc::staged);
        // Not under fault injection, whose count of phase-1 allocations must
        // not depend on when another call's phase 2 ends.
        if !settings.prestage || !settings.prestage_retry || settings.fault.is_some() || have >= 3 || !self.stageable(0).0 {
            return None;
        }
        let vector = n * std::mem::size_of::<Scalar>();
        let t = std::time::Instant::now();
        let (room, reuse) = match exec.gpu.memory.room(n, &self.key_shape(), settings, (3 - have) * vector) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(error = %e.message, "no room figures: circuit 0 not staged further while waiting");
                return Some(crate::backend::Restaged { added: 0, staged: have });
            }
        };
        let k = restage_vectors(room.avail, room.reserve, reuse.reusable, vector, have, settings.prestage_part);
        if k == 0 {
            return Some(crate::backend::Restaged { added: 0, staged: have });
        }
        let s = staged.get_or_insert_with(|| StagedAbc { v: Default::default(), unfilled: [false; 3] });
        match self.stage_vectors(0, abc, n, s, have + k) {
            Ok(()) => {
                self.step(&format!("{k} more of circuit 0 staged while waiting for the compute lock"), t);
                Some(crate::backend::Restaged { added: k, staged: have + k })
            }
            Err(e) => {
                tracing::debug!(error = %e.message, "staging more of circuit 0 while waiting failed: the rest uploads in its turn");
                for (v, unfilled) in s.v[have..].iter_mut().zip(&mut s.unfilled[have..]) {
                    drop(v.take());
                    *unfilled = false;
                }
                if have == 0 {
                    *staged = None;
                }
                None
            }
        }
    }

    /// Allocates the vectors of circuit `ci` among its first `upto` (a, b, c
    /// in that order) that `staged` lacks, as [`GpuCall::stage_first`]
    /// does.
    fn stage_vectors(&self, ci: usize, abc: &Abc<'_>, n: usize, staged: &mut StagedAbc, upto: usize) -> Result<()> {
        let exec = &self.exec;
        let gpu = &exec.gpu;
        let direct = self.stageable(ci).1;
        let one = |v: &[Scalar], direct: bool, what: &'static str| -> Result<ScalarBuf> {
            let t = std::time::Instant::now();
            let mut d = match gpu.memory.take_idle_stage(4 * n) {
                Some(d) => {
                    let d = ScalarBuf::staged(d, gpu.clone());
                    // Counted for fault injection only (it takes no new
                    // memory); on error, dropping `d` hands it back.
                    check_alloc(gpu, &exec.settings, FaultPhase::Phase1, 0, what)?;
                    self.step("reuse", t);
                    d
                }
                None => {
                    check_alloc(gpu, &exec.settings, FaultPhase::Phase1, 32 * n, what)?;
                    // SAFETY: every word is written below (copy, then zero padding) before any read.
                    let d = unsafe { gpu.memory.stage_alloc(&self.upload, 4 * n, what) }?;
                    self.step("alloc", t);
                    ScalarBuf::staged(d, gpu.clone())
                }
            };
            let t = std::time::Instant::now();
            if direct {
                self.upload.memcpy_htod(limbs(v), &mut d.slice_mut(..4 * v.len())).map_err(cuda_err(what))?;
            }
            if v.len() < n {
                self.upload.memset_zeros(&mut d.slice_mut(4 * v.len()..)).map_err(cuda_err(what))?;
            }
            self.step(if direct { "copy" } else { "pad" }, t);
            Ok(d)
        };
        for (i, what) in ["pre-stage a", "pre-stage b", "pre-stage c"].into_iter().enumerate().take(upto) {
            if staged.v[i].is_none() {
                staged.v[i] = Some(one(abc[i], direct[i], what)?);
                staged.unfilled[i] = !direct[i];
            }
        }
        Ok(())
    }

    /// The first `k` of circuit `ci`'s vectors staged ahead on the upload
    /// stream: a in the last quotient's b buffer ([`GpuCall::spare`]), the
    /// rest allocated from the compute pool, which holds the buffers that
    /// quotient freed (the pre-stage pool could not reuse them: on a card
    /// with no spare memory its allocation would fail). Reusing b's buffer
    /// keeps the pool's blocks as the fallback path leaves them: a new
    /// vector placed in a freed block lets the H-MSM's buffers split the
    /// other one, and the next quotient maps the H-MSM's ~2 GB again
    /// (BENCHMARKS.md, 9d100d1). Copied directly where page-locked, else
    /// left unfilled for the ring.
    fn stage_part(&self, ci: usize, abc: &Abc<'_>, n: usize, k: usize, mut spare: Option<ScalarBuf>) -> Result<StagedAbc> {
        let direct = self.stageable(ci).1;
        let mut staged = StagedAbc { v: Default::default(), unfilled: [false; 3] };
        for (i, what) in ["stage a ahead", "stage b ahead", "stage c ahead"].into_iter().enumerate().take(k) {
            let v = abc[i];
            let mut d = match spare.take() {
                Some(mut d) => {
                    if v.len() < n {
                        self.upload.memset_zeros(&mut d.slice_mut(4 * v.len()..)).map_err(cuda_err(what))?;
                    }
                    d
                }
                // SAFETY: the first 4·len words are written before any read:
                // by the copy below, or by the ring's fill (`fill_ring`, which
                // runs before the quotient reads a staged vector).
                None => ScalarBuf::owned(unsafe { self.exec.alloc_padded_on::<u64>(&self.upload, 4 * n, 4 * v.len(), what) }?),
            };
            if direct[i] {
                self.upload.memcpy_htod(limbs(v), &mut d.slice_mut(..4 * v.len())).map_err(cuda_err(what))?;
            }
            staged.unfilled[i] = !direct[i];
            staged.v[i] = Some(d);
        }
        Ok(staged)
    }
}

#[cfg(test)]
mod tests {
    use super::{ahead_beside_streamed, ahead_vectors, growth_target, part_vectors, phase1_plan, restage_vectors, KeyShape, Phase1, Room};

    /// The porep-32g key's shape (bases per query vector).
    const POREP_32G: KeyShape = KeyShape { h: 134_217_727, l: 130_169_893, a: 129_753_620, b_g1: 33_112_282, b_g2: 33_112_282 };

    /// At porep-32g (1, 16 and 768 MiB chunks), the batch additions fit
    /// beside the last H-MSM within the call's peak, for one circuit and for
    /// a sector's ten; at 2^18 (tests/batch_add_beside.rs on a GPU) with 1
    /// MiB chunks, not with 16 MiB ones.
    #[test]
    fn batch_additions_fit_beside_a_streamed_h_msm() {
        use super::beside_h_msm_bytes;
        let porep = POREP_32G;
        for g2_msm_on_device in [false, true] {
            for chunk in [1 << 20, 16 << 20, crate::config::GPU_CHUNK_DEFAULT] {
                let s = crate::config::Settings { g2_msm_on_device, gpu_chunk: chunk, ..Default::default() };
                for circuits in [1, 10] {
                    let (together, peak) = beside_h_msm_bytes(1 << 27, &porep, &s, circuits);
                    assert!(together <= peak, "{circuits} circuits, chunk {chunk}: {together} > {peak}");
                }
                // The SHA-256 key of 2^18 that tests/batch_add_beside.rs proves with on a GPU.
                let sha = KeyShape { h: 262_143, l: 239_427, a: 239_430, b_g1: 61_327, b_g2: 61_327 };
                let (together, peak) = beside_h_msm_bytes(1 << 18, &sha, &s, 3);
                assert_eq!(together <= peak, chunk == 1 << 20, "SHA-256 2^18, chunk {chunk}: {together} against {peak}");
            }
        }
    }

    /// A call waiting for a busy compute lock stages the rest of circuit 0
    /// where it fits beside the reserve, else (`on`) as many as fit, never
    /// in the reusable memory the reserve would need, never past three.
    /// The figures of a third call on an 80 GB card with porep-32g's key
    /// resident (H100, session 38's W = 3 run): 15.2 GB free at its
    /// admission, ~28.1 GB once the computing call's phase 2 has ended.
    #[test]
    fn circuit_0_is_staged_further_while_waiting_where_the_room_allows() {
        const GB: usize = 1_000_000_000;
        let (vector, reserve) = (4_294_967_296, 13_430_293_152);
        assert_eq!(restage_vectors(15_221_325_824, reserve, 0, vector, 0, true), 0, "at its admission");
        assert_eq!(restage_vectors(28_100_000_000, reserve, 0, vector, 0, true), 3, "after the computing call");
        assert_eq!(restage_vectors(23_800_000_000, reserve, 0, vector, 0, true), 2);
        assert_eq!(restage_vectors(23_800_000_000, reserve, 0, vector, 0, false), 0, "whole: all three or none");
        assert_eq!(restage_vectors(28_100_000_000, reserve, 0, vector, 0, false), 3);
        assert_eq!(restage_vectors(23_800_000_000, reserve, 0, vector, 2, true), 1, "the rest after a part");
        assert_eq!(restage_vectors(23_800_000_000, reserve, 0, vector, 2, false), 1, "the rest is the whole circuit");
        assert_eq!(restage_vectors(100 * GB, reserve, 0, vector, 3, true), 0, "nothing past three");
        // Reusable memory counts only as the vectors it becomes: 3 idle
        // vectors in 20 GB leave 7.1 GB for a 13.4 GB reserve.
        assert_eq!(restage_vectors(20 * GB, reserve, 3 * vector, vector, 0, true), 0);
        assert_eq!(restage_vectors(20 * GB + reserve, reserve, 3 * vector, vector, 0, true), 3);
        // Edges: exactly enough, a byte short, sums that would overflow.
        assert_eq!(restage_vectors(3 * vector + reserve, reserve, 0, vector, 0, true), 3);
        assert_eq!(restage_vectors(3 * vector + reserve - 1, reserve, 0, vector, 0, true), 2);
        assert_eq!(restage_vectors(usize::MAX - 1, usize::MAX, 0, vector, 0, true), 0);
    }

    /// Over porep-32g's resident key (any chunk size, one circuit or ten)
    /// the last H-MSM keeps its one piece with the batch additions beside
    /// it, and the H step, the batch additions as over a streamed key and
    /// the quotient's b before the H-MSM stay within the call's peak. At
    /// 2^18 (SHA-256, three circuits) they fit with 1 MiB chunks
    /// (tests/batch_add_beside.rs runs it on a GPU) and with the default's
    /// (the sums' step is the peak there); with 16 MiB chunks the batch
    /// additions' buffers leave the H-MSM no room.
    #[test]
    fn batch_additions_fit_beside_a_resident_h_msm() {
        use super::super::msm::h_msm_resident_bytes;
        use super::{beside_resident_h_msm_cap, compute_peak_bytes, largest_batch_add_bytes};
        for chunk in [1 << 20, 16 << 20, crate::config::GPU_CHUNK_DEFAULT] {
            let s = crate::config::Settings { g2_msm_on_device: true, gpu_chunk: chunk, ..Default::default() };
            for circuits in [1, 10] {
                let n = 1 << 27;
                let cap = beside_resident_h_msm_cap(n, &POREP_32G, &s, circuits).unwrap_or_else(|| panic!("porep-32g, chunk {chunk}, {circuits} circuits"));
                assert!(cap >= h_msm_resident_bytes(POREP_32G.h, chunk), "chunk {chunk}: {cap}");
                let peak = compute_peak_bytes(n, &POREP_32G, &s);
                assert!(32 * n + cap.max(32 * n) + largest_batch_add_bytes(&POREP_32G, &s, circuits) <= peak, "chunk {chunk}, {circuits} circuits");
            }
            let sha = KeyShape { h: 262_143, l: 239_427, a: 239_430, b_g1: 61_327, b_g2: 61_327 };
            let cap = beside_resident_h_msm_cap(1 << 18, &sha, &s, 3);
            assert_eq!(cap.is_some(), chunk != 16 << 20, "SHA-256 2^18, chunk {chunk}: {cap:?}");
        }
    }

    /// At porep-32g the quotient's a, b, c leave room for two sets of any
    /// tail put ahead over a streamed key (the L tail of 2,118,373 G1
    /// points, B′'s of 1,538,054 in G2), for one circuit and a sector's ten;
    /// where the sums' step is the peak, none.
    #[test]
    fn tails_ahead_fit_a_streamed_porep_key() {
        use super::super::msm::ahead_set_bytes;
        use super::{compute_peak_bytes, tails_ahead_room};
        let porep = POREP_32G;
        for g2_msm_on_device in [false, true] {
            let s = crate::config::Settings { g2_msm_on_device, ..Default::default() };
            let room = tails_ahead_room(1 << 27, &porep, &s);
            assert!(room < compute_peak_bytes(1 << 27, &porep, &s));
            for circuits in [1, 10] {
                for (points, words) in [(2_118_373, 12), (1_538_054, 24)] {
                    let set = ahead_set_bytes(words, points, circuits, false);
                    assert!(2 * set <= room, "{circuits} circuits, {points} points of {words} words: 2 × {set} B > {room} B");
                }
            }
        }
        // A key as large as its domain, whose L sum's step is the peak.
        let wide = KeyShape { h: (1 << 20) - 1, l: 1 << 22, a: 1 << 20, b_g1: 1 << 18, b_g2: 1 << 18 };
        assert_eq!(tails_ahead_room(1 << 20, &wide, &crate::config::Settings::default()), 0);
    }

    #[test]
    fn a_ramp_yields_to_a_vector_staged_ahead() {
        use super::super::msm::{h_msm_budget, h_msm_streamed_bytes};
        let (h, chunk) = ((1usize << 27) - 1, crate::config::GPU_CHUNK_DEFAULT);
        let budget = h_msm_budget(h, chunk);
        let (ramped, plain) = (h_msm_streamed_bytes(h, chunk, true, true, budget), h_msm_streamed_bytes(h, chunk, true, false, budget));
        assert!(ramped > plain, "the ramp's chunks take more: {ramped} against {plain} B");
        let (vector, margin) = (32usize << 27, crate::config::Settings::default().vram_margin);
        // porep-32g as a 16 GiB card, between a quotient and its H-MSM (the
        // room logged on an H100 at 88f932e, the spare b counted): with the
        // ramp no vector fits beside the H-MSM, without it one does.
        let r = Room { avail: 7_647_461_376, compute_avail: 11_942_428_672, one_circuit: 12_884_901_888, reserve: 13_430_293_152, returning: 0 };
        assert_eq!(ahead_vectors(&r, vector, ramped, margin), 0);
        assert_eq!(ahead_beside_streamed(&r, vector, ramped, plain, margin), (1, Some(plain)), "the ramp yields");
        // Room for all three either way (a big card): the ramp stays.
        let big = Room { avail: 60 << 30, compute_avail: 60 << 30, one_circuit: 12_884_901_888, reserve: 13_430_293_152, returning: 0 };
        assert_eq!(ahead_beside_streamed(&big, vector, ramped, plain, margin), (3, None));
        // No room either way: nothing staged, and the ramp stays.
        let none = Room { avail: 1 << 30, compute_avail: 1 << 30, ..r };
        assert_eq!(ahead_beside_streamed(&none, vector, ramped, plain, margin), (0, None));
        // No ramp (equal bytes): nothing to yield.
        assert_eq!(ahead_beside_streamed(&r, vector, plain, plain, margin), (1, None));
        // The cap is a budget the H-MSM's plain table fits and its ramp does not.
        let t = super::super::msm::shared_table_tuning::<super::super::msm::G1>(h, chunk, plain).expect("the plain table fits its own bytes");
        assert_eq!(t.window_bits, 20);
        assert_eq!(h_msm_streamed_bytes(h, chunk, true, true, plain), plain, "under the cap the ramp takes chunks of one size");
    }

    #[test]
    fn staging_ahead_never_raises_the_calls_peak() {
        const GB: usize = 1_000_000_000;
        let room = |avail: usize, reserve: usize| Room { avail, compute_avail: avail, one_circuit: 3 * 4 * GB, reserve, returning: 0 };
        let (vector, margin) = (4 * GB, GB / 2);
        // A big card: the whole circuit fits beside a computing call's peak.
        assert_eq!(ahead_vectors(&room(40 * GB, 14 * GB), vector, 2 * GB, margin), 3);
        // porep-32g as a 16 GiB card: peak 13.4 GB (the quotient), H-MSM 4 GB of
        // coefficients + 2 GB of chunks: one vector fits in the peak, not two.
        let r = room(12 * GB, 13 * GB + 9 * GB / 10);
        assert_eq!(ahead_vectors(&r, vector, 2 * GB, margin), 1);
        // The same with a shared bucket table (its chunks and table, ~3.3 GB): still one.
        let (h, chunk) = ((1usize << 27) - 1, crate::config::GPU_CHUNK_DEFAULT);
        let table = super::super::msm::h_msm_streamed_bytes(h, chunk, true, false, super::super::msm::h_msm_budget(h, chunk));
        assert!(table > 3 * GB && table < 4 * GB, "{table} B");
        assert_eq!(ahead_vectors(&r, vector, table, margin), 1);
        // The same, with less free memory than the peak leaves: none.
        assert_eq!(ahead_vectors(&room(5 * GB, 13 * GB + 9 * GB / 10), vector, 2 * GB, margin), 0);
        // Free memory counted only where the compute pool can use it.
        let r = Room { compute_avail: 3 * GB, ..room(12 * GB, 13 * GB + 9 * GB / 10) };
        assert_eq!(ahead_vectors(&r, vector, 2 * GB, margin), 0);
        // A peak far above the H-MSM's footprint: at most two (three is phase 1's rule).
        assert_eq!(ahead_vectors(&room(30 * GB, 60 * GB), vector, GB, margin), 2);

        // Over a grid: the vectors staged in part, with the coefficients and the
        // H-MSM's buffers, stay within the call's peak and the free memory, and
        // one more vector would not.
        let fits = |k: usize, r: &Room, h_work: usize| (k + 1) * vector + h_work <= r.reserve - margin && k * vector + h_work + margin <= r.compute_avail;
        for avail in (0..=40).map(|g| g * GB) {
            for reserve in (1..=30).map(|g| g * GB) {
                for h_work in [0, GB / 3, 2 * GB, 5 * GB] {
                    let r = Room { compute_avail: avail.saturating_sub(GB), ..room(avail, reserve) };
                    let k = ahead_vectors(&r, vector, h_work, margin);
                    if 3 * vector + r.reserve <= r.avail {
                        assert_eq!(k, 3);
                        continue;
                    }
                    assert!(k <= 2 && (k == 0 || fits(k, &r, h_work)), "k {k}: avail {avail}, reserve {reserve}, h_work {h_work}");
                    assert!(k == 2 || !fits(k + 1, &r, h_work), "k {k} not the most: avail {avail}, reserve {reserve}, h_work {h_work}");
                }
            }
        }
    }

    /// Phase 1's part of circuit 0: at porep-32g on an 80 GB H100 with the
    /// key resident, a call admitted while another computed found these
    /// figures (BENCHMARKS.md, 48fafcf's W = 2 fallback reason): a and b fit.
    #[test]
    fn part_of_circuit_0_fits_beside_the_reserve_and_never_in_reusable_memory() {
        let v = 32 << 27;
        let (avail, reserve) = (23_811_260_416, 13_430_293_152);
        assert_eq!(part_vectors(avail, reserve, 0, v), 2);
        assert_eq!(part_vectors(reserve + v + v / 2, reserve, 0, v), 1);
        assert_eq!(part_vectors(reserve + v - 1, reserve, 0, v), 0);
        assert_eq!(part_vectors(reserve / 2, reserve, 0, v), 0, "short of the reserve itself");
        assert_eq!(part_vectors(reserve + 10 * v, reserve, 0, v), 2, "at most two: three are a whole circuit");
        // Idle vectors count only as the vectors they become.
        assert_eq!(part_vectors(reserve + 5 * v / 2, reserve, 2 * v, v), 2);
        assert_eq!(part_vectors(reserve + 5 * v / 2, reserve, 3 * v, v), 0, "the reserve would lie in an idle vector");
        assert_eq!(part_vectors(reserve + 3 * v / 2, reserve, 3 * v, v), 0);
        assert_eq!(part_vectors(v, reserve, 3 * v, v), 0, "reusable beyond avail (a VRAM limit)");
        // The boundaries: exactly k vectors beside the reserve.
        assert_eq!(part_vectors(reserve + 2 * v, reserve, 0, v), 2);
        assert_eq!(part_vectors(reserve + 2 * v - 1, reserve, 0, v), 1);
        assert_eq!(part_vectors(reserve + v, reserve, 0, v), 1);
        assert_eq!(part_vectors(reserve + 2 * v, reserve, v, v), 2, "one idle vector becomes one of the two");
        assert_eq!(part_vectors(reserve + 2 * v, reserve, 3 * v, v), 0, "outside the idle vectors the reserve falls short");
        assert_eq!(part_vectors(1 << 40, usize::MAX, 0, v), 0, "a reserve that fills the address space");
    }

    /// Phase 1's decision: whole circuits, else part of circuit 0 (only with
    /// `SUPRASEAL_C2_PRESTAGE=on`), else nothing, and the pool growth it allows.
    #[test]
    fn phase_1_stages_whole_circuits_else_part_of_circuit_0_else_nothing() {
        let v = 32 << 27;
        let one = 3 * v;
        let (avail, reserve) = (23_811_260_416, 13_430_293_152);
        // porep-32g on an 80 GB H100, key resident, one call computing.
        assert_eq!(phase1_plan(avail, reserve, 0, one, 1, true), Phase1::Part { vectors: 2, new_room: avail - reserve });
        assert_eq!(phase1_plan(avail, reserve, 0, one, 1, false), Phase1::Fallback, "SUPRASEAL_C2_PRESTAGE=whole");
        // Idle vectors: only as many as are staged count; the growth excludes them.
        assert_eq!(phase1_plan(avail, reserve, 2 * v, one, 1, true), Phase1::Part { vectors: 2, new_room: avail - 2 * v - reserve });
        assert_eq!(phase1_plan(avail, reserve, 3 * v, one, 1, true), Phase1::Fallback, "the reserve would lie in an idle vector");
        assert_eq!(phase1_plan(reserve + 2 * v, reserve, 3 * v, one, 1, true), Phase1::Fallback);
        // Whole circuits, as many as fit and are pinned.
        assert_eq!(phase1_plan(reserve + one, reserve, 0, one, 10, true), Phase1::Whole { circuits: 1, new_room: one });
        assert_eq!(phase1_plan(reserve + one - 1, reserve, 0, one, 10, true), Phase1::Part { vectors: 2, new_room: one - 1 });
        assert_eq!(phase1_plan(reserve + 5 * one / 2, reserve, one, one, 10, true), Phase1::Whole { circuits: 2, new_room: 3 * one / 2 });
        assert_eq!(phase1_plan(reserve + 5 * one, reserve, 0, one, 3, true), Phase1::Whole { circuits: 3, new_room: 5 * one });
        // A 16 GiB card: nothing beside the reserve; and a margin that overflows.
        assert_eq!(phase1_plan(16 << 30, reserve, 0, one, 1, true), Phase1::Fallback);
        assert_eq!(phase1_plan(avail, usize::MAX, 0, one, 1, true), Phase1::Fallback);
    }

    #[test]
    fn pool_growth_covers_the_waiting_calls_within_the_room() {
        // Empty cache, two calls waiting behind one of 3 vectors: hold 9 at once.
        assert_eq!(growth_target(2, 3, 0, 100), Some(9));
        // Three cached (a finished call's pre-stage): still 9 held, 6 mapped.
        assert_eq!(growth_target(2, 3, 3, 100), Some(9));
        // The cache already covers everyone: nothing.
        assert_eq!(growth_target(2, 3, 9, 100), None);
        assert_eq!(growth_target(2, 3, 12, 0), None);
        // Nobody waiting: the call's own allocations are the growth.
        assert_eq!(growth_target(0, 3, 0, 100), None);
        // Room for only 4 new vectors: 3 cached + 4.
        assert_eq!(growth_target(2, 3, 3, 4), Some(7));
        // Room for no more than the call's own: nothing extra.
        assert_eq!(growth_target(2, 3, 0, 3), None);
    }
}
