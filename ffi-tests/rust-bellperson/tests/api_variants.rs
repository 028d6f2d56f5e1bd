//! Every function of the Rust API (the 0.1.2 ones and the lock-handle and
//! split variants) gives the same proof bytes as bellperson's
//! `create_proof_batch` for the same r and s, and the proofs verify.

use std::io::Write;
use std::path::PathBuf;

use bellperson::groth16::{
    create_proof_batch, generate_random_parameters, prepare_verifying_key, verify_proof, Parameters, Proof,
    SuprasealParameters,
};
use blstrs::{Bls12, Scalar as Fr};
use rust_bellperson_ffi_tests::{proof_bytes, random_fr, rng, TestCircuit, Witness};
use supraseal_c2::{Assignment, SRS};

const ROUNDS: usize = 200;
const N: usize = 3;

struct Fixture {
    params: Parameters<Bls12>,
    path: PathBuf,
    circuits: Vec<TestCircuit>,
    witnesses: Vec<Witness>,
    r_s: Vec<Fr>,
    s_s: Vec<Fr>,
    expected: Vec<Vec<u8>>,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let params = generate_random_parameters::<Bls12, _, _>(TestCircuit::blank(ROUNDS), &mut rng(7)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.params");
    let mut f = std::fs::File::create(&path).unwrap();
    params.write(&mut f).unwrap();
    f.flush().unwrap();
    let mut r = rng(8);
    let circuits: Vec<_> = (0..N).map(|i| TestCircuit::new(random_fr(&mut r), 1000 + 77 * i as u16, ROUNDS)).collect();
    let witnesses: Vec<_> = circuits.iter().map(|c| Witness::synthesize(c.clone()).unwrap()).collect();
    let r_s: Vec<Fr> = (0..N).map(|_| random_fr(&mut r)).collect();
    let s_s: Vec<Fr> = (0..N).map(|_| random_fr(&mut r)).collect();
    // The reference: bellperson's own supraseal path, public API only.
    let supra = SuprasealParameters::<Bls12>::new(path.clone()).unwrap();
    let expected =
        create_proof_batch(circuits.clone(), &supra, r_s.clone(), s_s.clone()).unwrap().iter().map(proof_bytes).collect();
    Fixture { params, path, circuits, witnesses, r_s, s_s, expected, _dir: dir }
}

impl Fixture {
    fn assignments(&self) -> Vec<Assignment<Fr>> {
        self.witnesses.iter().map(|w| w.assignment()).collect()
    }

    fn check(&self, what: &str, proofs: &[Proof<Bls12>]) {
        let pvk = prepare_verifying_key(&self.params.vk);
        assert_eq!(proofs.len(), N, "{what}");
        for (i, p) in proofs.iter().enumerate() {
            assert_eq!(proof_bytes(p), self.expected[i], "{what}: proof {i} differs from bellperson's");
            assert!(verify_proof(&pvk, p, &self.circuits[i].public_inputs()).unwrap(), "{what}: proof {i}");
        }
    }

