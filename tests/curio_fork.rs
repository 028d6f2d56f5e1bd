//! A caller written against Curio's fork of supraseal-c2 (cuzk's
//! `extern/supraseal-c2`), as Curio's bellperson calls it
//! (`src/groth16/prover/supraseal.rs`: `prove_from_assignments`,
//! `prove_start`, `finish_pending_proof`), built with `--features curio-fork`:
//!
//! - the fork's signatures, checked at compile time as function-pointer types,
//!   prove and the proofs pass bellperson's `verify_proof`;
//! - this program defines `set_membw_throttle` as cuzk does (`cuzk-pce`), and
//!   the library calls it as the fork does: 1 before the CPU-side G2 MSMs, 0
//!   after, once per call, never for a call refused before them;
//! - `CUZK_GPU_THREADS` sizes the library's CPU pool.
//!
//! `cargo test --release -p supraseal-c2 --features curio-fork --test curio_fork`

mod common;

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, Once};

use bellperson::groth16::{prepare_verifying_key, verify_proof, Proof, VerifyingKey};
use blstrs::{Bls12, Scalar};
use supraseal_c2::SRS;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::kit;

/// The fork's `generate_groth16_proof` (21 arguments), as a type.
type ForkGenerate = fn(
    &[*const Scalar],
    &[*const Scalar],
    &[*const Scalar],
    usize,
    &[*const Scalar],
    &[*const Scalar],
    usize,
    usize,
    &[u64],
    &[u64],
    &[u64],
    usize,
    usize,
    usize,
    usize,
    &[Scalar],
    &[Scalar],
    &mut [Proof<Bls12>],
    &SRS,
    *mut c_void,
    i32,
);

/// The fork's `start_groth16_proof` (20 arguments), as a type.
type ForkStart = fn(
    &[*const Scalar],
    &[*const Scalar],
    &[*const Scalar],
    usize,
    &[*const Scalar],
    &[*const Scalar],
    usize,
    usize,
    &[u64],
    &[u64],
    &[u64],
    usize,
    usize,
    usize,
    usize,
    &[Scalar],
    &[Scalar],
    &SRS,
    *mut c_void,
    i32,
) -> *mut c_void;

// The signatures are the fork's exactly: same order, same types.
const FORK_GENERATE: ForkGenerate = supraseal_c2::generate_groth16_proof::<Scalar, u64, Proof<Bls12>>;
const FORK_START: ForkStart = supraseal_c2::start_groth16_proof::<Scalar, u64>;
const _: fn(*mut c_void, &mut [Proof<Bls12>]) = supraseal_c2::finish_groth16_proof::<Proof<Bls12>>;
const _: unsafe fn(*mut c_void) = supraseal_c2::drop_pending_proof;
const _: fn() -> *mut c_void = supraseal_c2::alloc_gpu_mutex;
const _: unsafe fn(*mut c_void) = supraseal_c2::free_gpu_mutex;

/// Every `set_membw_throttle` call the library made, in order.
static THROTTLE_CALLS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The host's throttle, defined as cuzk defines it (`#[no_mangle] extern "C"`
/// in a Rust crate of the program); this one records its argument.
#[no_mangle]
pub extern "C" fn set_membw_throttle(value: i32) {
    THROTTLE_CALLS.lock().unwrap().push(value);
}

const CUZK_GPU_THREADS: usize = 3;

/// Runs before any library call of this program (every test starts with
/// it), and serialises the tests: the throttle record is process-wide.
fn setup() -> MutexGuard<'static, ()> {
    static ENV: Once = Once::new();
    static SERIAL: Mutex<()> = Mutex::new(());
    ENV.call_once(|| {
        std::env::set_var("CUZK_GPU_THREADS", CUZK_GPU_THREADS.to_string());
        // The fork always runs its G2 MSM on CPU threads; so do we here, also
        // on a GPU host where `auto` could place it on the device.
        std::env::set_var("SUPRASEAL_C2_G2_MSM", "cpu");
    });
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    THROTTLE_CALLS.lock().unwrap().clear();
    guard
}

fn throttle_calls() -> Vec<i32> {
    THROTTLE_CALLS.lock().unwrap().clone()
}

/// `n` fresh witnesses with their public inputs, fresh r and s, the key.
struct Fixture {
    vk: VerifyingKey<Bls12>,
    srs: SRS,
    batch: Vec<(Witness, Vec<Scalar>)>,
    r_s: Vec<Scalar>,
    s_s: Vec<Scalar>,
}

