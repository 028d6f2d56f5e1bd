//! Callers that prove from inside rayon's global pool (a `par_iter` over
//! partitions, as Rust callers write) must not deadlock, even when the pool
//! has a single worker: the library's CPU-thread work runs on its own pool.
//! Regression test for a hang found by review: phase 2 waited for the
//! split-MSM plans while the plans' parallel work sat in the caller's pool.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

#[test]
fn proving_from_a_one_worker_global_pool_finishes() {
    // The other test of this binary runs its calls in a child process, so
    // the global pool is configured here first.
    rayon::ThreadPoolBuilder::new().num_threads(1).build_global().expect("global pool not yet built");
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            for _ in 0..600 {
                std::thread::sleep(Duration::from_millis(500));
                if done.load(Ordering::SeqCst) {
                    return;
                }
            }
            eprintln!("deadlock: proving inside the global pool did not finish in 300 s");
            std::process::abort();
        })
    };
    let keys = common::keys(Kind::Mimc, 10);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let w = kit::witnesses(Kind::Mimc, 10, 2, &mut rng).unwrap();
    let rs = common::random_scalars(&mut rng, 2);
    let ok: Vec<bool> = (0..4usize)
        .into_par_iter()
        .map(|i| {
            let (wit, inputs) = &w[i % 2];
            let p = ffi::prove(&srs, std::slice::from_ref(wit), &rs[..1], &rs[1..], std::ptr::null_mut(), 0).unwrap();
            ffi::verify(&keys.vk, &p[0], inputs)
        })
        .collect();
    done.store(true, Ordering::SeqCst);
    watchdog.join().unwrap();
    assert_eq!(ok, vec![true; 4]);
}

/// Three MiMC 2^10 circuits, their key and each circuit's r and s: what the
/// child processes prove.
struct Calls {
    keys: kit::Keys,
    srs: Params,
    /// Each witness with its public inputs.
    w: Vec<(supraseal_c2_cli::collector::Witness, Vec<blstrs::Scalar>)>,
    wits: Vec<supraseal_c2_cli::collector::Witness>,
    r: Vec<blstrs::Scalar>,
    s: Vec<blstrs::Scalar>,
}

impl Calls {
    fn new() -> Calls {
        let keys = common::keys(Kind::Mimc, 10);
        let srs = Params::open(&keys.path, true).unwrap();
        let mut rng = common::rng();
        let w = kit::witnesses(Kind::Mimc, 10, 3, &mut rng).unwrap();
        let wits = w.iter().map(|(w, _)| w.clone()).collect();
        let (r, s) = (common::random_scalars(&mut rng, 3), common::random_scalars(&mut rng, 3));
        Calls { keys, srs, w, wits, r, s }
    }
}

/// Set in the child process that [`run_in_child`] starts.
const CHILD: &str = "RAYON_CALLERS_CHILD";

/// Runs the test `name` of this binary alone in a child process with
/// `RAYON_NUM_THREADS=1` (rayon's pools are built once per process) on the
/// CPU backend, where it finds [`CHILD`] set; fails if the child fails, or
/// hangs past 300 s (far above the seconds its calls take), naming `what`.
fn run_in_child(name: &str, what: &str) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("RAYON_NUM_THREADS", "1")
        .env("SUPRASEAL_C2_BACKEND", "cpu")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            child.kill().ok();
            let out = child.wait_with_output().unwrap();
            panic!("deadlock: {what} did not finish in 300 s\n{}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "the child ran the calls: {}", String::from_utf8_lossy(&out.stdout));
}

/// Two calls of 3 circuits each at once, with the library's CPU pool of one
/// thread (`RAYON_NUM_THREADS=1` in a child process: the pool is built once
/// per process). Regression test for a hang: the CPU side of a call waited
/// for the canonical-scalar checks of circuits 1.. on a pool worker, while
/// those checks ran in the same pool, so once every worker waited so (two
/// calls on the two-thread pool of a 2-core machine) nothing ran.
#[test]
fn calls_of_several_circuits_finish_on_a_one_thread_cpu_pool() {
    if std::env::var_os(CHILD).is_some() {
        let Calls { keys, srs, w, wits, r, s } = Calls::new();
        std::thread::scope(|scope| {
            let calls: Vec<_> = (0..2).map(|_| scope.spawn(|| ffi::prove(&srs, &wits, &r, &s, std::ptr::null_mut(), -1).unwrap())).collect();
            for c in calls {
                let proofs = c.join().unwrap();
                assert!(proofs.iter().zip(&w).all(|(p, (_, inputs))| ffi::verify(&keys.vk, p, inputs)), "every proof verifies");
            }
        });
        return;
    }
    run_in_child("calls_of_several_circuits_finish_on_a_one_thread_cpu_pool", "two 3-circuit calls on a one-thread CPU pool");
}

