//! C entry points over the published supraseal-c2 0.1.2 crate, for the
//! same-run comparison in `supraseal-c2 bench --reference`. Each function
//! catches the crate's panics (it panics on any CUDA error) and returns a
//! code: 0 success, 1 error (the message is written to `err`, NUL-terminated
//! and cut to `err_len` bytes).
//!
//! Layouts are the crate's: `Assignment<[u64; 4]>` (17 machine words, the
//! same as supraseal-c2's C `Assignment`), scalars as 4 little-endian u64
//! limbs in Montgomery form, proofs as 384 bytes (G1 a, G2 b, G1 c).

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use supraseal_c2::{Assignment, SRS};

/// The crate's CUDA objects call blst's C functions (deserialisation, field
/// arithmetic); rustc links a static library only for crates the Rust code
/// uses, so this reference keeps libblst.a in the link of the cdylib.
#[used]
static KEEP_BLST: unsafe extern "C" fn(*mut blst::blst_p1_affine, *const u8) -> blst::BLST_ERROR = blst::blst_p1_deserialize;

type Fr = [u64; 4];
type Proof = [u64; 48];

fn report(err: *mut c_char, err_len: usize, msg: &str) -> i32 {
    if !err.is_null() && err_len > 0 {
        let n = msg.len().min(err_len - 1);
        // SAFETY: the caller gives a writable buffer of err_len bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), err as *mut u8, n);
            *err.add(n) = 0;
        }
    }
    1
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Loads a params file with `SRS::try_new(path, cache)`; `*out` receives an
/// owned handle for `upstream_prove` and `upstream_drop_srs`.
///
/// # Safety
/// `path` is a C string; `out` writable; `err` writable for `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn upstream_create_srs(path: *const c_char, cache: bool, out: *mut *mut c_void, err: *mut c_char, err_len: usize) -> i32 {
    let path = PathBuf::from(unsafe { CStr::from_ptr(path) }.to_string_lossy().into_owned());
    match catch_unwind(|| SRS::try_new(path, cache)) {
        Ok(Ok(srs)) => {
            unsafe { out.write(Box::into_raw(Box::new(srs)) as *mut c_void) };
            0
        }
        Ok(Err(e)) => {
            let code = e.code;
            report(err, err_len, &format!("SRS::try_new: code {code}: {}", String::from(e)))
        }
        Err(p) => report(err, err_len, &format!("SRS::try_new panicked: {}", panic_text(p))),
    }
}

/// Releases a handle from `upstream_create_srs`.
///
/// # Safety
/// `srs` came from `upstream_create_srs` and is released once.
#[no_mangle]
pub unsafe extern "C" fn upstream_drop_srs(srs: *mut c_void) {
    if !srs.is_null() {
        drop(unsafe { Box::from_raw(srs as *mut SRS) });
    }
}

/// Proves `n` circuits with `generate_groth16_proofs` (the crate serialises
/// every call on its own static mutex).
///
/// # Safety
/// Arrays of `n` elements; `srs` from `upstream_create_srs`; `err` writable.
#[no_mangle]
pub unsafe extern "C" fn upstream_prove(
    provers: *const c_void,
    n: usize,
    r_s: *const Fr,
    s_s: *const Fr,
    proofs: *mut Proof,
    srs: *const c_void,
    err: *mut c_char,
    err_len: usize,
) -> i32 {
    let run = AssertUnwindSafe(|| {
        // SAFETY: the caller's arrays hold n elements each.
        let (provers, r_s, s_s, proofs, srs) = unsafe {
            (
                std::slice::from_raw_parts(provers as *const Assignment<Fr>, n),
                std::slice::from_raw_parts(r_s, n),
                std::slice::from_raw_parts(s_s, n),
                std::slice::from_raw_parts_mut(proofs, n),
                &*(srs as *const SRS),
            )
        };
        supraseal_c2::generate_groth16_proofs(provers, r_s, s_s, proofs, srs)
    });
    match catch_unwind(run) {
        Ok(()) => 0,
        Err(p) => report(err, err_len, &format!("generate_groth16_proofs: {}", panic_text(p))),
    }
}
