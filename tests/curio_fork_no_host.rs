//! Built with `--features curio-fork` in a program that defines no
//! `set_membw_throttle` (a host of the fork that does not throttle would
//! fail to link): it links, the library sees no host function and calls
//! none, and the fork's signature proves as usual.
//!
//! `cargo test --release -p supraseal-c2 --features curio-fork --test curio_fork_no_host`

mod common;

use bellperson::groth16::{prepare_verifying_key, verify_proof, Proof};
use blstrs::{Bls12, Scalar};
use supraseal_c2::SRS;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::kit;

#[test]
fn without_a_host_definition_nothing_is_called_and_proofs_verify() {
    assert!(supraseal_c2::curio::host_throttle().is_none(), "this program defines no set_membw_throttle");
    // The fork's G2 MSM placement, so that the throttle point is reached.
    std::env::set_var("SUPRASEAL_C2_G2_MSM", "cpu");
    let keys = common::keys(Kind::Mimc, 9);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 9, 1, &mut rng).unwrap();
    let r_s = common::random_scalars(&mut rng, 1);
    let s_s = common::random_scalars(&mut rng, 1);
    let srs = SRS::try_new(keys.path.clone(), false).unwrap();
    let w = &batch[0].0;
    let mut proofs = vec![Proof::<Bls12> { a: Default::default(), b: Default::default(), c: Default::default() }];
    supraseal_c2::generate_groth16_proof::<Scalar, u64, Proof<Bls12>>(
        &[w.a.as_ptr()],
        &[w.b.as_ptr()],
        &[w.c.as_ptr()],
        w.a.len(),
        &[w.inputs.as_ptr()],
        &[w.aux.as_ptr()],
        w.inputs.len(),
        w.aux.len(),
        &w.a_aux_density.words,
        &w.b_inp_density.words,
        &w.b_aux_density.words,
        w.a_aux_density.popcount(),
        w.b_inp_density.popcount(),
        w.b_aux_density.popcount(),
        1,
        &r_s,
        &s_s,
        &mut proofs,
        &srs,
        std::ptr::null_mut(),
        -1,
    );
    let pvk = prepare_verifying_key(&keys.vk);
    assert!(verify_proof(&pvk, &proofs[0], &batch[0].1).unwrap());
}
