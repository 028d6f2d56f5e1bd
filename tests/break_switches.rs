//! Malformed environment switches through the C ABI: every one gives `EINVAL`
//! with a message naming the variable (never `EFAULT`, a caught panic), writes
//! no proof and leaves both locks free; the next call with sane switches is
//! served. Odd but valid spellings (case, surrounding blanks, the largest
//! MiB count that fits in bytes) are accepted and prove correctly.
//!
//! Tests here change process-wide switches, so they run one at a time.

mod common;
use common::bytes;

use std::sync::Mutex;

use supraseal_c2::locks::{self, LockHandle};
use supraseal_c2::pipeline;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

static SERIAL: Mutex<()> = Mutex::new(());

const SWITCHES: [&str; 12] = [
    "SUPRASEAL_C2_LOCKS",
    "SUPRASEAL_C2_VERIFY",
    "SUPRASEAL_C2_PRESTAGE",
    "SUPRASEAL_C2_PRESTAGE_PART",
    "SUPRASEAL_C2_PRESTAGE_RETRY",
    "SUPRASEAL_C2_VRAM_LIMIT_MB",
    "SUPRASEAL_C2_VRAM_MARGIN_MB",
    "SUPRASEAL_C2_FAULT_ALLOC",
    "SUPRASEAL_C2_TAILS_AHEAD_MB",
    "SUPRASEAL_C2_SPLIT_ALWAYS",
    "SUPRASEAL_C2_NTT_RADIX",
    "SUPRASEAL_C2_BACKEND",
];

/// Sets exactly `vars` among the switches; the backend stays as the
/// environment of the test run had it unless `vars` names it.
fn switches(vars: &[(&str, &str)], backend: &Option<String>) {
    for k in SWITCHES {
        std::env::remove_var(k);
    }
    if let Some(b) = backend {
        std::env::set_var("SUPRASEAL_C2_BACKEND", b);
    }
    for (k, v) in vars {
        std::env::set_var(k, v);
    }
}

/// One MiMC circuit (2^8), its key and r, s; the backend the test run chose.
struct Fixture {
    backend: Option<String>,
    keys: kit::Keys,
    srs: Params,
    batch: Vec<(supraseal_c2_cli::collector::Witness, Vec<blstrs::Scalar>)>,
    rs: Vec<blstrs::Scalar>,
}

fn fixture() -> Fixture {
    let backend = std::env::var("SUPRASEAL_C2_BACKEND").ok();
    let keys = common::keys(Kind::Mimc, 8);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let rs = common::random_scalars(&mut rng, 2);
    Fixture { backend, keys, srs, batch, rs }
}

const MALFORMED: &[(&str, &str)] = &[
    ("SUPRASEAL_C2_LOCKS", "three"),
    ("SUPRASEAL_C2_LOCKS", "2"),
    ("SUPRASEAL_C2_LOCKS", "two,single"),
    ("SUPRASEAL_C2_LOCKS", "ｔｗｏ"), // full-width letters
    ("SUPRASEAL_C2_LOCKS", "tw o"),
    ("SUPRASEAL_C2_PRESTAGE", "0"),
    ("SUPRASEAL_C2_PRESTAGE", "true"),
    ("SUPRASEAL_C2_PRESTAGE", "on off"),
    ("SUPRASEAL_C2_PRESTAGE", "💥"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "18446744073709551615"), // u64::MAX MiB overflows bytes
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "17592186044416"),       // 2^44 MiB = 2^64 bytes
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "18446744073709551616"), // beyond u64
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "99999999999999999999999999999999999999"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "-1"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "-0"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "1.5"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "1e3"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "0x10"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "512MB"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "5 12"),
    ("SUPRASEAL_C2_VRAM_MARGIN_MB", "١٢"), // Arabic-Indic digits
    ("SUPRASEAL_C2_VRAM_LIMIT_MB", "16G"),
    ("SUPRASEAL_C2_VRAM_LIMIT_MB", "-16384"),
    ("SUPRASEAL_C2_VRAM_LIMIT_MB", "18446744073709551615"),
    ("SUPRASEAL_C2_VRAM_LIMIT_MB", "１６３８４"), // full-width digits
    ("SUPRASEAL_C2_FAULT_ALLOC", "0@phase1"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "-1@phase1"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "18446744073709551616@phase1"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "2@phase3"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "2"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "@"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "@phase1"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "1@"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "1@phase1@phase2"),
    ("SUPRASEAL_C2_FAULT_ALLOC", "1 @ phase1"),
    ("SUPRASEAL_C2_NTT_RADIX", "16"),
    ("SUPRASEAL_C2_NTT_RADIX", "radix-4"),
    ("SUPRASEAL_C2_NTT_RADIX", "0"),
    // Test-only switches: refused here (a tools build); a shipped build ignores them.
    ("SUPRASEAL_C2_TAILS_AHEAD_MB", "lots"),
    ("SUPRASEAL_C2_TAILS_AHEAD_MB", "-1"),
    ("SUPRASEAL_C2_SPLIT_ALWAYS", "yes"),
    ("SUPRASEAL_C2_SPLIT_ALWAYS", "2"),
    ("SUPRASEAL_C2_PRESTAGE_PART", "3"),
    ("SUPRASEAL_C2_PRESTAGE_PART", "0"),
    ("SUPRASEAL_C2_PRESTAGE", "part"),
    ("SUPRASEAL_C2_PRESTAGE_RETRY", "1"),
    ("SUPRASEAL_C2_PRESTAGE_RETRY", "whole"),
    ("SUPRASEAL_C2_BACKEND", "cuda"),
    ("SUPRASEAL_C2_BACKEND", "cpü"),
    ("SUPRASEAL_C2_BACKEND", "cpu,gpu"),
    ("SUPRASEAL_C2_VERIFY", "yes"),
    ("SUPRASEAL_C2_VERIFY", "10"),
];

