//! bellperson 0.27 with `cuda-supraseal`, through its public API only:
//! parameters made by `generate_random_parameters` and written as a real
//! `.params` file, loaded as `SuprasealParameters` (our `SRS::try_new`),
//! batches of circuits proved by `create_random_proof_batch` and friends
//! (which call our `generate_groth16_proofs`), checked by `verify_proof`.

use std::io::Write;

use bellperson::groth16::{
    create_proof_batch, create_random_proof, create_random_proof_batch, create_random_proof_batch_in_priority,
    generate_random_parameters, prepare_verifying_key, verify_proof, Parameters, Proof, SuprasealParameters,
};
use blstrs::{Bls12, Scalar as Fr};
use rust_bellperson_ffi_tests::{proof_bytes, random_fr, rng, TestCircuit};

const ROUNDS: usize = 300;

struct Setup {
    params: Parameters<Bls12>,
    supra: SuprasealParameters<Bls12>,
    _dir: tempfile::TempDir,
}

fn setup(seed: u64) -> Setup {
    let params = generate_random_parameters::<Bls12, _, _>(TestCircuit::blank(ROUNDS), &mut rng(seed)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test-circuit.params");
    let mut f = std::fs::File::create(&path).unwrap();
    params.write(&mut f).unwrap();
    f.flush().unwrap();
    let supra = SuprasealParameters::new(path).unwrap();
    Setup { params, supra, _dir: dir }
}

fn circuits(n: usize, seed: u64) -> Vec<TestCircuit> {
    let mut r = rng(seed);
    (0..n).map(|i| TestCircuit::new(random_fr(&mut r), (0x9e37u16).wrapping_mul(i as u16 + 1), ROUNDS)).collect()
}

#[test]
fn batches_of_circuits_prove_and_verify() {
    let s = setup(1);
    let pvk = prepare_verifying_key(&s.params.vk);
    for (n, seed) in [(1, 10), (3, 11), (5, 12)] {
        let cs = circuits(n, seed);
        let inputs: Vec<Vec<Fr>> = cs.iter().map(|c| c.public_inputs()).collect();
        let proofs: Vec<Proof<Bls12>> = create_random_proof_batch(cs, &s.supra, &mut rng(seed + 100)).unwrap();
        assert_eq!(proofs.len(), n);
        for (i, (p, inp)) in proofs.iter().zip(&inputs).enumerate() {
            assert_eq!(inp.len(), 3, "three public inputs");
            assert!(verify_proof(&pvk, p, inp).unwrap(), "batch of {n}: proof {i} must verify");
            // Another circuit's public inputs, or one changed input: rejected.
            let mut wrong = inp.clone();
            wrong[1] += Fr::from(1u64);
            assert!(!verify_proof(&pvk, p, &wrong).unwrap(), "batch of {n}: proof {i} with a wrong input");
        }
        if n > 1 {
            assert!(!verify_proof(&pvk, &proofs[0], &inputs[1]).unwrap(), "proof 0 with circuit 1's inputs");
            assert_ne!(proof_bytes(&proofs[0]), proof_bytes(&proofs[1]));
        }
    }
}

#[test]
fn single_proof_and_priority_batch() {
    let s = setup(2);
    let pvk = prepare_verifying_key(&s.params.vk);
    let c = circuits(1, 20).pop().unwrap();
    let inp = c.public_inputs();
    let p = create_random_proof(c, &s.supra, &mut rng(21)).unwrap();
    assert!(verify_proof(&pvk, &p, &inp).unwrap());

    let cs = circuits(2, 22);
    let inputs: Vec<_> = cs.iter().map(|c| c.public_inputs()).collect();
    let proofs = create_random_proof_batch_in_priority(cs, &s.supra, &mut rng(23)).unwrap();
    for (p, inp) in proofs.iter().zip(&inputs) {
        assert!(verify_proof(&pvk, p, inp).unwrap());
    }
}

#[test]
fn fixed_r_s_give_deterministic_proofs() {
    let s = setup(3);
    let pvk = prepare_verifying_key(&s.params.vk);
    let mut r = rng(30);
    let r_s: Vec<Fr> = (0..3).map(|_| random_fr(&mut r)).collect();
    let s_s: Vec<Fr> = (0..3).map(|_| random_fr(&mut r)).collect();
    let one = create_proof_batch(circuits(3, 31), &s.supra, r_s.clone(), s_s.clone()).unwrap();
    let two = create_proof_batch(circuits(3, 31), &s.supra, r_s, s_s).unwrap();
    let inputs: Vec<_> = circuits(3, 31).iter().map(|c| c.public_inputs()).collect();
    for i in 0..3 {
        assert_eq!(proof_bytes(&one[i]), proof_bytes(&two[i]), "same r, s: same proof");
        assert!(verify_proof(&pvk, &one[i], &inputs[i]).unwrap());
    }
}

#[test]
fn params_loading_errors_surface_as_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = SuprasealParameters::<Bls12>::new(dir.path().join("missing.params"));
    let e = missing.err().expect("missing file must fail");
    assert!(e.to_string().contains("missing.params"), "message names the file: {e}");

    let bad = dir.path().join("truncated.params");
    std::fs::write(&bad, [0u8; 100]).unwrap();
    let e = SuprasealParameters::<Bls12>::new(bad).err().expect("truncated file must fail");
    assert!(e.to_string().contains("truncated.params"), "message names the file: {e}");
}
