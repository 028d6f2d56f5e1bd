//! Adversarial concurrency on the CPU backend (or whatever `auto` picks): many
//! threads share one lock handle from `create_gpu_mutex` and the NULL default
//! handle, mixing one-shot calls, split-form calls (finalized or destroyed)
//! and calls that fail validation, under both lock modes. A watchdog aborts
//! the process on a deadlock. Checks: every proof verifies and is the same in
//! both modes, no lock is left held, each lock has one holder at a time, no
//! call holds both locks, every successful pipeline call has one report
//! without an error, and pending handles hold no lock.
//!
//! Tests here change environment switches, use the process-wide default
//! handle and read process-wide reports, so they run one at a time.

mod common;
use common::{assert_one_holder, bytes, switches, Handle};

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{mpsc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use blstrs::Scalar;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use supraseal_c2::locks::{self, LockHandle};
use supraseal_c2::pipeline::{self, CallReport};
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::ffi::{self, Params, PendingProof};
use supraseal_c2_cli::kit;

static SERIAL: Mutex<()> = Mutex::new(());


/// Aborts the process unless the returned sender is dropped within `secs`.
fn watchdog(what: &'static str, secs: u64) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(secs)) {
            eprintln!("watchdog: {what} did not finish in {secs} s (deadlock?)");
            std::process::abort();
        }
    });
    tx
}

fn locks_free(h: &LockHandle) -> bool {
    h.locks.mem_is_free() && h.locks.compute_is_free()
}

const K: u32 = 9;
const THREADS: usize = 12;
const OPS: usize = 4;

/// What a worker did: (thread, group, valid pipeline calls, proof bytes by (thread, op)).
type Outcome = (ThreadId, usize, usize, Vec<((usize, usize), Vec<u8>)>);

fn scalars(seed: u64, t: usize, i: usize) -> (Scalar, Scalar) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ ((t as u64) << 16 | i as u64));
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

