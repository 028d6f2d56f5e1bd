//! Every validation rule returns EINVAL with a message naming the argument
//! and the expected vs actual value; nothing is written on error.

mod common;

use std::ffi::c_void;

use supraseal_c2::{fr_t, groth16_proof, CAssignment};
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::ffi::{self, AbiError, Params, RawSrs};
use supraseal_c2_cli::kit;

const EINVAL: i32 = libc::EINVAL;

struct Fixture {
    srs: Params,
    witnesses: Vec<Witness>,
    r: Vec<blstrs::Scalar>,
    s: Vec<blstrs::Scalar>,
}

fn fixture(n: usize) -> Fixture {
    let keys = common::keys(Kind::Mimc, 8);
    let mut rng = common::rng();
    let witnesses = kit::witnesses(Kind::Mimc, 8, n, &mut rng).unwrap().into_iter().map(|(w, _)| w).collect();
    let r = common::random_scalars(&mut rng, n);
    let s = common::random_scalars(&mut rng, n);
    Fixture { srs: Params::open(&keys.path, true).unwrap(), witnesses, r, s }
}

/// Calls the ABI with `provers` (possibly edited) and the fixture's r, s, srs.
fn call(f: &Fixture, provers: &[CAssignment]) -> Result<Vec<groth16_proof>, AbiError> {
    let mut proofs = vec![groth16_proof::default(); provers.len()];
    ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(
            provers.as_ptr(),
            provers.len(),
            f.r.as_ptr() as *const fr_t,
            f.s.as_ptr() as *const fr_t,
            proofs.as_mut_ptr(),
            f.srs.raw(),
            std::ptr::null_mut(),
            -1,
        )
    })
    .map(|_| proofs)
}

#[track_caller]
fn expect_einval(r: Result<Vec<groth16_proof>, AbiError>, needle: &str) {
    match r {
        Ok(_) => panic!("expected EINVAL mentioning {needle:?}, got success"),
        Err(e) => {
            assert_eq!(e.code, EINVAL, "code for {needle:?}: {}", e.message);
            assert!(e.message.contains(needle), "message {:?} should contain {needle:?}", e.message);
            assert!(e.message.starts_with("generate_groth16_proofs_c: "), "message names the function: {:?}", e.message);
        }
    }
}

fn edited(f: &Fixture, edit: impl Fn(&mut Vec<CAssignment>)) -> Result<Vec<groth16_proof>, AbiError> {
    let mut provers: Vec<CAssignment> = f.witnesses.iter().map(Witness::assignment).collect();
    edit(&mut provers);
    call(f, &provers)
}

#[test]
fn the_unedited_fixture_proves() {
    let f = fixture(2);
    assert!(edited(&f, |_| {}).is_ok());
}

#[test]
fn null_pointers_in_the_call_are_rejected() {
    let f = fixture(1);
    let provers: Vec<CAssignment> = f.witnesses.iter().map(Witness::assignment).collect();
    let mut proofs = vec![groth16_proof::default(); 1];
    let r = f.r.as_ptr() as *const fr_t;
    let s = f.s.as_ptr() as *const fr_t;
    let run = |p: *const CAssignment, n: usize, r: *const fr_t, s: *const fr_t, out: *mut groth16_proof, srs: *const RawSrs| {
        ffi::check(unsafe { ffi::generate_groth16_proofs_c(p, n, r, s, out, srs, std::ptr::null_mut(), -1) })
            .map(|_| Vec::new())
    };
    let out = proofs.as_mut_ptr();
    expect_einval(run(std::ptr::null(), 1, r, s, out, f.srs.raw()), "provers is NULL");
    expect_einval(run(provers.as_ptr(), 0, r, s, out, f.srs.raw()), "num_circuits is 0");
    expect_einval(run(provers.as_ptr(), 1, std::ptr::null(), s, out, f.srs.raw()), "r_s is NULL");
    expect_einval(run(provers.as_ptr(), 1, r, std::ptr::null(), out, f.srs.raw()), "s_s is NULL");
    expect_einval(run(provers.as_ptr(), 1, r, s, std::ptr::null_mut(), f.srs.raw()), "proofs is NULL");
    expect_einval(run(provers.as_ptr(), 1, r, s, out, std::ptr::null()), "srs is NULL");
    let empty = RawSrs { ptr: std::ptr::null() };
    expect_einval(run(provers.as_ptr(), 1, r, s, out, &empty), "empty handle");
    assert_eq!(proofs[0], groth16_proof::default(), "nothing is written on error");
}

