//! Soak (bounded, CPU backend): 8 threads × 25 proofs sharing one cached SRS
//! handle and one lock handle, while other threads clone, drop, evict and
//! reopen SRS handles. Every proof verifies, a watchdog fails the test on a
//! deadlock, and the number of live loaded keys returns to zero.

mod common;
use common::Handle;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use supraseal_c2::srs::live_keys;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

const WORKERS: usize = 8;
const PROOFS: usize = 25;

#[test]
fn soak_shared_srs_and_lock_handle_under_clone_drop_evict_churn() {
    std::env::set_var("SUPRASEAL_C2_BACKEND", "cpu");
    let keys = Arc::new(common::keys(Kind::Mimc, 8));
    assert_eq!(live_keys(), 0, "no key is loaded before the soak");
    let srs = Arc::new(Params::open(&keys.path, true).unwrap());
    let lock = Arc::new(Handle(unsafe { ffi::create_gpu_mutex() }));
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel::<Result<usize, String>>();

    let mut threads = Vec::new();
    for w in 0..WORKERS {
        let (keys, srs, lock, done) = (keys.clone(), srs.clone(), lock.clone(), done_tx.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = common::rng();
            let mut ok = 0;
            for i in 0..PROOFS {
                let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
                let r = common::random_scalars(&mut rng, 1);
                let s = common::random_scalars(&mut rng, 1);
                match ffi::prove(&srs, &[batch[0].0.clone()], &r, &s, lock.0, -1) {
                    Ok(p) if ffi::verify(&keys.vk, &p[0], &batch[0].1) => ok += 1,
                    Ok(_) => return done.send(Err(format!("worker {w} proof {i} does not verify"))).unwrap(),
                    Err(e) => return done.send(Err(format!("worker {w} proof {i}: {e}"))).unwrap(),
                }
            }
            done.send(Ok(ok)).unwrap();
        }));
    }
    // Churn: clones, drops, evictions and fresh cached opens of the same path.
    for c in 0..3 {
        let (keys, srs, stop) = (keys.clone(), srs.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut held = Vec::new();
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                match (i + c) % 4 {
                    0 => held.push(srs.as_ref().clone()),
                    1 => drop(held.pop()),
                    2 => srs.evict(),
                    _ => held.push(Params::open(&keys.path, true).unwrap()),
                }
                if held.len() > 16 {
                    held.clear();
                }
                i += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
        }));
    }
    drop(done_tx);

    let mut proved = 0;
    for _ in 0..WORKERS {
        match done_rx.recv_timeout(Duration::from_secs(900)) {
            Ok(Ok(n)) => proved += n,
            Ok(Err(e)) => panic!("{e}"),
            Err(_) => panic!("watchdog: workers did not finish within 900 s (deadlock?)"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("thread");
    }
    assert_eq!(proved, WORKERS * PROOFS);
    unsafe { ffi::destroy_gpu_mutex(lock.0) };

    srs.evict();
    drop(Arc::try_unwrap(srs).ok().expect("last SRS handle"));
    assert_eq!(live_keys(), 0, "every loaded key is released after the soak");
}
