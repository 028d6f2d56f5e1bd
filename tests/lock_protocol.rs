//! The lock protocol of docs/ARCHITECTURE.md §5, observed through the library's per-call
//! reports (`pipeline::record_reports`): with several workers sharing one
//! handle, no call holds both locks, the memory lock is always released before
//! the compute lock is asked for, each lock has one holder at a time, and the
//! proofs are byte-identical across lock modes and the fallback path. Runs on
//! whatever backend `auto` picks (the CPU in CI, the GPU on the H200), so the
//! ordering is checked in CI. The GPU-only part (injected allocation faults,
//! the VRAM limit) reports itself skipped without a GPU.
//!
//! Tests here change environment switches and read process-wide reports, so
//! they take one lock and run one at a time.

mod common;
use common::{assert_one_holder, bytes, switches, Handle};

use std::collections::HashMap;
use std::sync::Mutex;

use blstrs::Scalar;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use supraseal_c2::locks::LockHandle;
use supraseal_c2::pipeline::{self, CallReport};
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

static SERIAL: Mutex<()> = Mutex::new(());

fn check_protocol(reports: &[CallReport], two_locks: bool) {
    for r in reports {
        assert_eq!(r.error, None);
        let compute = r.compute.expect("every call takes the compute lock");
        match (two_locks, r.mem) {
            (true, Some(mem)) => {
                assert!(mem.released <= compute.requested, "memory lock still held when the compute lock was requested: {r:?}");
                assert!(mem.requested <= mem.acquired && mem.acquired <= mem.released);
                // Admissions made again while the compute lock was waited for.
                for m in &r.restage_mem {
                    assert!(mem.released <= m.acquired && m.released <= compute.acquired, "a second memory-lock hold outside the wait: {r:?}");
                }
            }
            (false, None) => {}
            (two, mem) => panic!("two-lock mode {two} but memory-lock span {mem:?}"),
        }
    }
    assert_one_holder(reports.iter().filter_map(|r| r.compute).collect(), "compute lock");
    assert_one_holder(reports.iter().flat_map(|r| r.mem.into_iter().chain(r.restage_mem.iter().copied())).collect(), "memory lock");
}

