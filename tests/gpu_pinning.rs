//! Page-locking of callers' a/b/c buffers on the GPU (docs/ARCHITECTURE.md
//! §5): buffers the caller page-locked itself (its own `cuMemHostRegister`,
//! or `cuMemHostAlloc` as Curio's cuzk pool does), one buffer passed by
//! several circuits of a call, and two concurrent calls over the same
//! buffers. Each gives the CPU backend's proof bytes, copies from
//! page-locked memory (the call reports no pinning failure and pre-stages),
//! leaves none of the library's registrations behind, and leaves the
//! caller's own in place. Ignored in a build without kernels; skipped (with
//! the reason) without a usable GPU.

mod common;

use std::ffi::c_void;

use blstrs::Scalar;
use cudarc::driver::sys;
use supraseal_c2::gpu::GpuBackendHandle;
use supraseal_c2::CallReport;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

fn prove(srs: &Params, ws: &[&Witness], r: &[Scalar], s: &[Scalar]) -> Vec<Vec<u8>> {
    ffi::prove_refs(srs, ws, r, s, std::ptr::null_mut(), 0).unwrap_or_else(|e| panic!("{e}")).iter().map(common::bytes).collect()
}

/// The reports of the calls made by `f`, which must all have been wholly
/// page-locked (or copied through the staging ring) and pre-staged; the
/// first circuit's copies went through the ring exactly when `ring` (its
/// phase-1 detail names a "ring copy").
fn pinned_calls(what: &str, ring: bool, f: impl FnOnce()) {
    supraseal_c2::record_reports(true);
    f();
    let reports: Vec<CallReport> = supraseal_c2::take_reports();
    supraseal_c2::record_reports(false);
    assert!(!reports.is_empty(), "{what}: no call reported");
    for r in &reports {
        assert_eq!(r.backend.as_str(), "gpu", "{what}");
        assert_eq!(r.reason, None, "{what}: the first circuit's buffers were not used page-locked");
        assert_eq!(r.prestaged, Some(true), "{what}: the call did not pre-stage ({:?})", r.reason);
        let detail = r.stage_detail.as_deref().unwrap_or("");
        assert_eq!(detail.contains("ring copy"), ring, "{what}: phase 1 was {detail:?}");
    }
    #[cfg(supraseal_gpu)]
    assert_eq!(supraseal_c2::gpu::pins::registered_ranges(), 0, "{what}: the library left a registration behind");
}

/// Page-locked host copies of a witness's a, b, c (`cuMemHostAlloc`),
/// freed on drop.
struct HostAlloc(Vec<(*mut c_void, usize)>);

