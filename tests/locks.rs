//! The lock handle: shared by many threads proving at once, released after
//! every call (success or error), and the default handle for NULL.

mod common;
use common::Handle;

use std::sync::Arc;

use supraseal_c2::locks::LockHandle;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

#[test]
fn many_threads_share_one_handle_and_every_proof_verifies() {
    let keys = Arc::new(common::keys(Kind::Mimc, 9));
    let srs = Arc::new(Params::open(&keys.path, true).unwrap());
    let handle = Arc::new(Handle(unsafe { ffi::create_gpu_mutex() }));
    assert!(!handle.0.is_null());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (keys, srs, handle) = (keys.clone(), srs.clone(), handle.clone());
            std::thread::spawn(move || {
                let mut rng = common::rng();
                for round in 0..3 {
                    let batch = kit::witnesses(Kind::Mimc, 9, 2, &mut rng).unwrap();
                    let ws: Vec<_> = batch.iter().map(|(w, _)| w.clone()).collect();
                    let r = common::random_scalars(&mut rng, 2);
                    let s = common::random_scalars(&mut rng, 2);
                    let gpu_index = if round == 0 { 0 } else { -1 };
                    // Alternate the shared handle with NULL (the default handle).
                    let mtx = if (t + round) % 2 == 0 { handle.0 } else { std::ptr::null_mut() };
                    let proofs = ffi::prove(&srs, &ws, &r, &s, mtx, gpu_index).unwrap();
                    for (p, (_, inputs)) in proofs.iter().zip(&batch) {
                        assert!(ffi::verify(&keys.vk, p, inputs), "thread {t} round {round}");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker thread");
    }
    let h_arc = supraseal_c2::abi::handles::lock(handle.0).expect("a live lock handle");
    let h: &LockHandle = &h_arc;
    assert!(h.locks.mem_is_free() && h.locks.compute_is_free(), "both locks are released after the calls");
    unsafe { ffi::destroy_gpu_mutex(handle.0) };
    unsafe { ffi::destroy_gpu_mutex(std::ptr::null_mut()) }; // NULL is ignored
}

#[test]
fn locks_are_released_after_a_failed_call() {
    let keys = common::keys(Kind::Mimc, 8);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let (mut w, _) = batch[0].clone();
    w.a_aux_density.words[0] ^= 1; // popcount no longer matches
    let handle = unsafe { ffi::create_gpu_mutex() };
    let r = common::random_scalars(&mut rng, 1);
    let e = ffi::prove(&srs, &[w], &r, &r, handle, 0).unwrap_err();
    assert_eq!(e.code, libc::EINVAL);
    let h_arc = supraseal_c2::abi::handles::lock(handle).expect("a live lock handle");
    let h: &LockHandle = &h_arc;
    assert!(h.locks.mem_is_free() && h.locks.compute_is_free());
    // And the handle still works for a good call.
    let ok = ffi::prove(&srs, &[batch[0].0.clone()], &r, &r, handle, 0).unwrap();
    assert!(ffi::verify(&keys.vk, &ok[0], &batch[0].1));
    unsafe { ffi::destroy_gpu_mutex(handle) };
}