#[test]
fn null_pointers_inside_an_assignment_are_rejected() {
    let f = fixture(2);
    expect_einval(edited(&f, |p| p[1].a = std::ptr::null()), "provers[1].a is NULL but its size is");
    expect_einval(edited(&f, |p| p[0].c = std::ptr::null()), "provers[0].c is NULL");
    expect_einval(edited(&f, |p| p[1].aux_assignment_data = std::ptr::null()), "provers[1].aux_assignment_data is NULL");
    expect_einval(edited(&f, |p| p[0].inp_assignment_data = std::ptr::null()), "provers[0].inp_assignment_data is NULL");
    expect_einval(edited(&f, |p| p[0].a_aux_density = std::ptr::null()), "provers[0].a_aux_density is NULL");
    expect_einval(edited(&f, |p| p[1].b_aux_density = std::ptr::null()), "provers[1].b_aux_density is NULL");
}

#[test]
fn misaligned_scalar_pointer_is_rejected() {
    let f = fixture(1);
    expect_einval(edited(&f, |p| p[0].b = (p[0].b as usize + 4) as *const fr_t), "provers[0].b");
}

#[test]
fn bit_lengths_must_match_the_variable_counts() {
    let f = fixture(1);
    expect_einval(edited(&f, |p| p[0].a_aux_bit_len -= 1), "provers[0].a_aux_bit_len is");
    expect_einval(edited(&f, |p| p[0].b_aux_bit_len += 1), "provers[0].b_aux_bit_len is");
    expect_einval(edited(&f, |p| p[0].b_inp_bit_len += 1), "provers[0].b_inp_bit_len is");
}

#[test]
fn popcounts_must_match_the_bit_vectors() {
    let f = fixture(2);
    let ones = f.witnesses[1].a_aux_density.popcount();
    expect_einval(
        edited(&f, |p| p[1].a_aux_popcount += 2),
        &format!("provers[1].a_aux_popcount is {} but the bit vector has {ones} ones", ones + 2),
    );
    expect_einval(edited(&f, |p| p[0].b_aux_popcount -= 1), "provers[0].b_aux_popcount is");
    expect_einval(edited(&f, |p| p[0].b_inp_popcount += 1), "provers[0].b_inp_popcount is");
}

#[test]
fn abc_size_must_be_within_the_domain() {
    let f = fixture(1);
    expect_einval(edited(&f, |p| p[0].abc_size = 1 << 20), "provers[0].abc_size is 1048576 but must be in 1..=256");
    expect_einval(edited(&f, |p| p[0].abc_size = 0), "provers[0].abc_size is 0");
}

#[test]
fn sizes_must_match_the_srs() {
    // A witness of a bigger circuit against the k = 8 key.
    let f = fixture(1);
    let mut rng = common::rng();
    let big = kit::witnesses(Kind::Mimc, 9, 1, &mut rng).unwrap();
    let provers = vec![big[0].0.assignment()];
    expect_einval(call(&f, &provers), "abc_size is");
    let mut small_abc = provers.clone();
    small_abc[0].abc_size = 200;
    expect_einval(call(&f, &small_abc), "SRS l point count is");
}

#[test]
fn circuits_in_one_call_must_share_sizes_and_densities() {
    let f = fixture(2);
    expect_einval(edited(&f, |p| p[1].abc_size -= 1), "provers[1].abc_size is");
    // A second density vector with one bit moved: same popcount, different bits.
    let mut words = f.witnesses[1].a_aux_density.words.clone();
    let len = f.witnesses[1].a_aux_density.len;
    let set = (0..len).find(|&i| (words[i / 64] >> (i % 64)) & 1 == 1).unwrap();
    let clear = (0..len).find(|&i| (words[i / 64] >> (i % 64)) & 1 == 0).unwrap();
    words[set / 64] ^= 1 << (set % 64);
    words[clear / 64] ^= 1 << (clear % 64);
    let ptr = words.as_ptr();
    expect_einval(edited(&f, |p| p[1].a_aux_density = ptr), "provers[1].a_aux_density differs from provers[0]");
}

#[test]
fn bad_gpu_index_and_lock_handle_are_rejected() {
    let f = fixture(1);
    let provers: Vec<CAssignment> = f.witnesses.iter().map(Witness::assignment).collect();
    let mut proofs = vec![groth16_proof::default(); 1];
    let r = f.r.as_ptr() as *const fr_t;
    let s = f.s.as_ptr() as *const fr_t;
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(provers.as_ptr(), 1, r, s, proofs.as_mut_ptr(), f.srs.raw(), std::ptr::null_mut(), -2)
    });
    expect_einval(e.map(|_| Vec::new()), "gpu_index is -2");
    let mut not_a_handle = [0u64; 8];
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(
            provers.as_ptr(),
            1,
            r,
            s,
            proofs.as_mut_ptr(),
            f.srs.raw(),
            not_a_handle.as_mut_ptr() as *mut c_void,
            0,
        )
    });
    expect_einval(e.map(|_| Vec::new()), "is not a live lock handle");
}

