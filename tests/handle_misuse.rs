//! Misuse of the ABI's handles and of create_SRS, as an adversarial C caller
//! commits it (CPU backend, small MiMC circuits). Cases that crashed or hung
//! the process run in a child process (this test binary run again with
//! `HANDLE_MISUSE_CHILD` set), so a regression is reported as a failed test,
//! not a dead test runner.

mod common;

use std::ffi::{c_void, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use supraseal_c2::{fr_t, groth16_proof, CAssignment};
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, AbiError, Params, RawSrs};
use supraseal_c2_cli::kit;

const EINVAL: i32 = libc::EINVAL;
const CHILD: &str = "HANDLE_MISUSE_CHILD";

/// Runs the test `name` of this binary in a child process with `CHILD` set
/// and returns its exit status and output; kills it after `limit`.
fn run_child(name: &str, limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("SUPRASEAL_C2_BACKEND", "cpu")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            return (status.code(), text);
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            return (None, format!("killed after {limit:?} (hung)\n{text}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// In the parent: runs `name` as a child and asserts it exited 0 and ran
/// the child body (so a filtered-out or skipped child cannot pass).
#[track_caller]
fn expect_child_passes(name: &str, limit: Duration) {
    let (code, out) = run_child(name, limit);
    assert_eq!(code, Some(0), "child {name} did not exit cleanly:\n{out}");
    assert!(out.contains(&format!("child {name}: done")), "child {name} did not run its body:\n{out}");
}

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

struct Job {
    srs: Params,
    ws: Vec<supraseal_c2_cli::collector::Witness>,
    r: Vec<blstrs::Scalar>,
    s: Vec<blstrs::Scalar>,
}

fn job(n: usize, rng: &mut impl rand::Rng) -> Job {
    let keys = common::keys(Kind::Mimc, 8);
    let batch = kit::witnesses(Kind::Mimc, 8, n, rng).unwrap();
    Job {
        srs: Params::open(&keys.path, true).unwrap(),
        ws: batch.into_iter().map(|(w, _)| w).collect(),
        r: common::random_scalars(rng, n),
        s: common::random_scalars(rng, n),
    }
}

/// `generate_groth16_proofs_start_c` on the job's circuits, claiming `n` of
/// them, with the key handle at `srs` and the result written to `out`.
fn start_call(j: &Job, n: usize, srs: *const RawSrs, out: *mut *mut c_void) -> Result<(), AbiError> {
    let provers: Vec<CAssignment> = j.ws.iter().map(|w| w.assignment()).collect();
    ffi::check(unsafe {
        ffi::generate_groth16_proofs_start_c(
            provers.as_ptr(),
            n,
            j.r.as_ptr() as *const fr_t,
            j.s.as_ptr() as *const fr_t,
            srs,
            std::ptr::null_mut(),
            -1,
            out,
        )
    })
}

/// `generate_groth16_proofs_start_c` on the job's circuits, claiming `n` of them.
fn start_claiming(j: &Job, n: usize) -> Result<*mut c_void, AbiError> {
    let mut h = std::ptr::null_mut();
    start_call(j, n, j.srs.raw(), &mut h)
        .map(|()| h)
        .inspect_err(|_| {
            assert!(h.is_null(), "a failed start left a handle");
        })
}

fn start_raw(j: &Job) -> *mut c_void {
    start_claiming(j, j.ws.len()).unwrap()
}

fn finalize_raw(h: *mut c_void, n: usize) -> Result<Vec<groth16_proof>, AbiError> {
    let mut proofs = vec![groth16_proof::default(); n];
    ffi::check(unsafe { ffi::finalize_groth16_proof_c(h, proofs.as_mut_ptr()) })?;
    Ok(proofs)
}

fn one_shot(j: &Job) -> Vec<groth16_proof> {
    ffi::prove(&j.srs, &j.ws, &j.r, &j.s, std::ptr::null_mut(), -1).unwrap()
}

#[test]
fn a_stale_pending_handle_is_einval_and_never_reaches_the_next_job() {
    let mut rng = common::rng();
    let a = job(3, &mut rng);
    let b = job(1, &mut rng);
    let b_expected = one_shot(&b);

    let ha = start_raw(&a);
    assert_eq!(finalize_raw(ha, 3).unwrap(), one_shot(&a));
    // Many new jobs, so an allocator that reuses A's memory would hand the
    // same value out again if handles were addresses.
    let mut earlier = vec![ha];
    for _ in 0..8 {
        let h = start_raw(&b);
        assert!(!earlier.contains(&h), "handle value {h:p} handed out twice");
        earlier.push(h);
        unsafe { ffi::destroy_pending_proof(h) };
    }
    let hb = start_raw(&b);
    assert!(!earlier.contains(&hb));

    // The second finalize of A fails, writes nothing, and leaves B alone.
    let mut slots = vec![groth16_proof::default(); 3];
    let e = ffi::check(unsafe { ffi::finalize_groth16_proof_c(ha, slots.as_mut_ptr()) }).unwrap_err();
    assert_eq!(e.code, EINVAL, "{}", e.message);
    assert!(e.message.contains("not a live pending proof") && e.message.contains("stale"), "{}", e.message);
    assert!(slots.iter().all(|p| *p == groth16_proof::default()), "no proof written on error");
    // A destroy of the stale A does not destroy B either.
    unsafe { ffi::destroy_pending_proof(ha) };
    assert_eq!(finalize_raw(hb, 1).unwrap(), b_expected, "B's owner gets B's proof");
    // And B is now stale too.
    assert!(finalize_raw(hb, 1).unwrap_err().message.contains("stale"));
}

#[test]
fn values_that_were_never_pending_handles_are_rejected_without_a_dereference() {
    let lock = unsafe { ffi::create_gpu_mutex() };
    let mut on_stack = [0u64; 16];
    let on_heap = Box::into_raw(Box::new([7u8; 64]));
    for (h, needle) in [
        (0x10 as *mut c_void, "never returned"),
        (on_stack.as_mut_ptr() as *mut c_void, "never returned"),
        (on_heap as *mut c_void, "never returned"),
        (lock, "is a lock handle"),
    ] {
        let e = finalize_raw(h, 1).unwrap_err();
        assert_eq!(e.code, EINVAL);
        assert!(e.message.contains(needle) && e.message.contains("finalize_groth16_proof_c"), "{}", e.message);
        unsafe { ffi::destroy_pending_proof(h) }; // ignored, with a log line
    }
    // The foreign objects are untouched and still owned by us.
    assert_eq!(unsafe { *on_heap }, [7u8; 64]);
    drop(unsafe { Box::from_raw(on_heap) });
    assert!(on_stack.iter().all(|&w| w == 0));
    unsafe { ffi::destroy_gpu_mutex(lock) };
}

#[test]
#[ignore = "the body of a parent test, run in its child process"]
fn child_destroy_gpu_mutex_twice() {
    if !is_child() {
        return eprintln!("skipped: the body of a parent test, run only in its child process");
    }
    let mut rng = common::rng();
    let j = job(1, &mut rng);
    let h = unsafe { ffi::create_gpu_mutex() };
    assert!(!h.is_null());
    ffi::prove(&j.srs, &j.ws, &j.r, &j.s, h, 0).unwrap();
    unsafe { ffi::destroy_gpu_mutex(h) };
    unsafe { ffi::destroy_gpu_mutex(h) }; // a no-op with a log line
    // A call with the destroyed handle is EINVAL, not a use after free.
    let e = ffi::prove(&j.srs, &j.ws, &j.r, &j.s, h, 0).unwrap_err();
    assert_eq!(e.code, EINVAL);
    assert!(e.message.contains("gpu_mtx") && e.message.contains("stale"), "{}", e.message);
    // A new handle gets a new value and works.
    let h2 = unsafe { ffi::create_gpu_mutex() };
    assert_ne!(h2, h);
    ffi::prove(&j.srs, &j.ws, &j.r, &j.s, h2, 0).unwrap();
    unsafe { ffi::destroy_gpu_mutex(h2) };
    eprintln!("child child_destroy_gpu_mutex_twice: done");
}

#[test]
fn destroy_gpu_mutex_twice_is_a_no_op() {
    expect_child_passes("child_destroy_gpu_mutex_twice", Duration::from_secs(120));
}

#[test]
#[ignore = "the body of a parent test, run in its child process"]
fn child_destroy_gpu_mutex_on_foreign_objects() {
    if !is_child() {
        return eprintln!("skipped: the body of a parent test, run only in its child process");
    }
    let on_heap = Box::into_raw(Box::new([0xA5u8; 256]));
    let mut on_stack = [0x5Au8; 256];
    let pending_like = 0x5C2B_0000_0000_0001usize as *mut c_void;
    for h in [on_heap as *mut c_void, on_stack.as_mut_ptr() as *mut c_void, 0x10 as *mut c_void, pending_like] {
        unsafe { ffi::destroy_gpu_mutex(h) };
    }
    // Neither object was freed nor written: reading and freeing the heap
    // object again is fine (a freed one would abort here or under valgrind).
    assert_eq!(unsafe { *on_heap }, [0xA5u8; 256]);
    drop(unsafe { Box::from_raw(on_heap) });
    assert!(on_stack.iter().all(|&b| b == 0x5A));
    // Proving with a foreign object as gpu_mtx is EINVAL without reading it.
    let mut rng = common::rng();
    let j = job(1, &mut rng);
    for h in [on_stack.as_mut_ptr() as *mut c_void, 0x10 as *mut c_void] {
        let e = ffi::prove(&j.srs, &j.ws, &j.r, &j.s, h, 0).unwrap_err();
        assert_eq!(e.code, EINVAL);
        assert!(e.message.contains("not a live lock handle") && e.message.contains("never returned"), "{}", e.message);
    }
    eprintln!("child child_destroy_gpu_mutex_on_foreign_objects: done");
}

#[test]
fn destroy_gpu_mutex_on_foreign_objects_is_ignored() {
    expect_child_passes("child_destroy_gpu_mutex_on_foreign_objects", Duration::from_secs(120));
}

fn create_srs_err(path: &Path) -> AbiError {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut raw = RawSrs { ptr: std::ptr::null() };
    let e = ffi::check(unsafe { ffi::create_SRS(&mut raw, c.as_ptr(), false) }).unwrap_err();
    assert!(raw.ptr.is_null(), "ret untouched on error");
    e
}

#[test]
#[ignore = "the body of a parent test, run in its child process"]
fn child_create_srs_on_a_fifo() {
    if !is_child() {
        return eprintln!("skipped: the body of a parent test, run only in its child process");
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("handle-misuse");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join(format!("fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = create_srs_err(&fifo);
    std::fs::remove_file(&fifo).unwrap();
    assert_eq!(e.code, EINVAL);
    assert!(e.message.contains("not a regular file") && e.message.contains("FIFO"), "{}", e.message);
    eprintln!("child child_create_srs_on_a_fifo: done");
}

#[test]
fn create_srs_on_a_fifo_without_a_writer_does_not_block() {
    expect_child_passes("child_create_srs_on_a_fifo", Duration::from_secs(30));
}

#[test]
fn create_srs_on_a_proc_file_says_it_is_not_a_params_file() {
    let e = create_srs_err(Path::new("/proc/self/status"));
    assert_eq!(e.code, EINVAL);
    assert!(e.message.contains("size of 0 bytes but has contents") && e.message.contains("not a params file"), "{}", e.message);
    assert!(!e.message.contains("is empty"), "{}", e.message);
}

#[test]
#[ignore = "the body of a parent test, run in its child process"]
fn child_huge_num_circuits() {
    if !is_child() {
        return eprintln!("skipped: the body of a parent test, run only in its child process");
    }
    let mut rng = common::rng();
    let j = job(3, &mut rng);
    let provers: Vec<CAssignment> = j.ws.iter().map(|w| w.assignment()).collect();
    let mut proofs = vec![groth16_proof::default(); 3];
    for n in [1usize << 40, 1 << 50] {
        let e = ffi::check(unsafe {
            ffi::generate_groth16_proofs_c(
                provers.as_ptr(),
                n,
                j.r.as_ptr() as *const fr_t,
                j.s.as_ptr() as *const fr_t,
                proofs.as_mut_ptr(),
                j.srs.raw(),
                std::ptr::null_mut(),
                -1,
            )
        })
        .unwrap_err();
        assert!(e.code == libc::ENOMEM || e.code == EINVAL, "{}", e.message);
        assert!(e.message.contains("num_circuits") || e.message.contains("provers"), "{}", e.message);
        let e = start_claiming(&j, n).unwrap_err();
        assert!(e.code == libc::ENOMEM || e.code == EINVAL, "{}", e.message);
    }
    assert!(proofs.iter().all(|p| *p == groth16_proof::default()));
    eprintln!("child child_huge_num_circuits: done");
}

#[test]
fn a_huge_num_circuits_is_an_error_not_an_abort() {
    expect_child_passes("child_huge_num_circuits", Duration::from_secs(120));
}

/// Pointers to an `SRS` and to `pending_out` that are not 8-byte aligned are
/// refused (`EINVAL`) or, for the `void` functions, ignored; nothing is
/// read or written through them.
#[test]
fn misaligned_srs_and_pending_out_pointers_are_refused() {
    let mut rng = common::rng();
    let j = job(1, &mut rng);
    let want = one_shot(&j);
    // The handle's 8 bytes copied to an address that is 4 past an 8-byte boundary.
    let mut words = [0u64; 3];
    let base = words.as_mut_ptr() as *mut u8;
    let odd = unsafe { base.add(4) };
    unsafe { std::ptr::copy_nonoverlapping(j.srs.raw() as *const u8, odd, 8) };
    let odd_srs = odd as *const ffi::RawSrs;
    let provers: Vec<CAssignment> = j.ws.iter().map(|w| w.assignment()).collect();
    let mut proofs = vec![groth16_proof::default(); 1];
    let e = ffi::check(unsafe {
        ffi::generate_groth16_proofs_c(
            provers.as_ptr(),
            1,
            j.r.as_ptr() as *const fr_t,
            j.s.as_ptr() as *const fr_t,
            proofs.as_mut_ptr(),
            odd_srs,
            std::ptr::null_mut(),
            -1,
        )
    })
    .unwrap_err();
    assert_eq!(e.code, libc::EINVAL, "{e:?}");
    assert!(e.message.contains("srs") && e.message.contains("not aligned"), "{}", e.message);
    let copy = unsafe { ffi::clone_SRS(odd_srs) };
    assert!(copy.ptr.is_null(), "clone_SRS of a misaligned pointer returns an empty handle");
    unsafe { ffi::drop_SRS(odd_srs as *mut ffi::RawSrs) }; // ignored, with a log line
    // A pending_out 4 bytes past an 8-byte boundary.
    let e = start_call(&j, 1, j.srs.raw(), odd as *mut *mut c_void).unwrap_err();
    assert_eq!(e.code, libc::EINVAL, "{e:?}");
    assert!(e.message.contains("pending_out") && e.message.contains("not aligned"), "{}", e.message);
    // The key still holds its references: the same job proves the same bytes.
    let again = one_shot(&j);
    assert_eq!(proof_bytes(&again[0]), proof_bytes(&want[0]));
}

fn proof_bytes(p: &groth16_proof) -> Vec<u8> {
    unsafe { std::slice::from_raw_parts(p as *const _ as *const u8, std::mem::size_of::<groth16_proof>()) }.to_vec()
}
