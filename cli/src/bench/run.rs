//! Running the bench: W worker threads sharing one lock handle, or one call
//! with N circuits, with the library's per-call reports, and the proofs seen
//! across modes (compared byte for byte and written for `--proofs-out`).

use std::collections::HashMap;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use blstrs::Scalar;

use supraseal_c2::CallReport;

use super::job::{blinders, Job, Key};
use super::BenchArgs;
use crate::collector::Witness;
use crate::ffi;

struct Handle(*mut std::ffi::c_void);
// SAFETY: a lock handle is made to be shared by threads (docs/ARCHITECTURE.md §5).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// Per-run outcome.
pub(super) struct Run {
    pub(super) wall: Duration,
    pub(super) reports: Vec<CallReport>,
    pub(super) calls: Vec<crate::trace::Call>,
    pub(super) failures: Vec<String>,
    pub(super) unverified: usize,
}

/// Proofs seen so far, by (worker or 1000 + batch index, partition).
pub(super) type Seen = Mutex<HashMap<(usize, usize), Vec<u8>>>;

/// Records a proof's bytes the first time its (witness, r, s) is proved and
/// reports a difference from an earlier mode.
fn note_proof(seen: &Seen, key: (usize, usize), bytes: Vec<u8>, failures: &Mutex<Vec<String>>) {
    let mut seen = seen.lock().unwrap();
    match seen.get(&key) {
        Some(prev) if *prev != bytes => failures.lock().unwrap().push(format!("{key:?}: proof bytes differ from an earlier mode")),
        Some(_) => {}
        None => {
            seen.insert(key, bytes);
        }
    }
}

pub(super) fn run(job: &Job, args: &BenchArgs, workers: usize, proofs: &Seen) -> Result<Run> {
    let handle = Handle(unsafe { ffi::create_gpu_mutex() });
    let barrier = Barrier::new(workers + 1);
    let failures = Mutex::new(Vec::new());
    let unverified = Mutex::new(0usize);
    let calls = Mutex::new(Vec::new());
    supraseal_c2::record_reports(true);
    let wall = std::thread::scope(|scope| {
        for w in 0..workers {
            let (handle, barrier, failures, unverified, calls) = (&handle, &barrier, &failures, &unverified, &calls);
            scope.spawn(move || {
                barrier.wait();
                for p in 0..args.partitions {
                    let (wit, inputs) = &job.witnesses[w][p % job.witnesses[w].len()];
                    let (r, s) = blinders(args.seed, w, p);
                    let start = Instant::now();
                    let result = job.prove(std::slice::from_ref(wit), &[r], &[s], handle.0);
                    calls.lock().unwrap().push(crate::trace::Call { worker: w, thread: std::thread::current().id(), start, end: Instant::now() });
                    match result {
                        Ok(out) => {
                            if let Some(vk) = &job.vk {
                                if !ffi::verify(vk, &out[0], inputs) {
                                    *unverified.lock().unwrap() += 1;
                                }
                            }
                            note_proof(proofs, (w, p), proof_bytes(&out[0]), failures);
                        }
                        Err(e) => failures.lock().unwrap().push(format!("worker {w} partition {p}: {e}")),
                    }
                }
            });
        }
        barrier.wait();
        // The scope joins every worker before returning.
        Instant::now()
    })
    .elapsed();
    let reports = supraseal_c2::take_reports();
    supraseal_c2::record_reports(false);
    unsafe { ffi::destroy_gpu_mutex(handle.0) };
    Ok(Run {
        wall,
        reports,
        calls: calls.into_inner().unwrap(),
        failures: failures.into_inner().unwrap(),
        unverified: unverified.into_inner().unwrap(),
    })
}

/// One call with `n` circuits (the workers' first witnesses in turn), as
/// filecoin-proofs sends a sector's partitions. Circuit i's witness, r and s
/// depend on i alone, so its proof (keyed (1000 + i, 0)) is compared across
/// batch sizes and modes.
pub(super) fn run_batch(job: &Job, args: &BenchArgs, n: usize, proofs: &Seen) -> Result<Run> {
    let refs: Vec<&(Witness, Vec<Scalar>)> = (0..n).map(|i| &job.witnesses[i % job.witnesses.len()][0]).collect();
    let (r, s): (Vec<Scalar>, Vec<Scalar>) = (0..n).map(|i| blinders(args.seed, 1000 + i, 0)).unzip();
    let failures = Mutex::new(Vec::new());
    supraseal_c2::record_reports(true);
    let start = Instant::now();
    let result = match &job.key {
        Key::Ours(p) => ffi::prove_refs(p, &refs.iter().map(|x| &x.0).collect::<Vec<_>>(), &r, &s, std::ptr::null_mut(), 0).map_err(|e| e.to_string()),
        Key::Upstream(u) => u.prove(&refs.iter().map(|x| &x.0).collect::<Vec<_>>(), &r, &s),
    };
    let end = Instant::now();
    let reports = supraseal_c2::take_reports();
    supraseal_c2::record_reports(false);
    let mut unverified = 0;
    match result {
        Ok(out) => {
            for (i, p) in out.iter().enumerate() {
                if let Some(vk) = &job.vk {
                    unverified += usize::from(!ffi::verify(vk, p, &refs[i].1));
                }
                note_proof(proofs, (1000 + i, 0), proof_bytes(p), &failures);
            }
        }
        Err(e) => failures.lock().unwrap().push(format!("batch of {n}: {e}")),
    }
    let calls = vec![crate::trace::Call { worker: 0, thread: std::thread::current().id(), start, end }];
    Ok(Run { wall: end - start, reports, calls, failures: failures.into_inner().unwrap(), unverified })
}

/// The 384 bytes of a proof as the C caller receives them.
fn proof_bytes(p: &supraseal_c2::groth16_proof) -> Vec<u8> {
    // SAFETY: groth16_proof is repr(C) plain data (u64 limbs), 384 bytes, no padding.
    unsafe { std::slice::from_raw_parts(p as *const _ as *const u8, std::mem::size_of_val(p)) }.to_vec()
}

/// Writes every proof in `proofs` as a line `<worker|batch> <partition> <hex>`,
/// sorted; returns the number of lines.
pub(super) fn write_proofs(proofs: &Seen, file: &mut std::fs::File) -> std::io::Result<usize> {
    let mut lines: Vec<String> = proofs
        .lock()
        .unwrap()
        .iter()
        .map(|(&(w, p), b)| {
            let who = if w >= 1000 { format!("batch{}", w - 1000) } else { format!("w{w}") };
            format!("{who} {p} {}", b.iter().map(|x| format!("{x:02x}")).collect::<String>())
        })
        .collect();
    lines.sort();
    std::io::Write::write_all(file, (lines.join("\n") + "\n").as_bytes())?;
    Ok(lines.len())
}