impl HostAlloc {
    fn copy_of(w: &Witness) -> (HostAlloc, supraseal_c2::CAssignment) {
        let mut a = w.assignment();
        let mut bufs = Vec::new();
        let mut copy = |v: &Vec<Scalar>| -> *const supraseal_c2::fr_t {
            let bytes = std::mem::size_of_val(v.as_slice());
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: allocates `bytes` page-locked bytes; copied into below, freed on drop.
            let r = unsafe { sys::cuMemHostAlloc(&mut p, bytes, sys::CU_MEMHOSTALLOC_PORTABLE) };
            assert_eq!(r, sys::cudaError_enum::CUDA_SUCCESS, "cuMemHostAlloc");
            // SAFETY: both ranges are `bytes` long and do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr() as *const u8, p as *mut u8, bytes) };
            bufs.push((p, bytes));
            p as *const supraseal_c2::fr_t
        };
        a.a = copy(&w.a);
        a.b = copy(&w.b);
        a.c = copy(&w.c);
        (HostAlloc(bufs), a)
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        for &(p, _) in &self.0 {
            // SAFETY: from cuMemHostAlloc above, freed once.
            unsafe { sys::cuMemFreeHost(p) };
        }
    }
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn gpu_caller_pinned_shared_and_concurrent_buffers_are_used_page_locked_and_prove_identically() {
    // Opened only to know there is a GPU: a handle alive counts as a call
    // in flight on the device.
    if let Err(why) = GpuBackendHandle::open(0) {
        eprintln!("skipped: {why}");
        return;
    }
    let (kind, k) = (Kind::Sha256, 15);
    let keys = common::keys(kind, k);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let distinct = kit::witnesses(kind, k, 2, &mut rng).unwrap();
    // Circuits 0 and 2 pass the same buffers.
    let ws: Vec<&Witness> = [0usize, 1, 0].iter().map(|&i| &distinct[i].0).collect();
    let n = ws.len();
    let (r, s) = (common::random_scalars(&mut rng, n), common::random_scalars(&mut rng, n));

    std::env::set_var("SUPRASEAL_C2_BACKEND", "cpu");
    let want: Vec<Vec<u8>> = (0..n).map(|ci| prove(&srs, &[ws[ci]], &r[ci..=ci], &s[ci..=ci]).remove(0)).collect();
    std::env::set_var("SUPRASEAL_C2_BACKEND", "gpu");

    for mode in ["ring", "register"] {
        std::env::set_var("SUPRASEAL_C2_HOST_STAGING", mode);
        let ring = mode == "ring";
        eprintln!("SUPRASEAL_C2_HOST_STAGING={mode}");
        calls_over_shared_and_caller_pinned_buffers(&srs, &distinct, &ws, &r, &s, &want, ring);
    }
    std::env::remove_var("SUPRASEAL_C2_HOST_STAGING");
    std::env::remove_var("SUPRASEAL_C2_BACKEND");
}

/// One buffer in two circuits of a call (pageable: through the ring when
/// `ring`), buffers the caller registered or allocated page-locked (never
/// through the ring), and two concurrent calls over the same buffers.
fn calls_over_shared_and_caller_pinned_buffers(
    srs: &Params,
    distinct: &[(Witness, Vec<Scalar>)],
    ws: &[&Witness],
    r: &[Scalar],
    s: &[Scalar],
    want: &[Vec<u8>],
    ring: bool,
) {
    let n = ws.len();
    // One buffer in two circuits of a call.
    pinned_calls("shared buffers", ring, || assert_eq!(prove(srs, ws, r, s), want, "shared buffers: GPU vs CPU"));

    // The caller registered witness 0's a, b, c itself.
    let ctx = cudarc::driver::CudaContext::new(0).unwrap();
    ctx.bind_to_thread().unwrap();
    let w0 = &distinct[0].0;
    let ranges: Vec<(*mut c_void, usize)> = [&w0.a, &w0.b, &w0.c].iter().map(|v| (v.as_ptr() as *mut c_void, std::mem::size_of_val(v.as_slice()))).collect();
    for &(p, bytes) in &ranges {
        // SAFETY: the witness outlives the registration, undone below.
        assert_eq!(unsafe { sys::cuMemHostRegister_v2(p, bytes, sys::CU_MEMHOSTREGISTER_PORTABLE) }, sys::cudaError_enum::CUDA_SUCCESS);
    }
    pinned_calls("caller-registered buffers", false, || assert_eq!(prove(srs, ws, r, s), want, "caller-registered: GPU vs CPU"));
    ctx.bind_to_thread().unwrap();
    for &(p, _) in &ranges {
        // SAFETY: registered above; the library must have left it registered.
        assert_eq!(unsafe { sys::cuMemHostUnregister(p) }, sys::cudaError_enum::CUDA_SUCCESS, "the caller's registration was undone by the library");
    }

    // Buffers from the caller's cuMemHostAlloc (circuit 0 and 2 share them).
    let (_host, pinned0) = HostAlloc::copy_of(w0);
    let provers = [pinned0, distinct[1].0.assignment(), pinned0];
    pinned_calls("cuMemHostAlloc buffers", false, || {
        let mut proofs = vec![supraseal_c2::groth16_proof::default(); n];
        // SAFETY: every array holds n elements; the buffers outlive the call.
        let e = unsafe {
            ffi::generate_groth16_proofs_c(provers.as_ptr(), n, r.as_ptr() as _, s.as_ptr() as _, proofs.as_mut_ptr(), srs.raw(), std::ptr::null_mut(), 0)
        };
        ffi::check(e).unwrap();
        assert_eq!(proofs.iter().map(common::bytes).collect::<Vec<_>>(), want, "cuMemHostAlloc: GPU vs CPU");
    });

    // Two concurrent calls over the same buffers, each with its own lock handle.
    pinned_calls("two concurrent calls", ring, || {
        std::thread::scope(|scope| {
            let calls: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        let h = common::Handle(unsafe { ffi::create_gpu_mutex() });
                        let h = &h;
                        let got: Vec<Vec<u8>> =
                            ffi::prove_refs(srs, ws, r, s, h.0, 0).unwrap_or_else(|e| panic!("{e}")).iter().map(common::bytes).collect();
                        unsafe { ffi::destroy_gpu_mutex(h.0) };
                        got
                    })
                })
                .collect();
            for c in calls {
                assert_eq!(c.join().unwrap(), want, "concurrent calls: GPU vs CPU");
            }
        })
    });
}