/// One round of THREADS workers × OPS operations; returns the outcomes.
fn round(
    srs: &Params,
    keys: &kit::Keys,
    pool: &[(Witness, Vec<Scalar>)],
    shared: &Handle,
    seed: u64,
    mode: &str,
) -> Vec<Outcome> {
    std::thread::scope(|scope| {
        let tasks: Vec<_> = (0..THREADS)
            .map(|t| {
                scope.spawn(move || {
                    // Group 0: the shared handle; group 1: NULL (default handle of device 0).
                    let (group, mtx, gpu_index) = match t % 3 {
                        0 => (0, shared.0, 0),
                        1 => (1, std::ptr::null_mut(), -1),
                        _ => (1, std::ptr::null_mut(), 0),
                    };
                    let mut valid = 0;
                    let mut out = Vec::new();
                    for i in 0..OPS {
                        let wi = (t + i) % pool.len();
                        let (w, inputs) = &pool[wi];
                        let (r, s) = scalars(seed, t, i);
                        let one = std::slice::from_ref(w);
                        match (t + i) % 4 {
                            0 => {
                                let p = ffi::prove(srs, one, &[r], &[s], mtx, gpu_index)
                                    .unwrap_or_else(|e| panic!("{mode}: thread {t} op {i} one-shot: {e}"));
                                assert!(ffi::verify(&keys.vk, &p[0], inputs), "{mode}: thread {t} op {i}: proof does not verify");
                                out.push(((t, i), bytes(&p[0])));
                                valid += 1;
                            }
                            1 => {
                                let pending = PendingProof::start(srs, one, &[r], &[s], mtx, gpu_index)
                                    .unwrap_or_else(|e| panic!("{mode}: thread {t} op {i} start: {e}"));
                                let p = pending.finalize().unwrap_or_else(|e| panic!("{mode}: thread {t} op {i} finalize: {e}"));
                                assert!(ffi::verify(&keys.vk, &p[0], inputs), "{mode}: thread {t} op {i}: split proof does not verify");
                                out.push(((t, i), bytes(&p[0])));
                                valid += 1;
                            }
                            2 => {
                                // Started, then destroyed without finalizing.
                                let pending = PendingProof::start(srs, one, &[r], &[s], mtx, gpu_index)
                                    .unwrap_or_else(|e| panic!("{mode}: thread {t} op {i} start: {e}"));
                                drop(pending);
                                valid += 1;
                            }
                            _ => {
                                // Fails validation: r_s is NULL.
                                let a = w.assignment();
                                let mut proof = supraseal_c2::groth16_proof::default();
                                let before = bytes(&proof);
                                let e = ffi::check(unsafe {
                                    ffi::generate_groth16_proofs_c(
                                        &a,
                                        1,
                                        std::ptr::null(),
                                        &s as *const Scalar as *const supraseal_c2::fr_t,
                                        &mut proof,
                                        srs.raw(),
                                        mtx,
                                        gpu_index,
                                    )
                                })
                                .expect_err("r_s NULL must fail");
                                assert_eq!(e.code, libc::EINVAL, "{mode}: {e}");
                                assert!(e.message.contains("r_s"), "{mode}: {e}");
                                assert_eq!(bytes(&proof), before, "no proof written on error");
                            }
                        }
                    }
                    (std::thread::current().id(), group, valid, out)
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().expect("worker panicked")).collect()
    })
}

fn check_reports(reports: &[CallReport], outcomes: &[Outcome], two_locks: bool, mode: &str) {
    let valid: usize = outcomes.iter().map(|o| o.2).sum();
    let ok: Vec<&CallReport> = reports.iter().filter(|r| r.error.is_none()).collect();
    assert_eq!(ok.len(), valid, "{mode}: one report without error per successful pipeline call");
    assert!(reports.len() <= THREADS * OPS, "{mode}: at most one report per call");
    let group_of: HashMap<ThreadId, usize> = outcomes.iter().map(|o| (o.0, o.1)).collect();
    for o in outcomes {
        let n = ok.iter().filter(|r| r.thread == o.0).count();
        assert_eq!(n, o.2, "{mode}: reports of one thread match its calls");
    }
    for r in &ok {
        assert_eq!(r.circuits, 1, "{mode}");
        let compute = r.compute.expect("every call takes the compute lock");
        match (two_locks, r.mem) {
            (true, Some(mem)) => assert!(mem.released <= compute.requested, "{mode}: both locks held: {r:?}"),
            (false, None) => {}
            (two, mem) => panic!("{mode}: two-lock mode {two} but memory-lock span {mem:?}"),
        }
    }
    for g in 0..2 {
        let in_group = || ok.iter().filter(|r| group_of.get(&r.thread) == Some(&g));
        assert_one_holder(in_group().filter_map(|r| r.compute).collect(), "compute lock");
        assert_one_holder(in_group().filter_map(|r| r.mem).collect(), "memory lock");
    }
}

#[test]
fn mixed_one_shot_split_and_failing_calls_share_handles_without_deadlock() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let keys = common::keys(Kind::Mimc, K);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let seed: u64 = rand::Rng::gen(&mut rng);
    let pool = kit::witnesses(Kind::Mimc, K, 3, &mut rng).unwrap();
    let _dog = watchdog("mixed concurrency test", 240);
    let mut first: HashMap<(usize, usize), Vec<u8>> = HashMap::new();
    for (mode, vars, two) in [("two locks", &[][..], true), ("single lock", &[("SUPRASEAL_C2_LOCKS", "single")][..], false)] {
        switches(vars);
        let shared = Handle(unsafe { ffi::create_gpu_mutex() });
        assert!(!shared.0.is_null());
        pipeline::record_reports(true);
        let outcomes = round(&srs, &keys, &pool, &shared, seed, mode);
        let reports = pipeline::take_reports();
        pipeline::record_reports(false);
        check_reports(&reports, &outcomes, two, mode);
        let h_arc = supraseal_c2::abi::handles::lock(shared.0).expect("a live lock handle");
        let h: &LockHandle = &h_arc;
        assert!(locks_free(h), "{mode}: shared handle's locks released");
        assert!(locks_free(locks::default_handle(0)), "{mode}: default handle's locks released");
        unsafe { ffi::destroy_gpu_mutex(shared.0) };
        for (key, b) in outcomes.into_iter().flat_map(|o| o.3) {
            match first.get(&key) {
                Some(prev) => assert_eq!(prev, &b, "{mode}: proof {key:?} differs between lock modes"),
                None => {
                    first.insert(key, b);
                }
            }
        }
    }
    switches(&[]);
}

#[test]
fn pending_handles_hold_no_lock_and_finalize_on_other_threads() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    switches(&[]);
    let keys = common::keys(Kind::Mimc, K);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let pool = kit::witnesses(Kind::Mimc, K, 2, &mut rng).unwrap();
    let rs: Vec<(Scalar, Scalar)> = (0..8).map(|_| (Scalar::random(&mut rng), Scalar::random(&mut rng))).collect();
    let _dog = watchdog("pending-handle test", 180);
    let shared = Handle(unsafe { ffi::create_gpu_mutex() });
    struct Sendable(PendingProof);
    unsafe impl Send for Sendable {}
    // Eight threads start one proof each and keep the pending handle.
    let pendings: Vec<Sendable> = std::thread::scope(|scope| {
        let tasks: Vec<_> = (0..8)
            .map(|t| {
                let (srs, pool, rs, shared) = (&srs, &pool, &rs, &shared);
                scope.spawn(move || {
                    let mtx = if t % 2 == 0 { shared.0 } else { std::ptr::null_mut() };
                    let (r, s) = rs[t];
                    Sendable(PendingProof::start(srs, std::slice::from_ref(&pool[t % 2].0), &[r], &[s], mtx, 0).unwrap())
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    // Eight live pending proofs and no lock held by any of them.
    let h_arc = supraseal_c2::abi::handles::lock(shared.0).expect("a live lock handle");
    let h: &LockHandle = &h_arc;
    assert!(locks_free(h), "a pending proof holds the shared handle's lock");
    assert!(locks_free(locks::default_handle(0)), "a pending proof holds the default handle's lock");
    // A new call is served while they are pending.
    let (r, s) = rs[0];
    let p = ffi::prove(&srs, std::slice::from_ref(&pool[0].0), &[r], &[s], shared.0, 0).unwrap();
    assert!(ffi::verify(&keys.vk, &p[0], &pool[0].1));
    let expected0 = bytes(&p[0]);
    // Finalize each on another thread than the one that started it; keep the raw
    // handles to check that a second finalize or destroy is refused or ignored.
    let raws: Vec<*mut c_void> = pendings.iter().map(|p| p.0.raw()).collect();
    let proofs: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let tasks: Vec<_> = pendings
            .into_iter()
            .enumerate()
            .map(|(t, p)| {
                let (keys, pool) = (&keys, &pool);
                scope.spawn(move || {
                    let p: Sendable = p; // capture the whole wrapper (it is Send)
                    let proof = p.0.finalize().unwrap();
                    assert!(ffi::verify(&keys.vk, &proof[0], &pool[t % 2].1), "pending {t}");
                    bytes(&proof[0])
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(proofs[0], expected0, "split form and one-shot agree for the same witness, r, s");
    for raw in raws {
        let mut out = supraseal_c2::groth16_proof::default();
        let e = ffi::check(unsafe { ffi::finalize_groth16_proof_c(raw, &mut out) }).expect_err("second finalize");
        assert_eq!(e.code, libc::EINVAL, "{e}");
        unsafe { ffi::destroy_pending_proof(raw) }; // ignored
    }
    assert!(locks_free(h) && locks_free(locks::default_handle(0)));
    unsafe { ffi::destroy_gpu_mutex(shared.0) };
}
