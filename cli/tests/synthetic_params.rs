//! `params synth` writes a params file that create_SRS accepts (every point
//! decoded and subgroup-checked) and that holds the in-memory synthetic
//! key's points: the same witness, r and s prove to the same bytes with
//! either. `bench --trace` writes a trace whose calls nest and never hold
//! both locks.

use std::path::PathBuf;

use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::synthetic::{self, Shape};

#[path = "../../tests/common/mod.rs"]
mod common;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("synthetic-params");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_synthetic_params_file_loads_and_proves_like_the_in_memory_key() {
    let shape = Shape::new(11);
    let path = scratch("synth-2^11.params");
    let (out, err) = run(&["params", "synth", "--log-domain", "11", "--seed", "5", "--out", path.to_str().unwrap()]);
    assert!(out.contains("wrote"), "{out}{err}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), shape.params_bytes());

    let from_file = Params::open(&path, false).expect("create_SRS accepts the synthetic file");
    let in_memory = unsafe { Params::from_raw(supraseal_c2::SRS::from_key(synthetic::key(&shape, 5)).into_raw()) };
    let mut rng = common::rng();
    let w = synthetic::witness(&shape, rand::Rng::gen(&mut rng));
    let (r, s) = (common::random_scalars(&mut rng, 1), common::random_scalars(&mut rng, 1));
    let a = ffi::prove(&from_file, std::slice::from_ref(&w), &r, &s, std::ptr::null_mut(), -1).unwrap();
    let b = ffi::prove(&in_memory, std::slice::from_ref(&w), &r, &s, std::ptr::null_mut(), -1).unwrap();
    assert_eq!(a, b, "the file holds the in-memory key's points");
    // Another seed is another key.
    let other = unsafe { Params::from_raw(supraseal_c2::SRS::from_key(synthetic::key(&shape, 6)).into_raw()) };
    let c = ffi::prove(&other, std::slice::from_ref(&w), &r, &s, std::ptr::null_mut(), -1).unwrap();
    assert_ne!(a, c);
    std::fs::remove_file(&path).unwrap();
}

fn run(args: &[&str]) -> (String, String) {
    let out = common::cli_command(env!("CARGO_BIN_EXE_supraseal-c2")).args(args).env("SUPRASEAL_C2_BACKEND", "cpu").output().unwrap();
    let (so, se) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{args:?}: {so}{se}");
    (so, se)
}

#[test]
fn the_bench_trace_nests_every_phase_in_its_call_and_never_holds_both_locks() {
    let params = scratch("trace-2^10.params");
    let trace = scratch("trace.json");
    let proofs = scratch("proofs.txt");
    run(&["params", "synth", "--shape", "2^10", "--seed", "3", "--out", params.to_str().unwrap()]);
    let (out, _) = run(&[
        "bench", "--shape", "2^10", "--params", params.to_str().unwrap(), "--seed", "3", "--workers", "1,2", "--partitions", "2",
        "--modes", "single,two", "--batch", "2", "--witnesses", "1", "--trace", trace.to_str().unwrap(), "--proofs-out", proofs.to_str().unwrap(),
    ]);
    assert!(out.contains("params load (Ours)"), "{out}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let calls = supraseal_c2_cli::trace::check(&doc).unwrap_or_else(|e| panic!("{e:#}"));
    // Per mode: W=1 × 2, W=2 × 2, one batch call.
    assert_eq!(calls, 2 * (2 + 4 + 1));
    let events = doc["traceEvents"].as_array().unwrap();
    // (The free-VRAM counter exists on the GPU backend only.)
    for name in ["phase 0", "memory-lock wait", "phase 1 (memory lock)", "compute-lock wait", "phase 2 (compute lock)", "phase 3"] {
        assert!(events.iter().any(|e| e["name"] == name), "no {name} event");
    }
    // Every (worker, partition) once plus the batch's two circuits.
    let lines = std::fs::read_to_string(&proofs).unwrap();
    assert_eq!(lines.lines().count(), 2 * 2 + 2, "{lines}");
    assert!(lines.lines().all(|l| l.split(' ').nth(2).is_some_and(|h| h.len() == 768)));

    // A params file of another seed or shape is refused before any proof.
    for (shape, seed, needle) in [("2^10", "4", "was not written for --seed 4"), ("2^11", "3", "another shape")] {
        let out = common::cli_command(env!("CARGO_BIN_EXE_supraseal-c2"))
            .args(["bench", "--shape", shape, "--params", params.to_str().unwrap(), "--seed", seed, "--workers", "1", "--partitions", "1"])
            .env("SUPRASEAL_C2_BACKEND", "cpu")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(needle), "{shape} seed {seed}: {err}");
    }

    // A broken trace is refused: a phase moved outside its call.
    let mut bad = doc.clone();
    let e = bad["traceEvents"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "phase 3").unwrap();
    e["ts"] = serde_json::json!(e["ts"].as_f64().unwrap() + 1e9);
    assert!(supraseal_c2_cli::trace::check(&bad).is_err());
}

#[test]
fn params_synth_never_replaces_a_special_file_and_leaves_no_temporary_file() {
    let dir = scratch("synth-targets");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let link = dir.join("link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    for target in [&fifo, &link, &dir] {
        let out = common::cli_command(env!("CARGO_BIN_EXE_supraseal-c2"))
            .args(["params", "synth", "--log-domain", "10", "--out", target.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("is not a regular file"), "{}: {err}", target.display());
    }
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&std::fs::symlink_metadata(&fifo).unwrap().file_type()), "the FIFO is still a FIFO");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "only the FIFO and the link: {left:?}");
}
