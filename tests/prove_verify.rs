//! Proofs made through the C ABI verify with bellperson, and are
//! byte-identical to bellperson's own prover for the same r and s.

mod common;

use std::fs::File;
use std::io::BufReader;

use bellperson::groth16::{create_proof, Parameters};
use blstrs::{Bls12, Scalar};
use ff::Field;
use supraseal_c2::groth16_proof;

use supraseal_c2_cli::circuits::{Instance, Kind};
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

fn prove_and_verify(kind: Kind, k: u32, n: usize, zero_rs: bool) {
    let keys = common::keys(kind, k);
    let mut rng = common::rng();
    let batch = kit::witnesses(kind, k, n, &mut rng).unwrap();
    let ws: Vec<_> = batch.iter().map(|(w, _)| w.clone()).collect();
    let (r, s) = if zero_rs {
        (vec![Scalar::ZERO; n], vec![Scalar::ZERO; n])
    } else {
        (common::random_scalars(&mut rng, n), common::random_scalars(&mut rng, n))
    };
    let srs = Params::open(&keys.path, false).unwrap();
    let proofs = ffi::prove(&srs, &ws, &r, &s, std::ptr::null_mut(), -1).unwrap();
    assert_eq!(proofs.len(), n);
    for (i, (p, (_, inputs))) in proofs.iter().zip(&batch).enumerate() {
        assert!(ffi::verify(&keys.vk, p, inputs), "proof {i} of {n} ({kind:?}) must verify");
    }
}

#[test]
fn one_circuit_per_call_verifies() {
    prove_and_verify(Kind::Mimc, 10, 1, false);
}

#[test]
fn three_circuits_per_call_verify() {
    prove_and_verify(Kind::Mimc, 10, 3, false);
}

#[test]
fn zero_r_and_s_give_verifying_proofs() {
    prove_and_verify(Kind::Mimc, 9, 2, true);
}

#[test]
fn boolean_sha256_circuit_with_public_inputs_verifies() {
    prove_and_verify(Kind::Sha256, 15, 2, false);
}

/// Our proof equals bellperson's `create_proof` for the same circuit, r and s.
fn matches_bellperson(kind: Kind, k: u32) {
    let keys = common::keys(kind, k);
    let params: Parameters<Bls12> = Parameters::read(BufReader::new(File::open(&keys.path).unwrap()), false).unwrap();
    let mut rng = common::rng();
    let (inst, inputs) = Instance::shape(kind, k).with_random_witness(&mut rng);
    let w = supraseal_c2_cli::collector::Witness::synthesize(inst.clone()).unwrap();
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let srs = Params::open(&keys.path, true).unwrap();
    let ours = ffi::prove(&srs, std::slice::from_ref(&w), &[r], &[s], std::ptr::null_mut(), 0).unwrap();
    let theirs = create_proof::<Bls12, _, _>(inst, &params, r, s).unwrap();
    // Byte-identical in the ABI layout (Montgomery limbs), and as encodings.
    let expected = groth16_proof { a: (&theirs.a).into(), b: (&theirs.b).into(), c: (&theirs.c).into() };
    assert_eq!(ours[0], expected);
    let p = ffi::to_bellperson(&ours[0]);
    assert_eq!(p.a.to_uncompressed(), theirs.a.to_uncompressed(), "A");
    assert_eq!(p.b.to_uncompressed(), theirs.b.to_uncompressed(), "B");
    assert_eq!(p.c.to_uncompressed(), theirs.c.to_uncompressed(), "C");
    assert!(ffi::verify(&keys.vk, &ours[0], &inputs));
}

#[test]
fn proof_is_byte_identical_to_bellperson_on_the_plain_path() {
    matches_bellperson(Kind::Mimc, 10);
}

#[test]
fn proof_is_byte_identical_to_bellperson_on_the_split_path() {
    matches_bellperson(Kind::Sha256, 15);
}

#[test]
fn wrong_public_input_fails_verification() {
    let keys = common::keys(Kind::Mimc, 9);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 9, 1, &mut rng).unwrap();
    let srs = Params::open(&keys.path, false).unwrap();
    let r = common::random_scalars(&mut rng, 1);
    let s = common::random_scalars(&mut rng, 1);
    let proofs = ffi::prove(&srs, &[batch[0].0.clone()], &r, &s, std::ptr::null_mut(), -1).unwrap();
    assert!(ffi::verify(&keys.vk, &proofs[0], &batch[0].1));
    let wrong = vec![batch[0].1[0] + Scalar::ONE];
    assert!(!ffi::verify(&keys.vk, &proofs[0], &wrong), "a wrong public input must not verify");
}

#[test]
fn corrupted_witness_gives_a_proof_that_fails_verification() {
    let keys = common::keys(Kind::Mimc, 9);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 9, 1, &mut rng).unwrap();
    let (mut w, inputs) = batch[0].clone();
    let j = w.aux.len() / 2;
    w.aux[j] += Scalar::ONE; // no longer satisfies the constraints
    let srs = Params::open(&keys.path, false).unwrap();
    let r = common::random_scalars(&mut rng, 1);
    let s = common::random_scalars(&mut rng, 1);
    let proofs = ffi::prove(&srs, &[w], &r, &s, std::ptr::null_mut(), -1).unwrap();
    assert!(!ffi::verify(&keys.vk, &proofs[0], &inputs), "a proof of a corrupted witness must not verify");
}

/// The shape filecoin-proofs sends (one call with all of a sector's
/// partitions), with circuits that share witness buffers: the call's proofs
/// are byte-identical to one-circuit calls with the same witness, r and s,
/// and verify. A boolean circuit, so the batch additions of all circuits run
/// in one pass; on the CPU backend in CI, on the GPU where one is usable.
#[test]
fn a_call_of_circuits_sharing_buffers_equals_one_circuit_calls() {
    let (kind, k) = (Kind::Sha256, 15);
    let keys = common::keys(kind, k);
    let mut rng = common::rng();
    let distinct = kit::witnesses(kind, k, 2, &mut rng).unwrap();
    // Circuits 0, 2 and 3 pass the same buffers, 1 and 4 the other ones.
    let order = [0usize, 1, 0, 0, 1];
    let refs: Vec<_> = order.iter().map(|&i| &distinct[i].0).collect();
    let n = order.len();
    let (r, s) = (common::random_scalars(&mut rng, n), common::random_scalars(&mut rng, n));
    let srs = Params::open(&keys.path, true).unwrap();
    let together = ffi::prove_refs(&srs, &refs, &r, &s, std::ptr::null_mut(), 0).unwrap();
    for (ci, &i) in order.iter().enumerate() {
        let alone = ffi::prove_refs(&srs, &[refs[ci]], &r[ci..=ci], &s[ci..=ci], std::ptr::null_mut(), 0).unwrap();
        assert_eq!(common::bytes(&together[ci]), common::bytes(&alone[0]), "circuit {ci} of {n}: call of {n} vs one-circuit call");
        assert!(ffi::verify(&keys.vk, &together[ci], &distinct[i].1), "circuit {ci} of {n} must verify");
    }
    // The same witness with other blinders gives another proof: the shared
    // buffers were proved once per circuit, not once per buffer.
    assert_ne!(common::bytes(&together[0]), common::bytes(&together[2]));
}
