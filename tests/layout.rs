//! The `#[repr(C)]` types have exactly the sizes and offsets of docs/ARCHITECTURE.md §2,
//! and the proof type is byte-compatible with bellperson's `Proof<Bls12>`.

mod common;

use std::mem::{offset_of, size_of};

use bellperson::groth16::Proof;
use blstrs::{Bls12, Scalar};

use supraseal_c2::abi::types::{fp2_t, fp_t, g1_affine_t, g2_affine_t};
use supraseal_c2::{fr_t, groth16_proof, Assignment, CAssignment, RustError, SRS};
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::{ffi, kit};

#[test]
fn type_sizes_match_the_abi() {
    assert_eq!(size_of::<fr_t>(), 32);
    assert_eq!(size_of::<fp_t>(), 48);
    assert_eq!(size_of::<fp2_t>(), 96);
    assert_eq!(size_of::<g1_affine_t>(), 96);
    assert_eq!(size_of::<g2_affine_t>(), 192);
    assert_eq!(size_of::<groth16_proof>(), 384);
    assert_eq!(size_of::<CAssignment>(), 136);
    assert_eq!(size_of::<Assignment<Scalar>>(), 136);
    assert_eq!(size_of::<RustError>(), 16);
    assert_eq!(size_of::<SRS>(), 8);
}

#[test]
fn field_offsets_match_the_abi() {
    assert_eq!(offset_of!(RustError, code), 0);
    assert_eq!(offset_of!(RustError, message), 8);
    assert_eq!(offset_of!(groth16_proof, a), 0);
    assert_eq!(offset_of!(groth16_proof, b), 96);
    assert_eq!(offset_of!(groth16_proof, c), 288);
    assert_eq!(offset_of!(g2_affine_t, y), 96);
    assert_eq!(offset_of!(fp2_t, c1), 48);
    macro_rules! words {
        ($t:ty) => {
            [
                offset_of!($t, a_aux_density),
                offset_of!($t, a_aux_bit_len),
                offset_of!($t, a_aux_popcount),
                offset_of!($t, b_inp_density),
                offset_of!($t, b_inp_bit_len),
                offset_of!($t, b_inp_popcount),
                offset_of!($t, b_aux_density),
                offset_of!($t, b_aux_bit_len),
                offset_of!($t, b_aux_popcount),
                offset_of!($t, a),
                offset_of!($t, b),
                offset_of!($t, c),
                offset_of!($t, abc_size),
                offset_of!($t, inp_assignment_data),
                offset_of!($t, inp_assignment_size),
                offset_of!($t, aux_assignment_data),
                offset_of!($t, aux_assignment_size),
            ]
        };
    }
    let want: Vec<usize> = (0..17).map(|i| i * 8).collect();
    assert_eq!(words!(CAssignment).to_vec(), want, "C Assignment: 17 machine words in order");
    assert_eq!(words!(Assignment<Scalar>).to_vec(), want, "Rust Assignment<S>: same layout");
}

#[test]
fn proof_layout_equals_bellpersons_proof() {
    assert_eq!(size_of::<Proof<Bls12>>(), size_of::<groth16_proof>());
    assert_eq!(offset_of!(Proof<Bls12>, a), offset_of!(groth16_proof, a));
    assert_eq!(offset_of!(Proof<Bls12>, b), offset_of!(groth16_proof, b));
    assert_eq!(offset_of!(Proof<Bls12>, c), offset_of!(groth16_proof, c));
}

/// The Rust API as bellperson 0.27 calls it: `Assignment<Scalar>` values and
/// an uninitialised `Vec<Proof<Bls12>>` that the library must fill.
#[test]
fn rust_api_fills_an_uninitialised_bellperson_proof_buffer() {
    let keys = common::keys(Kind::Mimc, 9);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 9, 2, &mut rng).unwrap();
    let provers: Vec<Assignment<Scalar>> = batch
        .iter()
        .map(|(w, _)| {
            let c = w.assignment();
            Assignment {
                a_aux_density: c.a_aux_density as *const usize,
                a_aux_bit_len: c.a_aux_bit_len,
                a_aux_popcount: c.a_aux_popcount,
                b_inp_density: c.b_inp_density as *const usize,
                b_inp_bit_len: c.b_inp_bit_len,
                b_inp_popcount: c.b_inp_popcount,
                b_aux_density: c.b_aux_density as *const usize,
                b_aux_bit_len: c.b_aux_bit_len,
                b_aux_popcount: c.b_aux_popcount,
                a: w.a.as_ptr(),
                b: w.b.as_ptr(),
                c: w.c.as_ptr(),
                abc_size: w.a.len(),
                inp_assignment_data: w.inputs.as_ptr(),
                inp_assignment_size: w.inputs.len(),
                aux_assignment_data: w.aux.as_ptr(),
                aux_assignment_size: w.aux.len(),
            }
        })
        .collect();
    let r = common::random_scalars(&mut rng, 2);
    let s = common::random_scalars(&mut rng, 2);
    let srs = SRS::try_new(keys.path.clone(), true).unwrap();
    let srs2 = srs.clone();
    let mut proofs: Vec<Proof<Bls12>> = Vec::with_capacity(2);
    #[allow(clippy::uninit_vec)]
    // SAFETY: exactly what bellperson 0.27 does; the library writes every slot.
    unsafe {
        proofs.set_len(2)
    };
    supraseal_c2::generate_groth16_proofs(&provers, &r, &s, &mut proofs, &srs2);
    let pvk = bellperson::groth16::prepare_verifying_key(&keys.vk);
    for (p, (_, inputs)) in proofs.iter().zip(&batch) {
        assert!(bellperson::groth16::verify_proof(&pvk, p, inputs).unwrap());
    }
    // And the ABI path gives the same bytes.
    let ws: Vec<_> = batch.iter().map(|(w, _)| w.clone()).collect();
    let abi = ffi::prove(&ffi::Params::open(&keys.path, true).unwrap(), &ws, &r, &s, std::ptr::null_mut(), -1).unwrap();
    for (a, b) in abi.iter().zip(&proofs) {
        assert_eq!(a, &groth16_proof { a: (&b.a).into(), b: (&b.b).into(), c: (&b.c).into() });
    }
    let err = SRS::try_new("/no/such/file.params".into(), false).unwrap_err();
    assert_eq!(err.code, libc::ENOENT);
    assert!(err.to_string().contains("/no/such/file.params"));
}