    /// The split-argument form's inputs, borrowed from the witnesses.
    #[allow(clippy::type_complexity)]
    fn parts(&self) -> (Vec<*const Fr>, Vec<*const Fr>, Vec<*const Fr>, Vec<*const Fr>, Vec<*const Fr>) {
        let w = &self.witnesses;
        (
            w.iter().map(|w| w.a.as_ptr()).collect(),
            w.iter().map(|w| w.b.as_ptr()).collect(),
            w.iter().map(|w| w.c.as_ptr()).collect(),
            w.iter().map(|w| w.inputs.as_ptr()).collect(),
            w.iter().map(|w| w.aux.as_ptr()).collect(),
        )
    }
}

/// An uninitialised proof buffer, as bellperson passes it.
fn uninit_proofs(n: usize) -> Vec<Proof<Bls12>> {
    let mut v = Vec::with_capacity(n);
    #[allow(clippy::uninit_vec)]
    // SAFETY: the library writes every slot before the test reads any.
    unsafe {
        v.set_len(n)
    };
    v
}

#[test]
fn every_variant_matches_bellperson() {
    let fx = fixture();
    let srs = SRS::try_new(fx.path.clone(), true).unwrap();
    let w0 = &fx.witnesses[0];
    let (a, b, c, inp, aux) = fx.parts();

    // 0.1.2: generate_groth16_proofs over Assignment<S>.
    let mut proofs = uninit_proofs(N);
    supraseal_c2::generate_groth16_proofs(&fx.assignments(), &fx.r_s, &fx.s_s, &mut proofs, &srs);
    fx.check("generate_groth16_proofs", &proofs);

    // 0.1.2: generate_groth16_proof, the 19-argument form.
    let mut proofs = uninit_proofs(N);
    supraseal_c2::generate_groth16_proof(
        &a,
        &b,
        &c,
        w0.a.len(),
        &inp,
        &aux,
        w0.inputs.len(),
        w0.aux.len(),
        &w0.a_aux_density.words,
        &w0.b_inp_density.words,
        &w0.b_aux_density.words,
        w0.a_aux_density.popcount(),
        w0.b_inp_density.popcount(),
        w0.b_aux_density.popcount(),
        N,
        &fx.r_s,
        &fx.s_s,
        &mut proofs,
        &srs,
    );
    fx.check("generate_groth16_proof", &proofs);

    // Lock handle and device: a shared handle, any device and device 0.
    let mtx = supraseal_c2::alloc_gpu_mutex();
    assert!(!mtx.is_null());
    for gpu_index in [-1, 0] {
        let mut proofs = uninit_proofs(N);
        supraseal_c2::generate_groth16_proofs_on_gpu(&fx.assignments(), &fx.r_s, &fx.s_s, &mut proofs, &srs, mtx, gpu_index);
        fx.check("generate_groth16_proofs_on_gpu", &proofs);
        let mut proofs = uninit_proofs(N);
        supraseal_c2::generate_groth16_proof_on_gpu(
            &a,
            &b,
            &c,
            w0.a.len(),
            &inp,
            &aux,
            w0.inputs.len(),
            w0.aux.len(),
            &w0.a_aux_density.words,
            &w0.b_inp_density.words,
            &w0.b_aux_density.words,
            w0.a_aux_density.popcount(),
            w0.b_inp_density.popcount(),
            w0.b_aux_density.popcount(),
            N,
            &fx.r_s,
            &fx.s_s,
            &mut proofs,
            &srs,
            mtx,
            gpu_index,
        );
        fx.check("generate_groth16_proof_on_gpu", &proofs);
    }

    // Split form: start (three flavours), then finish.
    let h1 = supraseal_c2::start_groth16_proofs(&fx.assignments(), &fx.r_s, &fx.s_s, &srs, mtx, -1);
    let h2 = supraseal_c2::start_groth16_proof(
        &a,
        &b,
        &c,
        w0.a.len(),
        &inp,
        &aux,
        w0.inputs.len(),
        w0.aux.len(),
        &w0.a_aux_density.words,
        &w0.b_inp_density.words,
        &w0.b_aux_density.words,
        w0.a_aux_density.popcount(),
        w0.b_inp_density.popcount(),
        w0.b_aux_density.popcount(),
        N,
        &fx.r_s,
        &fx.s_s,
        &srs,
        std::ptr::null_mut(),
    );
    let h3 = supraseal_c2::start_groth16_proof_on_gpu(
        &a,
        &b,
        &c,
        w0.a.len(),
        &inp,
        &aux,
        w0.inputs.len(),
        w0.aux.len(),
        &w0.a_aux_density.words,
        &w0.b_inp_density.words,
        &w0.b_aux_density.words,
        w0.a_aux_density.popcount(),
        w0.b_inp_density.popcount(),
        w0.b_aux_density.popcount(),
        N,
        &fx.r_s,
        &fx.s_s,
        &srs,
        mtx,
        0,
    );
    for (name, h) in [("start_groth16_proofs", h1), ("start_groth16_proof", h2), ("start_groth16_proof_on_gpu", h3)] {
        assert!(!h.is_null(), "{name}");
        let mut proofs = uninit_proofs(N);
        supraseal_c2::finish_groth16_proof(h, &mut proofs);
        fx.check(name, &proofs);
    }

    // A pending proof can be abandoned; dropping twice is harmless.
    let h = supraseal_c2::start_groth16_proofs(&fx.assignments(), &fx.r_s, &fx.s_s, &srs, mtx, -1);
    // SAFETY: h came from a start function.
    unsafe {
        supraseal_c2::drop_pending_proof(h);
        supraseal_c2::drop_pending_proof(h);
    }
    // SAFETY: every call that used mtx has returned.
    unsafe { supraseal_c2::free_gpu_mutex(mtx) };
}

#[test]
fn finish_checks_the_proofs_length_and_keeps_the_handle() {
    let fx = fixture();
    let srs = SRS::try_new(fx.path.clone(), false).unwrap();
    let h = supraseal_c2::start_groth16_proofs(&fx.assignments(), &fx.r_s, &fx.s_s, &srs, std::ptr::null_mut(), -1);
    let short = std::panic::catch_unwind(|| {
        let mut proofs = uninit_proofs(N - 1);
        supraseal_c2::finish_groth16_proof(h, &mut proofs);
        std::mem::forget(proofs);
    });
    assert!(short.is_err(), "a short proofs slice must panic");
    let mut proofs = uninit_proofs(N);
    supraseal_c2::finish_groth16_proof(h, &mut proofs);
    fx.check("finish after a refused finish", &proofs);
    // The handle is consumed: finishing it again panics with EINVAL.
    let again = std::panic::catch_unwind(|| {
        let mut proofs = uninit_proofs(N);
        supraseal_c2::finish_groth16_proof(h, &mut proofs);
        std::mem::forget(proofs);
    });
    let msg = again.err().and_then(|e| e.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(msg.contains("not a live pending proof") && msg.contains("code 22"), "got: {msg}");
}

#[test]
fn errors_panic_with_the_library_message() {
    let fx = fixture();
    let srs = SRS::try_new(fx.path.clone(), false).unwrap();
    // One aux value fewer than the params file expects.
    let mut bad = fx.assignments();
    for a in &mut bad {
        a.aux_assignment_size -= 1;
    }
    let res = std::panic::catch_unwind(|| {
        let mut proofs = uninit_proofs(N);
        supraseal_c2::generate_groth16_proofs(&bad, &fx.r_s, &fx.s_s, &mut proofs, &srs);
        std::mem::forget(proofs);
    });
    let msg = res.err().and_then(|e| e.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(msg.contains("(code 22)"), "EINVAL with a message, got: {msg}");

    // Mismatched slice lengths panic before anything is read.
    let res = std::panic::catch_unwind(|| {
        let mut proofs = uninit_proofs(N);
        supraseal_c2::generate_groth16_proofs(&fx.assignments(), &fx.r_s[..1], &fx.s_s, &mut proofs, &srs);
        std::mem::forget(proofs);
    });
    assert!(res.is_err());
}

#[test]
fn srs_handle_lifecycle() {
    fn send_sync<T: Send + Sync + Clone + Default>() {}
    send_sync::<SRS>();

    let fx = fixture();
    let a = SRS::try_new(fx.path.clone(), true).unwrap();
    let b = a.clone();
    let c = SRS::try_new(fx.path.clone(), true).unwrap(); // from the cache
    a.evict();
    drop(a);
    // Handles outlive eviction and the original handle; clones prove from threads.
    let handles: Vec<_> = [b, c]
        .into_iter()
        .map(|srs| {
            let w = fx.witnesses.clone();
            let (r_s, s_s) = (fx.r_s.clone(), fx.s_s.clone());
            std::thread::spawn(move || {
                let assignments: Vec<_> = w.iter().map(|w| w.assignment()).collect();
                let mut proofs = uninit_proofs(N);
                supraseal_c2::generate_groth16_proofs(&assignments, &r_s, &s_s, &mut proofs, &srs);
                proofs
            })
        })
        .collect();
    for h in handles {
        fx.check("from a thread", &h.join().unwrap());
    }

    // Errors are values: code and message.
    let e = SRS::try_new(fx.path.with_extension("nope"), true).err().unwrap();
    assert_eq!(e.code, 2, "ENOENT");
    assert!(e.to_string().contains("api.nope"), "{e}");
    let s: String = e.into();
    assert!(s.contains("(code 2)"), "{s}");
    let bad = fx.path.with_extension("bad");
    std::fs::write(&bad, b"not a params file").unwrap();
    let e = SRS::try_new(bad, false).err().unwrap();
    assert_eq!(e.code, 22, "EINVAL");
}