#[test]
fn non_canonical_scalars_are_rejected_not_reduced() {
    let f = fixture(2);
    // r itself (and anything above it) is not a field element's representation.
    let r_limbs = [0xffff_ffff_0000_0001u64, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];
    let mut aux = f.witnesses[1].aux.clone();
    let j = aux.len() / 3;
    aux[j] = blstrs::Scalar::from(blst::blst_fr { l: r_limbs });
    let ptr = aux.as_ptr() as *const fr_t;
    expect_einval(
        edited(&f, |p| p[1].aux_assignment_data = ptr),
        &format!("provers[1].aux_assignment_data[{j}] is not a canonical field element"),
    );
    let mut a = f.witnesses[0].a.clone();
    a[0] = blstrs::Scalar::from(blst::blst_fr { l: [u64::MAX; 4] });
    let ptr = a.as_ptr() as *const fr_t;
    expect_einval(edited(&f, |p| p[0].a = ptr), "provers[0].a[0] is not a canonical field element");

    let provers: Vec<CAssignment> = f.witnesses.iter().map(Witness::assignment).collect();
    let mut bad_r = f.r.clone();
    bad_r[1] = blstrs::Scalar::from(blst::blst_fr { l: r_limbs });
    let mut proofs = vec![groth16_proof::default(); 2];
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(
            provers.as_ptr(),
            2,
            bad_r.as_ptr() as *const fr_t,
            f.s.as_ptr() as *const fr_t,
            proofs.as_mut_ptr(),
            f.srs.raw(),
            std::ptr::null_mut(),
            -1,
        )
    });
    expect_einval(e.map(|_| Vec::new()), "r_s[1] is not a canonical field element");
}

/// The scalars of circuits 1.. are checked beside circuit 0's work, not
/// before it: a bad one in any later circuit, any vector, still fails the
/// call (both forms) with the message validation would give, the lowest
/// bad circuit named, and no proof written.
#[test]
fn a_non_canonical_scalar_in_a_later_circuit_fails_the_call() {
    let f = fixture(4);
    let above_r = blstrs::Scalar::from(blst::blst_fr { l: [u64::MAX; 4] });
    let mut witnesses = f.witnesses.clone();
    let last = witnesses[3].c.len() - 1;
    witnesses[3].c[last] = above_r;
    let provers: Vec<CAssignment> = witnesses.iter().map(Witness::assignment).collect();
    let mut proofs = vec![groth16_proof::default(); 4];
    let before = proofs.clone();
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(
            provers.as_ptr(),
            4,
            f.r.as_ptr() as *const fr_t,
            f.s.as_ptr() as *const fr_t,
            proofs.as_mut_ptr(),
            f.srs.raw(),
            std::ptr::null_mut(),
            -1,
        )
    });
    expect_einval(e.map(|_| Vec::new()), &format!("provers[3].c[{last}] is not a canonical field element"));
    assert_eq!(proofs, before, "no proof is written on error");

    // Two bad circuits: the lower one is named, in the split form too.
    witnesses[2].b[0] = above_r;
    match ffi::PendingProof::start(&f.srs, &witnesses, &f.r, &f.s, std::ptr::null_mut(), -1) {
        Ok(_) => panic!("the split form accepted a non-canonical scalar of provers[2]"),
        Err(e) => {
            assert_eq!(e.code, EINVAL, "{}", e.message);
            assert!(e.message.contains("provers[2].b[0] is not a canonical field element"), "{}", e.message);
        }
    }

    // The same witnesses, repaired, prove: the checks leave nothing behind.
    witnesses[2].b[0] = f.witnesses[2].b[0];
    witnesses[3].c[last] = f.witnesses[3].c[last];
    let provers: Vec<CAssignment> = witnesses.iter().map(Witness::assignment).collect();
    assert!(call(&f, &provers).is_ok());
}

#[test]
fn sizes_beyond_the_key_are_rejected_before_any_density_word_is_read() {
    let f = fixture(1);
    // Consistent but huge sizes with the fixture's short density buffers: the
    // validator must compare them with the key before reading 2^40 bits.
    let huge = 1usize << 40;
    expect_einval(
        edited(&f, |p| {
            p[0].aux_assignment_size = huge;
            p[0].a_aux_bit_len = huge;
            p[0].b_aux_bit_len = huge;
        }),
        "provers[0].aux_assignment_size is 1099511627776",
    );
    expect_einval(
        edited(&f, |p| {
            p[0].inp_assignment_size = huge;
            p[0].b_inp_bit_len = huge;
        }),
        "provers[0].inp_assignment_size is 1099511627776",
    );
}