fn fixture(n: usize) -> Fixture {
    let keys = common::keys(Kind::Mimc, 9);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 9, n, &mut rng).unwrap();
    let r_s = common::random_scalars(&mut rng, n);
    let s_s = common::random_scalars(&mut rng, n);
    // As Curio's bellperson loads it (SuprasealParameters: no cache).
    let srs = SRS::try_new(keys.path.clone(), false).unwrap();
    Fixture { vk: keys.vk, srs, batch, r_s, s_s }
}

impl Fixture {
    fn verify(&self, proofs: &[Proof<Bls12>]) {
        let pvk = prepare_verifying_key(&self.vk);
        assert_eq!(proofs.len(), self.batch.len());
        for (i, (p, (_, inputs))) in proofs.iter().zip(&self.batch).enumerate() {
            assert!(verify_proof(&pvk, p, inputs).unwrap(), "proof {i} does not verify");
        }
    }
}

/// The per-circuit pointers and shared densities, as Curio's bellperson builds them.
struct Parts {
    a: Vec<*const Scalar>,
    b: Vec<*const Scalar>,
    c: Vec<*const Scalar>,
    inp: Vec<*const Scalar>,
    aux: Vec<*const Scalar>,
}

fn parts(batch: &[(Witness, Vec<Scalar>)]) -> Parts {
    Parts {
        a: batch.iter().map(|(w, _)| w.a.as_ptr()).collect(),
        b: batch.iter().map(|(w, _)| w.b.as_ptr()).collect(),
        c: batch.iter().map(|(w, _)| w.c.as_ptr()).collect(),
        inp: batch.iter().map(|(w, _)| w.inputs.as_ptr()).collect(),
        aux: batch.iter().map(|(w, _)| w.aux.as_ptr()).collect(),
    }
}

/// Uninitialised proofs, as Curio's bellperson passes them.
fn uninit_proofs(n: usize) -> Vec<Proof<Bls12>> {
    let mut v = Vec::with_capacity(n);
    #[allow(clippy::uninit_vec)]
    // SAFETY: the library writes every slot before the test reads any.
    unsafe {
        v.set_len(n)
    };
    v
}

fn prove(fx: &Fixture, gpu_mtx: *mut c_void, gpu_index: i32) -> Vec<Proof<Bls12>> {
    let n = fx.batch.len();
    let w0 = &fx.batch[0].0;
    let mut p = parts(&fx.batch);
    let mut proofs = uninit_proofs(n);
    FORK_GENERATE(
        &p.a,
        &p.b,
        &p.c,
        w0.a.len(),
        p.inp.as_mut_slice(),
        p.aux.as_mut_slice(),
        w0.inputs.len(),
        w0.aux.len(),
        &w0.a_aux_density.words,
        &w0.b_inp_density.words,
        &w0.b_aux_density.words,
        w0.a_aux_density.popcount(),
        w0.b_inp_density.popcount(),
        w0.b_aux_density.popcount(),
        n,
        &fx.r_s,
        &fx.s_s,
        &mut proofs,
        &fx.srs,
        gpu_mtx,
        gpu_index,
    );
    proofs
}

#[test]
fn generate_with_the_forks_signature_proves_and_throttles_as_the_fork() {
    let _serial = setup();
    let fx = fixture(2);

    // prove_from_assignments with cuzk's per-GPU lock handle and a pinned device.
    let mtx = supraseal_c2::alloc_gpu_mutex();
    let proofs = prove(&fx, mtx, 0);
    fx.verify(&proofs);
    assert_eq!(throttle_calls(), [1, 0], "one call: set_membw_throttle(1) before the CPU G2 MSMs, (0) after");

    // prove_from_assignments' other use: no lock handle, any device.
    THROTTLE_CALLS.lock().unwrap().clear();
    let again = prove(&fx, std::ptr::null_mut(), -1);
    fx.verify(&again);
    assert_eq!(throttle_calls(), [1, 0]);
    // SAFETY: from alloc_gpu_mutex, freed once, no call uses it any more.
    unsafe { supraseal_c2::free_gpu_mutex(mtx) };
}

