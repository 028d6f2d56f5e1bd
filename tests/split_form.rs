//! The split form (start + finalize) gives the one-shot call's proofs, owns
//! its inputs after start, and tolerates misuse of the pending handle.

mod common;

use std::ffi::c_void;

use supraseal_c2::groth16_proof;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params, PendingProof};
use supraseal_c2_cli::kit;

const EINVAL: i32 = libc::EINVAL;

#[test]
fn start_then_finalize_equals_the_one_shot_call() {
    let keys = common::keys(Kind::Mimc, 9);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 9, 2, &mut rng).unwrap();
    let ws: Vec<_> = batch.iter().map(|(w, _)| w.clone()).collect();
    let r = common::random_scalars(&mut rng, 2);
    let s = common::random_scalars(&mut rng, 2);
    let srs = Params::open(&keys.path, true).unwrap();
    let one_shot = ffi::prove(&srs, &ws, &r, &s, std::ptr::null_mut(), -1).unwrap();

    // The caller's witness buffers are gone before finalize: the pending
    // handle must not read them.
    let pending = {
        let owned = ws.clone();
        PendingProof::start(&srs, &owned, &r, &s, std::ptr::null_mut(), -1).unwrap()
    };
    drop(srs); // the handle keeps its own reference to the key
    let split = pending.finalize().unwrap();
    assert_eq!(split, one_shot);
    for (p, (_, inputs)) in split.iter().zip(&batch) {
        assert!(ffi::verify(&keys.vk, p, inputs));
    }
}

#[test]
fn destroy_without_finalize_and_null_handles_are_safe() {
    let keys = common::keys(Kind::Mimc, 8);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let ws = vec![batch[0].0.clone()];
    let r = common::random_scalars(&mut rng, 1);
    let srs = Params::open(&keys.path, true).unwrap();
    for _ in 0..3 {
        let p = PendingProof::start(&srs, &ws, &r, &r, std::ptr::null_mut(), -1).unwrap();
        drop(p); // destroy_pending_proof without finalize
    }
    unsafe { ffi::destroy_pending_proof(std::ptr::null_mut()) };

    let mut proofs = vec![groth16_proof::default(); 1];
    let e = ffi::check(unsafe { ffi::finalize_groth16_proof_c(std::ptr::null_mut(), proofs.as_mut_ptr()) }).unwrap_err();
    assert_eq!(e.code, EINVAL);
    assert!(e.message.contains("not a live pending proof"), "{}", e.message);
}

#[test]
fn finalize_twice_and_destroy_after_finalize_are_refused_harmlessly() {
    let keys = common::keys(Kind::Mimc, 8);
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let ws = vec![batch[0].0.clone()];
    let r = common::random_scalars(&mut rng, 1);
    let srs = Params::open(&keys.path, true).unwrap();
    let p = PendingProof::start(&srs, &ws, &r, &r, std::ptr::null_mut(), -1).unwrap();
    let raw: *mut c_void = p.raw();
    let proofs = p.finalize().unwrap();
    assert!(ffi::verify(&keys.vk, &proofs[0], &batch[0].1));

    let mut again = vec![groth16_proof::default(); 1];
    let e = ffi::check(unsafe { ffi::finalize_groth16_proof_c(raw, again.as_mut_ptr()) }).unwrap_err();
    assert_eq!(e.code, EINVAL, "{}", e.message);
    assert_eq!(again[0], groth16_proof::default(), "a refused finalize writes nothing");
    unsafe { ffi::destroy_pending_proof(raw) }; // ignored: already finalized
}

#[test]
fn start_reports_errors_and_leaves_no_handle() {
    let keys = common::keys(Kind::Mimc, 8);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut handle: *mut c_void = std::ptr::dangling_mut::<c_void>();
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_start_c(
            std::ptr::null(),
            1,
            std::ptr::null(),
            std::ptr::null(),
            srs.raw(),
            std::ptr::null_mut(),
            -1,
            &mut handle,
        )
    })
    .unwrap_err();
    assert_eq!(e.code, EINVAL);
    assert!(handle.is_null(), "pending_out is NULL after a failed start");
}