#[test]
fn workers_sharing_a_handle_follow_the_protocol_and_modes_agree() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    const WORKERS: usize = 4;
    const PROOFS: usize = 4;
    let keys = common::keys(Kind::Mimc, 10);
    let srs = Params::open(&keys.path, true).unwrap();
    let seed: u64 = rand::random();
    eprintln!("seed {seed}");
    // Each worker owns its witnesses (a/b/c are pinned per call on the GPU).
    let witnesses: Vec<Vec<(Witness, Vec<Scalar>)>> = (0..WORKERS)
        .map(|w| kit::witnesses(Kind::Mimc, 10, 2, &mut ChaCha20Rng::seed_from_u64(seed + w as u64)).unwrap())
        .collect();
    let mut first: HashMap<(usize, usize), Vec<u8>> = HashMap::new();
    for (mode, vars, two) in [
        ("two locks", &[][..], true),
        ("single lock", &[("SUPRASEAL_C2_LOCKS", "single")][..], false),
        ("fallback", &[("SUPRASEAL_C2_PRESTAGE", "off")][..], true),
        ("a of circuit 0 pre-staged", &[("SUPRASEAL_C2_PRESTAGE_PART", "1"), ("SUPRASEAL_C2_PRESTAGE_RETRY", "off")][..], true),
        ("a, b of circuit 0 pre-staged", &[("SUPRASEAL_C2_PRESTAGE_PART", "2"), ("SUPRASEAL_C2_PRESTAGE_RETRY", "off")][..], true),
        ("a of circuit 0 pre-staged, the rest while waiting", &[("SUPRASEAL_C2_PRESTAGE_PART", "1")][..], true),
        ("key streamed", &[("SUPRASEAL_C2_KEY_RESIDENT", "off")][..], true),
        ("key streamed, compute cache kept for the calls in flight", &[("SUPRASEAL_C2_KEY_RESIDENT", "off"), ("SUPRASEAL_C2_COMPUTE_CACHE", "busy")][..], true),
    ] {
        switches(vars);
        let keeps_before = supraseal_c2::gpu::pool_state(0).map(|s| s.keeps);
        let handle = Handle(unsafe { ffi::create_gpu_mutex() });
        pipeline::record_reports(true);
        let results: Vec<((usize, usize), Vec<u8>)> = std::thread::scope(|scope| {
            let tasks: Vec<_> = (0..WORKERS)
                .map(|w| {
                    let (srs, keys, witnesses, handle) = (&srs, &keys, &witnesses, &handle);
                    scope.spawn(move || {
                        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ (w as u64 + 100));
                        (0..PROOFS)
                            .map(|p| {
                                let (wit, inputs) = &witnesses[w][p % 2];
                                let r = common::random_scalars(&mut rng, 2);
                                let proof = ffi::prove(srs, std::slice::from_ref(wit), &r[..1], &r[1..], handle.0, 0)
                                    .unwrap_or_else(|e| panic!("{mode}: worker {w} proof {p}: {e}"));
                                assert!(ffi::verify(&keys.vk, &proof[0], inputs), "{mode}: worker {w} proof {p} does not verify");
                                ((w, p), bytes(&proof[0]))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            tasks.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        let reports = pipeline::take_reports();
        pipeline::record_reports(false);
        assert_eq!(reports.len(), WORKERS * PROOFS, "{mode}: one report per call");
        // On the GPU: the switch reaches phase 1 (the CPU stages nothing).
        if let Some((_, v)) = vars.iter().find(|(k, _)| *k == "SUPRASEAL_C2_PRESTAGE_PART").filter(|_| reports[0].backend.as_str() == "gpu") {
            let part = v.parse::<usize>().ok();
            assert!(
                reports.iter().all(|r| r.prestaged == Some(false) && r.prestaged_part == part),
                "{mode}: every call staged part of circuit 0 in phase 1: {:?}",
                reports.iter().map(|r| (r.prestaged, r.prestaged_part, r.reason.clone())).collect::<Vec<_>>()
            );
        }
        check_protocol(&reports, two);
        let h_arc = supraseal_c2::abi::handles::lock(handle.0).expect("a live lock handle");
    let h: &LockHandle = &h_arc;
        assert!(h.locks.mem_is_free() && h.locks.compute_is_free(), "{mode}: locks released");
        unsafe { ffi::destroy_gpu_mutex(handle.0) };
        for (key, b) in results {
            match first.get(&key) {
                Some(prev) => assert_eq!(prev, &b, "{mode}: proof {key:?} differs from the two-lock proof for the same r, s"),
                None => {
                    first.insert(key, b);
                }
            }
        }
        eprintln!(
            "{mode}: {} calls, backend {}, pre-staged {}, more of circuit 0 staged while waiting {}",
            reports.len(),
            reports[0].backend,
            reports.iter().filter(|r| r.prestaged == Some(true)).count(),
            reports.iter().filter(|r| r.restaged.is_some()).count()
        );
        if vars.iter().any(|(k, _)| *k == "SUPRASEAL_C2_PRESTAGE_RETRY") {
            assert!(reports.iter().all(|r| r.restaged.is_none()), "{mode}: a call staged more with the retry off");
        }
        // Over a streamed key, whatever the calls in flight kept, the
        // device's last call gives the compute pool's cache back. How often
        // they kept it is printed (the keep bound is the peak rounded up to
        // the pool's 32 MiB blocks).
        if mode.starts_with("key streamed") {
            if let (Ok(s), Ok(before)) = (supraseal_c2::gpu::pool_state(0), keeps_before) {
                eprintln!("{mode}: compute pool's cache kept {} times for calls in flight", s.keeps.1 - before.1);
                assert_eq!(s.compute_cache, 0, "{mode}: the compute pool's cache once the device is idle: {s:?}");
            }
        }
    }
    switches(&[]);
}

/// For the GPU-only tests: MiMC 2^12's keys (opened), `witnesses` random
/// witnesses with their inputs, and `scalars` random scalars; `None` (and
/// the test says it is skipped) without a GPU backend.
#[allow(clippy::type_complexity)]
fn gpu_mimc12(witnesses: usize, scalars: usize) -> Option<(kit::Keys, Params, Vec<(Witness, Vec<Scalar>)>, Vec<Scalar>)> {
    if std::env::var("SUPRASEAL_C2_BACKEND").is_ok_and(|b| b == "cpu") || free_vram().is_none() {
        eprintln!("skipped: no GPU backend (build without kernels, no libcuda or no device)");
        return None;
    }
    let keys = common::keys(Kind::Mimc, 12);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 12, witnesses, &mut rng).unwrap();
    let rs = common::random_scalars(&mut rng, scalars);
    Some((keys, srs, batch, rs))
}

/// A call whose phase 1 staged part of circuit 0 (`SUPRASEAL_C2_PRESTAGE_PART=1`)
/// and finds its compute lock busy (held here) stages the rest once the
/// device's memory changes: another call's phase 2 ending, under a handle
/// of its own. Its proof verifies and equals the proof of the same witness,
/// r and s made with the retry off (a uploaded in phase 1, b and c in its
/// turn). GPU only: the CPU backend stages nothing.
#[test]
fn a_call_waiting_for_the_compute_lock_stages_the_rest_of_circuit_0() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some((keys, srs, batch, rs)) = gpu_mimc12(2, 4) else { return };
    let (waiting, other) = (Handle(unsafe { ffi::create_gpu_mutex() }), Handle(unsafe { ffi::create_gpu_mutex() }));
    let prove = |i: usize, handle: &Handle| ffi::prove(&srs, std::slice::from_ref(&batch[i].0), &rs[2 * i..2 * i + 1], &rs[2 * i + 1..2 * i + 2], handle.0, 0);
    switches(&[("SUPRASEAL_C2_PRESTAGE_PART", "1")]);
    pipeline::record_reports(true);
    let h_arc = supraseal_c2::abi::handles::lock(waiting.0).expect("a live lock handle");
    let held = h_arc.locks.compute_only();
    let (proof, reports) = std::thread::scope(|scope| {
        let call = scope.spawn(|| prove(0, &waiting));
        // The call admits (a staged), then waits for the lock held here.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // A memory event: a call under another handle computes and ends.
        let p = prove(1, &other).expect("the other call");
        assert!(ffi::verify(&keys.vk, &p[0], &batch[1].1), "the other call's proof");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let before = pipeline::take_reports();
        drop(held);
        let proof = call.join().unwrap().expect("the waiting call");
        (proof, [before, pipeline::take_reports()].concat())
    });
    assert!(ffi::verify(&keys.vk, &proof[0], &batch[0].1), "the waiting call's proof");
    let mine = reports.iter().find(|r| r.compute.is_some_and(|c| c.wait() >= std::time::Duration::from_secs(2))).expect("the waiting call's report");
    assert_eq!((mine.prestaged, mine.prestaged_part, mine.restaged), (Some(false), Some(1), Some(2)), "{mine:?}");
    assert!(!mine.restage_mem.is_empty(), "its admissions while waiting are in its report");
    check_protocol(std::slice::from_ref(mine), true);
    let other_report = reports.iter().find(|r| r.compute.is_some_and(|c| c.wait() < std::time::Duration::from_secs(2))).expect("the other call's report");
    assert_eq!(other_report.restaged, None, "the other call found its lock free");
    switches(&[("SUPRASEAL_C2_PRESTAGE_PART", "1"), ("SUPRASEAL_C2_PRESTAGE_RETRY", "off")]);
    let again = prove(0, &waiting).expect("the same proof with the retry off");
    let r = pipeline::take_reports();
    pipeline::record_reports(false);
    switches(&[]);
    assert_eq!(r[0].restaged, None);
    assert_eq!(bytes(&proof[0]), bytes(&again[0]), "other bytes for the same witness, r, s");
    for h in [waiting, other] {
        unsafe { ffi::destroy_gpu_mutex(h.0) };
    }
    eprintln!("a call staged b and c of circuit 0 while it waited: {:?}", mine.stage_detail);
}

/// Free VRAM of GPU 0, or `None` without a GPU backend. Read without
/// opening a call, whose drop would trim the pools.
fn free_vram() -> Option<usize> {
    supraseal_c2::gpu::pool_state(0).ok().map(|s| s.free)
}

/// What the library holds on GPU 0 (its pools' allocations) and the free
/// VRAM with the compute pool's cache (kept between calls over a resident
/// key), for leak checks; the device is idle, so the pre-stage pool holds
/// no cache.
fn device_use() -> (usize, usize) {
    let s = supraseal_c2::gpu::pool_state(0).expect("GPU 0");
    assert_eq!(s.stage_cache, 0, "the pre-stage pool is trimmed when the device goes idle");
    (s.in_use, s.free + s.compute_cache)
}

/// Nothing left behind between `before` and `after` ([`device_use`]): the
/// pools hold exactly what they held, and free VRAM is the same but for at
/// most one 2 MiB granule of the driver's lazy reservations (made the first
/// time some pattern of concurrent streams occurs, at no fixed call).
fn assert_nothing_left(before: (usize, usize), after: (usize, usize), what: &str) {
    assert_eq!(after.0, before.0, "{what}: the pools hold {} B after, {} B before", after.0, before.0);
    assert!(after.1 + (2 << 20) >= before.1, "{what}: free VRAM {} B before, {} B after", before.1, after.1);
}

#[test]
fn gpu_allocation_faults_and_vram_limit() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some((keys, srs, batch, rs)) = gpu_mimc12(6, 2) else { return };
    let prove = |i: usize| ffi::prove(&srs, std::slice::from_ref(&batch[i].0), &rs[..1], &rs[1..], std::ptr::null_mut(), 0);
    switches(&[]);
    let clean = prove(0).unwrap();

    // Phase 1 fault: the call falls back and the proof is the same.
    supraseal_c2::gpu::reset_fault_counters();
    switches(&[("SUPRASEAL_C2_FAULT_ALLOC", "2@phase1")]);
    pipeline::record_reports(true);
    let p = prove(0).expect("a phase-1 fault must fall back, not fail");
    let r = pipeline::take_reports();
    assert_eq!(bytes(&p[0]), bytes(&clean[0]));
    assert_eq!(r[0].prestaged, Some(false));
    assert!(r[0].reason.as_deref().unwrap_or("").contains("injected"), "{:?}", r[0].reason);
    eprintln!("phase-1 fault: fallback, reason {:?}", r[0].reason);

    // Phase 2 fault among 3 workers: exactly one call fails, the rest verify.
    let handle = Handle(unsafe { ffi::create_gpu_mutex() });
    let run3 = || -> Vec<Result<bool, (i32, String)>> {
        std::thread::scope(|scope| {
            let tasks: Vec<_> = (0..3)
                .map(|w| {
                    let (srs, keys, batch, rs, handle) = (&srs, &keys, &batch, &rs, &handle);
                    scope.spawn(move || {
                        (0..3)
                            .map(|p| {
                                let (wit, inputs) = &batch[(w * 2 + p) % 6];
                                ffi::prove(srs, std::slice::from_ref(wit), &rs[..1], &rs[1..], handle.0, 0)
                                    .map(|pr| ffi::verify(&keys.vk, &pr[0], inputs))
                                    .map_err(|e| (e.code, e.message))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            tasks.into_iter().flat_map(|t| t.join().unwrap()).collect()
        })
    };
    // Warm-up without a fault: the driver's one-time reservations for
    // concurrent streams happen here, not inside the measured run.
    switches(&[]);
    assert!(run3().iter().all(|o| o == &Ok(true)));
    let before = device_use();
    supraseal_c2::gpu::reset_fault_counters();
    switches(&[("SUPRASEAL_C2_FAULT_ALLOC", "9@phase2")]);
    pipeline::record_reports(true);
    let outcomes = run3();
    let reports = pipeline::take_reports();
    pipeline::record_reports(false);
    switches(&[]);
    let failed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "exactly the injected fault fails: {outcomes:?}");
    assert_eq!(failed[0].0, 2, "CUDA_ERROR_OUT_OF_MEMORY");
    assert!(failed[0].1.contains("injected"), "{}", failed[0].1);
    assert!(outcomes.iter().filter_map(|o| o.as_ref().ok()).all(|&v| v), "the other proofs verify");
    check_protocol_except_errors(&reports);
    let h_arc = supraseal_c2::abi::handles::lock(handle.0).expect("a live lock handle");
    let h: &LockHandle = &h_arc;
    assert!(h.locks.mem_is_free() && h.locks.compute_is_free(), "both locks released after the fault");
    unsafe { ffi::destroy_gpu_mutex(handle.0) };
    let after = device_use();
    assert_nothing_left(before, after, "the faulted run");
    eprintln!("phase-2 fault: {:?}; 8 others verified; pools {} -> {} B, free VRAM {} -> {} B", failed[0], before.0, after.0, before.1, after.1);

    // A card too small to pre-stage: fallback, still correct.
    let used_mib = supraseal_c2::gpu::GpuBackendHandle::open(0).unwrap().used_bytes().unwrap() >> 20;
    switches(&[("SUPRASEAL_C2_VRAM_LIMIT_MB", &(used_mib + 256).to_string())]);
    pipeline::record_reports(true);
    let p = prove(0).expect("fallback under the VRAM limit");
    let r = pipeline::take_reports();
    assert_eq!(bytes(&p[0]), bytes(&clean[0]));
    assert_eq!(r[0].prestaged, Some(false), "{:?}", r[0].reason);
    // The key, resident since the first call, gives its room to the call.
    let detail = r[0].stage_detail.clone().unwrap_or_default();
    assert!(detail.contains("resident key released"), "{detail:?}");
    eprintln!("VRAM limit +256 MiB: fallback ({:?}); {detail}", r[0].reason);

    // A card with no room at all: an out-of-memory error, then the next call works.
    // (Measured again: the call above released the resident key for room.)
    let used_mib = supraseal_c2::gpu::GpuBackendHandle::open(0).unwrap().used_bytes().unwrap() >> 20;
    switches(&[("SUPRASEAL_C2_VRAM_LIMIT_MB", &used_mib.to_string())]);
    let e = prove(0).expect_err("no room on the pretended card");
    assert_eq!(e.code, 2, "{e}");
    switches(&[]);
    let p = prove(0).expect("the next call is served");
    assert_eq!(bytes(&p[0]), bytes(&clean[0]));
    pipeline::record_reports(false);
    assert_nothing_left(before, device_use(), "the out-of-memory call and the key's release and upload");
    eprintln!("VRAM limit = in use: error {e}; next call fine");
}

/// The key's bases go up once (in phase 1, reported in the call's phase-1
/// detail), later calls find them there, proofs equal the streamed ones, and
/// dropping the key gives the memory back.
#[test]
fn resident_key_is_uploaded_once_matches_streaming_and_goes_with_its_key() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if std::env::var("SUPRASEAL_C2_BACKEND").is_ok_and(|b| b == "cpu") || free_vram().is_none() {
        eprintln!("skipped: no GPU backend (build without kernels, no libcuda or no device)");
        return;
    }
    let keys = common::keys(Kind::Mimc, 11);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 11, 1, &mut rng).unwrap();
    let rs = common::random_scalars(&mut rng, 2);
    // Not cached: dropping it below ends the key.
    let srs = Params::open(&keys.path, false).unwrap();
    let try_prove = || ffi::prove(&srs, std::slice::from_ref(&batch[0].0), &rs[..1], &rs[1..], std::ptr::null_mut(), 0);
    let prove = || try_prove().unwrap();
    // Start from an empty slot: on a card with no room, an earlier test's
    // resident key gives way (a copy of another key is otherwise kept until
    // it has gone unused for several calls); the call itself then finds no
    // memory.
    switches(&[("SUPRASEAL_C2_VRAM_LIMIT_MB", "1")]);
    assert_eq!(try_prove().expect_err("no room on a 1 MiB card").code, 2);
    switches(&[("SUPRASEAL_C2_KEY_RESIDENT", "off")]);
    let streamed = prove();
    switches(&[]);
    pipeline::record_reports(true);
    let proofs: Vec<_> = (0..3).map(|_| prove()).collect();
    let reports = pipeline::take_reports();
    pipeline::record_reports(false);
    let details: Vec<String> = reports.iter().map(|r| r.stage_detail.clone().unwrap_or_default()).collect();
    let uploads: Vec<usize> = (0..3).filter(|&i| details[i].contains("key resident")).collect();
    assert_eq!(uploads, [0], "the first call uploads, the others find it: {details:?}");
    assert!(!details[2].contains("released"), "the last call keeps it: {details:?}");
    let bytes_of = |d: &str| -> usize {
        let n = d.split("key resident (").nth(1).and_then(|t| t.split(' ').next()).unwrap_or("0");
        n.parse().unwrap_or(0)
    };
    let key_bytes = bytes_of(&details[uploads[0]]);
    assert!(key_bytes > 0, "{details:?}");
    for (i, p) in proofs.iter().enumerate() {
        assert_eq!(bytes(&p[0]), bytes(&streamed[0]), "call {i}: resident vs streamed bases");
    }
    assert!(ffi::verify(&keys.vk, &proofs[2][0], &batch[0].1), "the proof verifies");
    let held = supraseal_c2::gpu::pool_state(0).unwrap();
    assert!(held.compute_cache > 0, "the compute pool keeps its cache over the resident key: {held:?}");
    drop(srs);
    let after = supraseal_c2::gpu::pool_state(0).unwrap();
    let (held, after) = (held.free, after.free);
    assert!(after + (4 << 20) >= held + key_bytes, "dropping the key frees its {key_bytes} B: free {held} -> {after} B");
    let s = supraseal_c2::gpu::pool_state(0).unwrap();
    assert_eq!((s.compute_cache, s.stage_cache), (0, 0), "the compute pool's cache goes with the resident key");
    eprintln!("resident key: {details:?}; free VRAM {held} -> {after} B after the key is dropped");
}

fn check_protocol_except_errors(reports: &[CallReport]) {
    for r in reports {
        if let (Some(mem), Some(compute)) = (r.mem, r.compute) {
            assert!(mem.released <= compute.requested);
        }
    }
    assert_one_holder(reports.iter().filter_map(|r| r.compute).collect(), "compute lock");
    assert_one_holder(reports.iter().filter_map(|r| r.mem).collect(), "memory lock");
}
