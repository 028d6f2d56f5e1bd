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
//!   it binds to the host's definition where that definition is in the
//!   program anyway (an object file or Rust crate linked in, or a symbol the
//!   program exports to the shared library), and is NULL otherwise, so such a
//!   program links and no call is made. One case differs from the fork: a
//!   definition that sits alone in a member of a static archive (`.a`) is not
//!   pulled in by a weak reference, so there the function is not called; link
//!   that member explicitly (`-Wl,--whole-archive` or its object file). Rust
//!   hosts such as cuzk are not affected. [`cpu_g2_work`] makes the calls.
//! - **`CUZK_GPU_THREADS`**, the size of the fork's CPU thread pool for its
//!   split-MSM preparation and G2 MSMs, read once when the pool is first used
//!   (unset, empty, 0 or not a count: every CPU; capped at
//!   [`MAX_GPU_THREADS_PER_CPU`] per logical CPU). That pool is this library's CPU pool
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
    if cfg!(feature = "curio-fork") {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| match host {
            Some(_) => tracing::info!("curio-fork: the program's set_membw_throttle is called around the CPU G2 MSMs"),
            None => tracing::info!("curio-fork: the program defines no set_membw_throttle; none is called"),
        });
    }
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

/// The most CPU-pool threads `CUZK_GPU_THREADS` may ask for per CPU available to the process:
/// more only adds switching (a 2^9 proof took 0.1 s with 2 threads and 20 s
/// with 5,000 on a 2-core host).
pub const MAX_GPU_THREADS_PER_CPU: usize = 4;

/// `CUZK_GPU_THREADS` with `curio-fork`: the thread count it asks of the
/// CPU pool, at most [`MAX_GPU_THREADS_PER_CPU`] per CPU available to the
/// process (`std::thread::available_parallelism`: affinity and cgroup quota
/// counted), or `None`
/// (unset, empty, 0, or not a decimal count: the pool's default, every
/// CPU). The fork reads it with `atoi`, so its `8x` is 8 and its `-1` is
/// 2^32 − 1 threads; here both are refused with a warning. Read once, when
/// the pool is built (the first proving call).
pub fn gpu_threads() -> Option<usize> {
    if !cfg!(feature = "curio-fork") {
        return None;
    }
    let v = std::env::var("CUZK_GPU_THREADS").ok()?;
    parse_gpu_threads(&v, std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`gpu_threads`] from the variable's value `v` on a host of `cpus` logical CPUs.
fn parse_gpu_threads(v: &str, cpus: usize) -> Option<usize> {
    match v.trim().parse::<usize>() {
        Ok(0) => None,
        Ok(n) if n > MAX_GPU_THREADS_PER_CPU * cpus => {
            let capped = MAX_GPU_THREADS_PER_CPU * cpus;
            tracing::warn!(CUZK_GPU_THREADS = n, threads = capped, cpus, "CUZK_GPU_THREADS is far above this host's CPUs: the CPU pool is capped");
            Some(capped)
        }
        Ok(n) => {
            tracing::info!(threads = n, "curio-fork: CUZK_GPU_THREADS sizes the CPU pool");
            Some(n)
        }
        Err(_) if v.trim().is_empty() => None,
        Err(_) => {
            tracing::warn!(CUZK_GPU_THREADS = %v, "CUZK_GPU_THREADS is not a thread count: the CPU pool uses every CPU");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuzk_gpu_threads_is_a_count_capped_per_cpu() {
        assert_eq!(parse_gpu_threads("3", 16), Some(3));
        assert_eq!(parse_gpu_threads(" 8 ", 2), Some(8));
        assert_eq!(parse_gpu_threads("64", 16), Some(64), "4 per CPU is allowed");
        assert_eq!(parse_gpu_threads("65", 16), Some(64), "more is capped");
        assert_eq!(parse_gpu_threads("100000", 2), Some(8));
        for none in ["", "  ", "0", "-1", "8x", "abc", "99999999999999999999999"] {
            assert_eq!(parse_gpu_threads(none, 16), None, "{none:?}: the pool's default");
        }
    }
}
