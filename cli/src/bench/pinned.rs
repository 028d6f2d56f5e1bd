//! `bench --caller-pinned`: page-locks the witnesses' a/b/c through the CUDA
//! driver before the timed rows, as a caller with a pinned buffer pool
//! (Curio's cuzk) hands them over. Either library then finds them already
//! page-locked: ours uses them as they are (no registration of its own),
//! upstream copies from them at pinned speed.

use std::ffi::{c_int, c_uint, c_void};

use anyhow::{bail, Context, Result};
use libloading::{Library, Symbol};

/// The registrations, undone on drop (after the timed rows).
pub(super) struct CallerPins {
    lib: Library,
    ranges: Vec<(usize, usize)>,
}

type CuResult = c_int;
/// `CU_MEMHOSTREGISTER_PORTABLE`: pinned for every context.
const PORTABLE: c_uint = 1;

impl CallerPins {
    /// Registers each range (pointer, bytes) once; empty ranges are skipped.
    /// Errors: no libcuda, no device 0, or the driver's refusal (code named).
    pub(super) fn register(ranges: &[(*const c_void, usize)]) -> Result<CallerPins> {
        // SAFETY: the driver library's documented entry points, with their C signatures.
        // SAFETY: the driver library's documented entry points, with their
        // C signatures; the ranges are the caller's live buffers.
        unsafe {
            let lib = Library::new("libcuda.so.1").context("--caller-pinned: loading libcuda.so.1")?;
            let mut done = Vec::new();
            {
                let init: Symbol<unsafe extern "C" fn(c_uint) -> CuResult> = lib.get(b"cuInit")?;
                let device_get: Symbol<unsafe extern "C" fn(*mut c_int, c_int) -> CuResult> = lib.get(b"cuDeviceGet")?;
                let retain: Symbol<unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult> = lib.get(b"cuDevicePrimaryCtxRetain")?;
                let set_current: Symbol<unsafe extern "C" fn(*mut c_void) -> CuResult> = lib.get(b"cuCtxSetCurrent")?;
                let register: Symbol<unsafe extern "C" fn(*mut c_void, usize, c_uint) -> CuResult> = lib.get(b"cuMemHostRegister_v2")?;
                let check = |what: &str, r: CuResult| if r == 0 { Ok(()) } else { bail!("--caller-pinned: {what} returned CUDA error {r}") };
                check("cuInit", init(0))?;
                let mut dev = 0;
                check("cuDeviceGet(0)", device_get(&mut dev, 0))?;
                let mut ctx = std::ptr::null_mut();
                check("cuDevicePrimaryCtxRetain", retain(&mut ctx, dev))?;
                check("cuCtxSetCurrent", set_current(ctx))?;
                for &(ptr, bytes) in ranges.iter().filter(|r| r.1 > 0) {
                    check(&format!("cuMemHostRegister of {bytes} B"), register(ptr as *mut c_void, bytes, PORTABLE))?;
                    done.push((ptr as usize, bytes));
                }
            }
            Ok(CallerPins { lib, ranges: done })
        }
    }

    /// Bytes page-locked.
    pub(super) fn bytes(&self) -> usize {
        self.ranges.iter().map(|r| r.1).sum()
    }
}

impl Drop for CallerPins {
    fn drop(&mut self) {
        // SAFETY: each pointer was registered above and is unregistered once.
        unsafe {
            if let Ok(unregister) = self.lib.get::<unsafe extern "C" fn(*mut c_void) -> CuResult>(b"cuMemHostUnregister") {
                for &(ptr, _) in &self.ranges {
                    unregister(ptr as *mut c_void);
                }
            }
        }
    }
}
