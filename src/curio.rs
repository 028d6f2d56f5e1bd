//! What Curio's fork of supraseal-c2 (the cuzk engine's `extern/supraseal-c2`)
//! takes from its host program besides its arguments, honoured with the
//! `curio-fork` feature and inert without it:
//!
//! - **`set_membw_throttle(int)`**, a C function the host defines (cuzk
//!   defines it in `cuzk-pce` to make its synthesis threads yield). The fork
//!   calls `set_membw_throttle(1)` just before its CPU-side G2 MSM of B′ and
//!   `set_membw_throttle(0)` just after it, once per proving call; its
//!   reference is a plain undefined symbol, so a program that does not define
//!   the function fails to link. Here the reference is weak ([`host_throttle`]):
//!   it binds to the host's definition wherever the fork's would (the
//!   definition linked into the program, or exported by it to the shared
//!   library), and is NULL otherwise, so such a program links and no call is
//!   made. [`cpu_g2_work`] makes the calls.
//! - **`CUZK_GPU_THREADS`**, the size of the fork's CPU thread pool for its
//!   split-MSM preparation and G2 MSMs, read once when the pool is first used
//!   (unset, empty or 0: every CPU). That pool is this library's CPU pool
//!   (`crate::threads`), which runs the same work; [`gpu_threads`] gives
//!   its size.

use std::ffi::c_int;

/// The host's `void set_membw_throttle(int)`.
pub type MembwThrottle = unsafe extern "C" fn(c_int);

// A weak reference to `set_membw_throttle` (stable Rust has no weak
// `extern`): an 8-byte word holding its address, which the static linker
// or the dynamic loader fills in where the program defines the function (a
// definition in the executable is exported to this library, when it is a
// shared library, because the library references it) and leaves 0 where
// it does not. The word is hidden, so a shared library exports nothing new.
// `.weakref` (an alias that references weakly) rather than `.weak` on the
// name itself: under fat LTO the host's definition can land in the same
// assembly unit, where `.weak` on a global definition is an error.
#[cfg(all(feature = "curio-fork", target_os = "linux"))]
std::arch::global_asm!(
    ".weakref supraseal_c2_weak_membw_throttle, set_membw_throttle",
    ".pushsection .data.rel.ro.supraseal_c2_host_membw_throttle,\"aw\"",
    ".p2align 3",
    ".globl supraseal_c2_host_membw_throttle",
    ".hidden supraseal_c2_host_membw_throttle",
    "supraseal_c2_host_membw_throttle:",
    ".quad supraseal_c2_weak_membw_throttle",
    ".popsection",
);

#[cfg(all(feature = "curio-fork", target_os = "linux"))]
extern "C" {
    /// NULL (None) unless the program defines `set_membw_throttle`.
    static supraseal_c2_host_membw_throttle: Option<MembwThrottle>;
}

/// The host program's `set_membw_throttle`, or `None` where it defines none
/// (and always without the `curio-fork` feature, or off Linux).
pub fn host_throttle() -> Option<MembwThrottle> {
    #[cfg(all(feature = "curio-fork", target_os = "linux"))]
    {
        // SAFETY: the word is written only by the linker/loader, before any
        // Rust code runs; `Option<fn>` has the layout of a nullable pointer.
        unsafe { supraseal_c2_host_membw_throttle }
    }
    #[cfg(not(all(feature = "curio-fork", target_os = "linux")))]
    {
        None
    }
}

/// How many CPU-side G2 steps run now, across all calls; the host is told
/// on the edges (0 → 1: `set_membw_throttle(1)`, 1 → 0: `(0)`). The lock is
/// held across the host call so that the calls arrive in the order of the
/// edges.
static CPU_G2_RUNNING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

/// Marks the CPU-side G2 work of one call; dropping it ends the mark.
#[must_use = "the mark ends when the guard is dropped"]
pub struct CpuG2Work(Option<MembwThrottle>);

/// Starts the CPU-side G2 work of a call (the G2 MSMs of B′ on the CPU
/// thread, which is where the fork calls `set_membw_throttle(1)`): where the
/// host defines `set_membw_throttle` (with `curio-fork`), calls it with 1,
/// and with 0 when the returned guard is dropped. When the G2 steps of
/// several calls (or of the device groups of one call) overlap, 1 is passed
/// as the first starts and 0 as the last ends, so the flag stays set while
/// any of them runs; a call alone gives exactly the fork's `1` then `0`.
/// The host function must return promptly and must not call into this library.
pub fn cpu_g2_work() -> CpuG2Work {
    let host = host_throttle();
    if let Some(f) = host {
        let mut running = CPU_G2_RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        *running += 1;
        if *running == 1 {
            // SAFETY: the host's `void set_membw_throttle(int)`.
            unsafe { f(1) };
        }
    }
    CpuG2Work(host)
}

impl Drop for CpuG2Work {
    fn drop(&mut self) {
        if let Some(f) = self.0 {
            let mut running = CPU_G2_RUNNING.lock().unwrap_or_else(|e| e.into_inner());
            *running -= 1;
            if *running == 0 {
                // SAFETY: as in `cpu_g2_work`.
                unsafe { f(0) };
            }
        }
    }
}

/// `CUZK_GPU_THREADS` with `curio-fork`: the thread count it asks of the
/// CPU pool, or `None` (unset, empty, 0, or not a number: the pool's
/// default, every CPU, as the fork does for all of these). Read once, when
/// the pool is built (the first proving call).
pub fn gpu_threads() -> Option<usize> {
    if !cfg!(feature = "curio-fork") {
        return None;
    }
    let v = std::env::var("CUZK_GPU_THREADS").ok()?;
    match v.trim().parse::<usize>() {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(_) if v.trim().is_empty() => None,
        Err(_) => {
            tracing::warn!(CUZK_GPU_THREADS = %v, "CUZK_GPU_THREADS is not a thread count: the CPU pool uses every CPU");
            None
        }
    }
}