#[test]
fn start_and_finish_with_the_forks_signatures() {
    let _serial = setup();
    let fx = fixture(2);
    let n = fx.batch.len();
    let w0 = &fx.batch[0].0;
    let mtx = supraseal_c2::alloc_gpu_mutex();
    // prove_start releases the a/b/c vectors once start returns: here the
    // whole witnesses are freed before the finish.
    let owned = fx.batch.clone();
    let handle = {
        let w0 = &owned[0].0;
        let mut p = parts(&owned);
        FORK_START(
            &p.a,
            &p.b,
            &p.c,
            w0.a.len(),
            p.inp.as_mut_slice(),
            p.aux.as_mut_slice(),
            w0.inputs.len(),
            w0.aux.len(),
            &w0.a_aux_density.words,
            &w0.b_inp_density.words,
            &w0.b_aux_density.words,
            w0.a_aux_density.popcount(),
            w0.b_inp_density.popcount(),
            w0.b_aux_density.popcount(),
            n,
            &fx.r_s,
            &fx.s_s,
            &fx.srs,
            mtx,
            0,
        )
    };
    drop(owned);
    assert!(!handle.is_null());
    // The documented timing difference: the fork's start returns with its CPU
    // G2 MSM still running (throttle still 1); this one returns after it.
    assert_eq!(throttle_calls(), [1, 0], "start returns once its CPU G2 MSMs are done");
    let mut proofs = uninit_proofs(n);
    supraseal_c2::finish_groth16_proof(handle, &mut proofs);
    fx.verify(&proofs);
    assert_eq!(throttle_calls(), [1, 0], "finish makes no throttle call");

    // A pending proof dropped unfinished (PendingProofHandle's Drop).
    THROTTLE_CALLS.lock().unwrap().clear();
    let mut p = parts(&fx.batch);
    let handle = FORK_START(
        &p.a,
        &p.b,
        &p.c,
        w0.a.len(),
        p.inp.as_mut_slice(),
        p.aux.as_mut_slice(),
        w0.inputs.len(),
        w0.aux.len(),
        &w0.a_aux_density.words,
        &w0.b_inp_density.words,
        &w0.b_aux_density.words,
        w0.a_aux_density.popcount(),
        w0.b_inp_density.popcount(),
        w0.b_aux_density.popcount(),
        n,
        &fx.r_s,
        &fx.s_s,
        &fx.srs,
        std::ptr::null_mut(),
        -1,
    );
    // SAFETY: a handle from start, neither finished nor dropped.
    unsafe { supraseal_c2::drop_pending_proof(handle) };
    assert_eq!(throttle_calls(), [1, 0]);
    // SAFETY: from alloc_gpu_mutex, freed once, no call uses it any more.
    unsafe { supraseal_c2::free_gpu_mutex(mtx) };
}

#[test]
fn a_call_refused_before_its_g2_msms_never_throttles() {
    let _serial = setup();
    let fx = fixture(1);
    let w0 = &fx.batch[0].0;
    let mut p = parts(&fx.batch);
    let mut proofs = uninit_proofs(1);
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        FORK_GENERATE(
            &p.a,
            &p.b,
            &p.c,
            w0.a.len(),
            p.inp.as_mut_slice(),
            p.aux.as_mut_slice(),
            w0.inputs.len(),
            w0.aux.len(),
            &w0.a_aux_density.words,
            &w0.b_inp_density.words,
            &w0.b_aux_density.words,
            w0.a_aux_density.popcount() + 1, // not the density's popcount
            w0.b_inp_density.popcount(),
            w0.b_aux_density.popcount(),
            1,
            &fx.r_s,
            &fx.s_s,
            &mut proofs,
            &fx.srs,
            std::ptr::null_mut(),
            -1,
        )
    }))
    .expect_err("a wrong popcount is refused");
    let message = refused.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("(code 22)"), "EINVAL expected: {message}");
    assert_eq!(throttle_calls(), [] as [i32; 0], "refused during validation: no throttle call");
}

#[test]
fn the_host_definition_is_found_and_cuzk_gpu_threads_sizes_the_cpu_pool() {
    let _serial = setup();
    let host = supraseal_c2::curio::host_throttle().expect("the library sees this program's set_membw_throttle");
    let ours: extern "C" fn(i32) = set_membw_throttle;
    assert_eq!(host as usize, ours as usize, "bound to this program's definition");
    assert_eq!(supraseal_c2::threads::cpu_threads(), CUZK_GPU_THREADS, "CUZK_GPU_THREADS={CUZK_GPU_THREADS}");
}
