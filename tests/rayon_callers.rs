//! Callers that prove from inside rayon's global pool (a `par_iter` over
//! partitions, as Rust callers write) must not deadlock, even when the pool
//! has a single worker: the library's CPU-thread work runs on its own pool.
//! Regression test for a hang found by review: phase 2 waited for the
//! split-MSM plans while the plans' parallel work sat in the caller's pool.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rayon::prelude::*;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

#[test]
fn proving_from_a_one_worker_global_pool_finishes() {
    // This binary has one test, so the global pool is configured here first.
    rayon::ThreadPoolBuilder::new().num_threads(1).build_global().expect("global pool not yet built");
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            for _ in 0..600 {
                std::thread::sleep(Duration::from_millis(500));
                if done.load(Ordering::SeqCst) {
                    return;
                }
            }
            eprintln!("deadlock: proving inside the global pool did not finish in 300 s");
            std::process::abort();
        })
    };
    let keys = common::keys(Kind::Mimc, 10);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let w = kit::witnesses(Kind::Mimc, 10, 2, &mut rng).unwrap();
    let rs = common::random_scalars(&mut rng, 2);
    let ok: Vec<bool> = (0..4usize)
        .into_par_iter()
        .map(|i| {
            let (wit, inputs) = &w[i % 2];
            let p = ffi::prove(&srs, std::slice::from_ref(wit), &rs[..1], &rs[1..], std::ptr::null_mut(), 0).unwrap();
            ffi::verify(&keys.vk, &p[0], inputs)
        })
        .collect();
    done.store(true, Ordering::SeqCst);
    watchdog.join().unwrap();
    assert_eq!(ok, vec![true; 4]);
}