/// Calls of 3 circuits from two plain threads while the only worker of
/// rayon's global pool makes one-circuit calls (`RAYON_NUM_THREADS=1`, CPU
/// backend), over several rounds; every proof verifies and nothing hangs.
/// The shape of a hang a break-it trial met in 3 runs of 19 (this test has
/// not met it in 50 rounds before the change it guards): the CPU backend's
/// phase-2 work runs in the library's pool, and a caller inside a rayon pool
/// proves on a plain thread, so that the thread holding the compute lock is
/// never a rayon worker that could steal another call's job while it waits.
#[test]
fn plain_thread_calls_beside_a_caller_in_a_one_worker_global_pool_finish() {
    if std::env::var_os(CHILD).is_some() {
        let Calls { keys, srs, w, wits, r, s } = Calls::new();
        let check = |proofs: &[supraseal_c2::groth16_proof]| {
            assert!(proofs.iter().zip(&w).all(|(p, (_, inputs))| ffi::verify(&keys.vk, p, inputs)), "every proof verifies");
        };
        for _ in 0..10 {
            std::thread::scope(|scope| {
                let plain: Vec<_> = (0..2).map(|_| scope.spawn(|| ffi::prove(&srs, &wits, &r, &s, std::ptr::null_mut(), -1).unwrap())).collect();
                let pooled: Vec<Vec<supraseal_c2::groth16_proof>> =
                    (0..2usize).into_par_iter().map(|_| ffi::prove(&srs, &wits[..1], &r[..1], &s[..1], std::ptr::null_mut(), -1).unwrap()).collect();
                pooled.iter().for_each(|p| check(p));
                plain.into_iter().for_each(|c| check(&c.join().unwrap()));
            });
        }
        return;
    }
    run_in_child("plain_thread_calls_beside_a_caller_in_a_one_worker_global_pool_finish", "plain-thread calls beside a caller in a one-worker global pool");
}

/// A call whose split-MSM plans have tails (a SHA-256 2^15 witness with every
/// 997th aux value set to 2, so that the tails hold several positions) made
/// from the only worker of rayon's global pool (`RAYON_NUM_THREADS=1`, CPU
/// backend) finishes, with the bytes of the same call from a plain thread.
/// Regression test for a hang found by review: the tails' scalars were
/// gathered with rayon on the thread of the call, which then waited for the
/// global pool whose only worker was waiting for it.
#[test]
fn a_call_with_split_plan_tails_from_a_one_worker_global_pool_finishes() {
    if std::env::var_os(CHILD).is_some() {
        let keys = common::keys(Kind::Sha256, 15);
        let srs = Params::open(&keys.path, true).unwrap();
        let mut rng = common::rng();
        let mut w = kit::witnesses(Kind::Sha256, 15, 1, &mut rng).unwrap().remove(0).0;
        for j in (0..w.aux.len()).step_by(997) {
            w.aux[j] = blstrs::Scalar::from(2u64);
        }
        // Two circuits in the call, so that a parallel split over circuits would split too.
        let ws = [w.clone(), w];
        let (r, s) = (common::random_scalars(&mut rng, 2), common::random_scalars(&mut rng, 2));
        let prove = || ffi::prove(&srs, &ws, &r, &s, std::ptr::null_mut(), -1).unwrap().iter().map(common::bytes).collect::<Vec<_>>();
        let plain = prove();
        // `rayon::scope` runs its body on the global pool's worker (a
        // one-item `into_par_iter` would run on this thread).
        let pooled = rayon::scope(|_| {
            assert!(rayon::current_thread_index().is_some(), "on the global pool's worker");
            prove()
        });
        assert_eq!(pooled, plain, "the call from the pool's worker gives the plain thread's bytes");
        return;
    }
    run_in_child("a_call_with_split_plan_tails_from_a_one_worker_global_pool_finishes", "a call with split-plan tails from a one-worker global pool");
}