#[test]
fn malformed_switches_give_einval_naming_the_variable_and_release_the_locks() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Fixture { backend, keys, srs, batch, rs } = fixture();
    let handle = unsafe { ffi::create_gpu_mutex() };
    let h_arc = supraseal_c2::abi::handles::lock(handle).expect("a live lock handle");
    let h: &LockHandle = &h_arc;
    pipeline::record_reports(true);
    for &(k, v) in MALFORMED {
        switches(&[(k, v)], &backend);
        for (mtx, gpu_index) in [(handle, 0), (std::ptr::null_mut(), -1)] {
            let mut proofs = [supraseal_c2::groth16_proof::default()];
            let provers = [batch[0].0.assignment()];
            let e = ffi::check(unsafe {
                ffi::generate_groth16_proofs_c(
                    provers.as_ptr(),
                    1,
                    rs[..1].as_ptr() as *const supraseal_c2::fr_t,
                    rs[1..].as_ptr() as *const supraseal_c2::fr_t,
                    proofs.as_mut_ptr(),
                    srs.raw(),
                    mtx,
                    gpu_index,
                )
            })
            .expect_err(&format!("{k}={v:?} must be refused"));
            assert_eq!(e.code, libc::EINVAL, "{k}={v:?}: {e}");
            assert!(e.message.contains(k), "{k}={v:?}: message does not name the variable: {e}");
            assert!(e.message.starts_with("generate_groth16_proofs_c"), "{e}");
            assert_eq!(bytes(&proofs[0]), bytes(&supraseal_c2::groth16_proof::default()), "no proof written");
            // The split form refuses it the same way and hands back NULL.
            let mut pending = std::ptr::dangling_mut::<std::ffi::c_void>();
            let e = ffi::check(unsafe {
                ffi::generate_groth16_proofs_start_c(
                    provers.as_ptr(),
                    1,
                    rs[..1].as_ptr() as *const supraseal_c2::fr_t,
                    rs[1..].as_ptr() as *const supraseal_c2::fr_t,
                    srs.raw(),
                    mtx,
                    gpu_index,
                    &mut pending,
                )
            })
            .expect_err("split form");
            assert_eq!(e.code, libc::EINVAL, "{k}={v:?}: {e}");
            assert!(e.message.contains(k), "{e}");
            assert!(pending.is_null(), "pending_out is NULL on error");
        }
        assert!(h.locks.mem_is_free() && h.locks.compute_is_free(), "{k}={v:?}: locks left held");
        let d = locks::default_handle(0);
        assert!(d.locks.mem_is_free() && d.locks.compute_is_free(), "{k}={v:?}: default locks left held");
    }
    let reports = pipeline::take_reports();
    assert!(reports.iter().all(|r| r.error.is_some()), "a refused call left a report without an error: {reports:?}");
    // The next call with sane switches is served on the same handle.
    switches(&[], &backend);
    let p = ffi::prove(&srs, &[batch[0].0.clone()], &rs[..1], &rs[1..], handle, 0).unwrap();
    assert!(ffi::verify(&keys.vk, &p[0], &batch[0].1));
    pipeline::record_reports(false);
    unsafe { ffi::destroy_gpu_mutex(handle) };
}

