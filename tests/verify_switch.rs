//! The self-check `SUPRASEAL_C2_VERIFY=1`: good proofs pass and are
//! written; a proof that does not verify (here from a witness that does not
//! satisfy its circuit) fails the call with `EBADMSG` naming the circuit,
//! and no proof of the call is written, in both the one-shot and the split
//! form. The verifying function itself rejects a tampered proof and wrong
//! public inputs.
//!
//! Tests here change a process-wide switch, so they run one at a time.

mod common;
use common::bytes;

use std::sync::Mutex;

use blstrs::Scalar;
use ff::Field;
use group::prime::PrimeCurveAffine;
use supraseal_c2::pipeline::verify::{self, PreparedKey, ProofPoints};
use supraseal_c2::{groth16_proof, ErrorKind};
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::ffi::{self, Params, PendingProof};
use supraseal_c2_cli::kit;

static SERIAL: Mutex<()> = Mutex::new(());

fn points(p: &groth16_proof) -> ProofPoints {
    let p = ffi::to_bellperson(p);
    ProofPoints { a: p.a, b: p.b, c: p.c }
}

#[test]
fn verified_calls_write_good_proofs_and_refuse_a_bad_one_naming_its_circuit() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // SHA-256 has two public inputs: the check's input sum is not trivial.
    let (kind, k, n) = (Kind::Sha256, 15, 3);
    let keys = common::keys(kind, k);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(kind, k, n, &mut rng).unwrap();
    assert!(batch[0].1.len() >= 2, "public inputs: {}", batch[0].1.len());
    let ws: Vec<Witness> = batch.iter().map(|(w, _)| w.clone()).collect();
    let (r, s) = (common::random_scalars(&mut rng, n), common::random_scalars(&mut rng, n));

    std::env::set_var("SUPRASEAL_C2_VERIFY", "1");
    let good = ffi::prove(&srs, &ws, &r, &s, std::ptr::null_mut(), -1).expect("good proofs pass the check");
    for (i, (p, (_, inputs))) in good.iter().zip(&batch).enumerate() {
        assert!(ffi::verify(&keys.vk, p, inputs), "proof {i} written under the check verifies with bellperson");
    }
    let split = PendingProof::start(&srs, &ws, &r, &s, std::ptr::null_mut(), -1).unwrap().finalize().unwrap();
    assert_eq!(split.iter().map(bytes).collect::<Vec<_>>(), good.iter().map(bytes).collect::<Vec<_>>(), "split form, same proofs");

    // Circuit 1's witness no longer satisfies the circuit: one aux value moved.
    let mut bad = ws.clone();
    bad[1].aux[3] += Scalar::ONE;
    let untouched = groth16_proof::default();
    let provers: Vec<_> = bad.iter().map(Witness::assignment).collect();
    let mut proofs = vec![untouched; n];
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(
            provers.as_ptr(),
            n,
            r.as_ptr() as *const supraseal_c2::fr_t,
            s.as_ptr() as *const supraseal_c2::fr_t,
            proofs.as_mut_ptr(),
            srs.raw(),
            std::ptr::null_mut(),
            -1,
        )
    })
    .expect_err("a proof that does not verify must fail the call");
    assert_eq!(e.code, libc::EBADMSG, "{e}");
    assert!(e.message.contains("circuit 1 (provers[1])"), "the message names the circuit: {e}");
    assert!(e.message.contains("SUPRASEAL_C2_VERIFY"), "{e}");
    assert!(proofs.iter().all(|p| bytes(p) == bytes(&untouched)), "no proof of a refused call is written");
    let e = PendingProof::start(&srs, &bad, &r, &s, std::ptr::null_mut(), -1)
        .expect("the check runs in finalize")
        .finalize()
        .expect_err("finalize of a proof that does not verify");
    assert_eq!(e.code, libc::EBADMSG, "{e}");
    assert!(e.message.contains("circuit 1 (provers[1])"), "{e}");

    // Without the check the same call succeeds and writes a proof that does
    // not verify: the check, not something else, refused it above.
    std::env::remove_var("SUPRASEAL_C2_VERIFY");
    let unchecked = ffi::prove(&srs, &bad, &r, &s, std::ptr::null_mut(), -1).unwrap();
    assert!(!ffi::verify(&keys.vk, &unchecked[1], &batch[1].1), "the altered witness gives a bad proof");
    assert!(ffi::verify(&keys.vk, &unchecked[0], &batch[0].1), "the other circuits' proofs are good");
}

#[test]
fn a_malformed_verify_switch_is_einval_naming_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let keys = common::keys(Kind::Mimc, 8);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let r = common::random_scalars(&mut rng, 1);
    for v in ["yes", "2", "true"] {
        std::env::set_var("SUPRASEAL_C2_VERIFY", v);
        let e = ffi::prove(&srs, &[batch[0].0.clone()], &r, &r, std::ptr::null_mut(), -1).unwrap_err();
        assert_eq!(e.code, libc::EINVAL, "{v}: {e}");
        assert!(e.message.contains("SUPRASEAL_C2_VERIFY"), "{e}");
    }
    for v in ["0", "off", "ON", " 1 "] {
        std::env::set_var("SUPRASEAL_C2_VERIFY", v);
        let p = ffi::prove(&srs, &[batch[0].0.clone()], &r, &r, std::ptr::null_mut(), -1).unwrap_or_else(|e| panic!("{v:?}: {e}"));
        assert!(ffi::verify(&keys.vk, &p[0], &batch[0].1));
    }
    std::env::remove_var("SUPRASEAL_C2_VERIFY");
}

#[test]
fn the_check_rejects_a_tampered_proof_and_wrong_inputs() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let keys = common::keys(Kind::Mimc, 8);
    let key = supraseal_c2::open_params(&keys.path, false).unwrap();
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let r = common::random_scalars(&mut rng, 2);
    let p = ffi::prove(&srs, &[batch[0].0.clone()], &r[..1], &r[1..], std::ptr::null_mut(), -1).unwrap();
    let (good, inputs) = (points(&p[0]), &batch[0].1);

    let pvk = PreparedKey::new(&key).unwrap();
    assert_eq!(pvk.num_inputs(), inputs.len() + 1, "ic: one point per input, the constant one included");
    assert!(pvk.verifies(&good, inputs));
    assert!(!pvk.verifies(&verify::tampered(&good), inputs), "C moved");
    assert!(!pvk.verifies(&ProofPoints { a: good.c, c: good.a, ..good }, inputs), "A and C swapped");
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::ONE;
    assert!(!pvk.verifies(&good, &wrong), "another public input");

    verify::verify(&key, 7, &good, inputs).unwrap();
    let e = verify::verify(&key, 7, &verify::tampered(&good), inputs).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ProofRejected);
    assert!(e.message.contains("circuit 7 (provers[7])"), "{e}");
    let e = verify::check_key(&key, inputs.len() + 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message.contains("ic points"), "{e}");
}

#[test]
fn a_key_without_a_verifying_key_is_einval_under_the_check() {
    let g1 = blstrs::G1Affine::generator();
    let g2 = blstrs::G2Affine::generator();
    let key = supraseal_c2::Srs::from_parts("parts".into(), g1, g1, g2, g1, g2, vec![g1], vec![g1], vec![g1], vec![g1], vec![g2]);
    let e = verify::check_key(&key, 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message.contains("no verifying key"), "{e}");
}
