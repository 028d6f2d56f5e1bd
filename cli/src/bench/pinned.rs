//! `bench --caller-pinned`: page-locks the witnesses' a/b/c through the CUDA
//! driver before the timed rows, as a caller with a pinned buffer pool
//! (Curio's cuzk) hands them over. Either library then finds them already
//! page-locked: ours uses them as they are (no registration of its own),
//! upstream copies from them at pinned speed.

use std::ffi::{c_int, c_uint, c_void};

use anyhow::{bail, Context, Result};
use libloading::Library;

type CuResult = c_int;
/// `CU_MEMHOSTREGISTER_PORTABLE`: pinned for every context.
const PORTABLE: c_uint = 1;
/// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
const ALREADY_REGISTERED: CuResult = 712;
const PAGE: usize = 4096;

/// The registrations, undone on drop (after the timed rows, before the
/// witnesses are freed).
pub(super) struct CallerPins {
    unregister: unsafe extern "C" fn(*mut c_void) -> CuResult,
    ranges: Vec<usize>,
    bytes: usize,
    /// Keeps the driver's functions above loaded.
    _lib: Library,
}

impl CallerPins {
    /// Registers the ranges (pointer, bytes), each widened to whole pages and
    /// overlapping ones merged (small vectors may share a page). Errors: no
    /// libcuda, no device 0, or the driver's refusal (code named); what was
    /// registered before a refusal is let go of.
    pub(super) fn register(ranges: &[(*const c_void, usize)]) -> Result<CallerPins> {
        let mut pages: Vec<(usize, usize)> = ranges
            .iter()
            .filter(|r| r.1 > 0)
            .map(|&(p, b)| (p as usize / PAGE * PAGE, (p as usize + b).div_ceil(PAGE) * PAGE))
            .collect();
        pages.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (start, end) in pages {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        // SAFETY: the driver library's documented entry points with their C
        // signatures; the function pointers are used only while `_lib`
        // (stored beside them) keeps the library loaded.
        unsafe {
            let lib = Library::new("libcuda.so.1").context("--caller-pinned: loading libcuda.so.1")?;
            let init = *lib.get::<unsafe extern "C" fn(c_uint) -> CuResult>(b"cuInit")?;
            let device_get = *lib.get::<unsafe extern "C" fn(*mut c_int, c_int) -> CuResult>(b"cuDeviceGet")?;
            let retain = *lib.get::<unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult>(b"cuDevicePrimaryCtxRetain")?;
            let set_current = *lib.get::<unsafe extern "C" fn(*mut c_void) -> CuResult>(b"cuCtxSetCurrent")?;
            let register = *lib.get::<unsafe extern "C" fn(*mut c_void, usize, c_uint) -> CuResult>(b"cuMemHostRegister_v2")?;
            let unregister = *lib.get::<unsafe extern "C" fn(*mut c_void) -> CuResult>(b"cuMemHostUnregister")?;
            let check = |what: &str, r: CuResult| if r == 0 { Ok(()) } else { bail!("--caller-pinned: {what} returned CUDA error {r}") };
            check("cuInit", init(0))?;
            let mut dev = 0;
            check("cuDeviceGet(0)", device_get(&mut dev, 0))?;
            // The primary context (the one the libraries use) stays retained
            // for the process: the bench ends with it.
            let mut ctx = std::ptr::null_mut();
            check("cuDevicePrimaryCtxRetain", retain(&mut ctx, dev))?;
            check("cuCtxSetCurrent", set_current(ctx))?;
            let mut pins = CallerPins { unregister, ranges: Vec::new(), bytes: 0, _lib: lib };
            for (start, end) in merged {
                match register(start as *mut c_void, end - start, PORTABLE) {
                    0 => {
                        pins.ranges.push(start);
                        pins.bytes += end - start;
                    }
                    // Someone page-locked it already: it is pinned, as asked.
                    ALREADY_REGISTERED => {}
                    // Dropping `pins` lets go of what was registered so far.
                    r => check(&format!("cuMemHostRegister of {} B", end - start), r)?,
                }
            }
            Ok(pins)
        }
    }

    /// Bytes page-locked here.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for CallerPins {
    fn drop(&mut self) {
        for &start in &self.ranges {
            // SAFETY: registered above, unregistered once.
            let r = unsafe { (self.unregister)(start as *mut c_void) };
            if r != 0 {
                eprintln!("--caller-pinned: cuMemHostUnregister returned CUDA error {r}");
            }
        }
    }
}