#[test]
fn odd_but_valid_spellings_are_accepted_and_prove_the_same() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Fixture { backend, keys, srs, batch, rs } = fixture();
    let ws = [batch[0].0.clone()];
    switches(&[], &backend);
    let clean = ffi::prove(&srs, &ws, &rs[..1], &rs[1..], std::ptr::null_mut(), 0).unwrap();
    assert!(ffi::verify(&keys.vk, &clean[0], &batch[0].1));
    let mut valid: Vec<Vec<(&str, &str)>> = vec![
        vec![("SUPRASEAL_C2_LOCKS", "TWO")],
        vec![("SUPRASEAL_C2_LOCKS", "  Single\t")],
        vec![("SUPRASEAL_C2_PRESTAGE", " OFF ")],
        vec![("SUPRASEAL_C2_PRESTAGE", "On")],
        vec![("SUPRASEAL_C2_PRESTAGE", " Whole")],
        // Phase 2 uploads what phase 1 left of circuit 0.
        vec![("SUPRASEAL_C2_PRESTAGE_PART", "1")],
        vec![("SUPRASEAL_C2_PRESTAGE_PART", "2")],
        vec![("SUPRASEAL_C2_PRESTAGE_PART", "1"), ("SUPRASEAL_C2_PRESTAGE_RETRY", " OFF ")],
        vec![("SUPRASEAL_C2_PRESTAGE_RETRY", "On")],
        vec![("SUPRASEAL_C2_VRAM_MARGIN_MB", "0")],
        vec![("SUPRASEAL_C2_VRAM_MARGIN_MB", "17592186044415")], // 2^44 − 1 MiB: fits in bytes
        vec![("SUPRASEAL_C2_VRAM_MARGIN_MB", " 512 ")],
        vec![("SUPRASEAL_C2_LOCKS", "single"), ("SUPRASEAL_C2_PRESTAGE", "off"), ("SUPRASEAL_C2_VRAM_MARGIN_MB", "1")],
        // The NTT's radix changes how the GPU computes, not what.
        vec![("SUPRASEAL_C2_NTT_RADIX", "8")],
        vec![("SUPRASEAL_C2_NTT_RADIX", " 4 ")],
        vec![("SUPRASEAL_C2_NTT_RADIX", "2")],
    ];
    // Limits and injected faults change what a GPU does (fallback, errors);
    // the CPU backend has no device memory, so they must not change anything.
    if backend.as_deref() == Some("cpu") || supraseal_c2::gpu::device_count() == 0 {
        valid.push(vec![("SUPRASEAL_C2_VRAM_LIMIT_MB", "0")]);
        valid.push(vec![("SUPRASEAL_C2_VRAM_LIMIT_MB", "17592186044415")]);
        valid.push(vec![("SUPRASEAL_C2_FAULT_ALLOC", "1@PHASE2")]);
        valid.push(vec![("SUPRASEAL_C2_FAULT_ALLOC", "18446744073709551615@phase1")]);
    }
    for vars in &valid {
        switches(vars, &backend);
        let p = ffi::prove(&srs, &ws, &rs[..1], &rs[1..], std::ptr::null_mut(), 0)
            .unwrap_or_else(|e| panic!("{vars:?} must be accepted: {e}"));
        assert_eq!(bytes(&p[0]), bytes(&clean[0]), "{vars:?}: a different proof for the same witness, r, s");
    }
    switches(&[], &backend);
}

/// The switches are read at the start of every call (`Settings::from_env`):
/// a value changed between two calls applies to the second one.
#[test]
fn a_switch_changed_between_calls_applies_to_the_next_call() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Fixture { backend, keys, srs, batch, rs } = fixture();
    let ws = [batch[0].0.clone()];
    pipeline::record_reports(true);
    for (value, mode) in [("single", locks::LockMode::Single), ("two", locks::LockMode::Two), ("single", locks::LockMode::Single)] {
        switches(&[("SUPRASEAL_C2_LOCKS", value)], &backend);
        let p = ffi::prove(&srs, &ws, &rs[..1], &rs[1..], std::ptr::null_mut(), 0).unwrap();
        assert!(ffi::verify(&keys.vk, &p[0], &batch[0].1));
        let reports = pipeline::take_reports();
        assert_eq!(reports.iter().map(|r| r.lock_mode).collect::<Vec<_>>(), vec![mode], "SUPRASEAL_C2_LOCKS={value}");
    }
    pipeline::record_reports(false);
    switches(&[], &backend);
}
