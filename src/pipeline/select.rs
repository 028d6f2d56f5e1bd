//! Which backend a call runs on (`SUPRASEAL_C2_BACKEND`), as a value the
//! pipeline dispatches on once per call.

use std::time::Duration;

use crate::assignment::Batch;
use crate::config::Settings;
use crate::cpu::CpuCall;
use crate::error::{Error, Result};
use crate::groth16::Intermediates;
use crate::locks::LockHandle;
use crate::srs::Srs;

/// The backend of one call.
pub enum Selected {
    Cpu(CpuCall),
    #[cfg(supraseal_gpu)]
    Gpu(Box<crate::gpu::GpuCall>),
}

impl Selected {
    /// Whether the call runs on a GPU (its `gpu_index` names a device).
    pub fn is_gpu(&self) -> bool {
        !matches!(self, Selected::Cpu(_))
    }

    /// Runs [`super::phases::prove`] on this backend with `handle`'s locks,
    /// then logs and keeps the call's report.
    pub(crate) fn prove(
        &self,
        key: &Srs,
        batch: &Batch<'_>,
        handle: &LockHandle,
        settings: Settings,
        device: usize,
        validated: Duration,
    ) -> Result<Vec<Intermediates>> {
        let (result, mut report) = match self {
            // The CPU backend computes under the compute lock with rayon (in
            // the library's pool). A rayon worker that waits for another
            // pool runs its own pool's jobs meanwhile, and such a job may be
            // another proving call, which would then wait for the compute
            // lock held further up its own thread's stack. So a caller
            // inside a rayon pool proves on a plain thread, waited for with
            // an OS join.
            Selected::Cpu(b) if rayon::current_thread_index().is_some() => {
                let caller = std::thread::current().id();
                // The caller's tracing context goes with the work.
                let (span, dispatch) = (tracing::Span::current(), tracing::dispatcher::get_default(|d| d.clone()));
                let run = || super::phases::prove(b, key, batch, &handle.locks, settings);
                let (result, mut report) = std::thread::scope(|scope| {
                    let spawned = std::thread::Builder::new()
                        .name("supraseal-c2-call".into())
                        .spawn_scoped(scope, || tracing::dispatcher::with_default(&dispatch, || span.in_scope(run)));
                    match spawned {
                        Ok(t) => t.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                        // No thread could be started: on the caller's.
                        Err(_) => run(),
                    }
                });
                report.thread = caller;
                (result, report)
            }
            Selected::Cpu(b) => super::phases::prove(b, key, batch, &handle.locks, settings),
            #[cfg(supraseal_gpu)]
            Selected::Gpu(b) => super::phases::prove(&**b, key, batch, &handle.locks, settings),
        };
        report.device = device;
        report.validate = validated;
        report.log();
        super::report::record(report);
        result
    }
}

/// Which backend a call uses, from `SUPRASEAL_C2_BACKEND` (`cpu`, `gpu`,
/// `auto`; default `auto`: the GPU when this build has kernels, libcuda loads
/// and a device exists, otherwise the CPU, with a warning once per process
/// in a build with kernels). Where it is unset, bellperson's `BELLMAN_NO_GPU`
/// selects `cpu` ([`crate::config::backend_switch`]). `device` is the GPU ordinal.
///
/// Errors: `ENODEV` for `gpu` when no GPU is usable (the message says why),
/// a CUDA error number when the device cannot be opened, `EINVAL` for an
/// unknown value.
pub fn select(device: usize, settings: Settings) -> Result<Selected> {
    use crate::config::BackendChoice;
    match crate::config::backend_switch()? {
        BackendChoice::Cpu => Ok(Selected::Cpu(CpuCall::default())),
        BackendChoice::Gpu => gpu(device, settings)
            .map_err(|e| {
                let message = format!("SUPRASEAL_C2_BACKEND=gpu but no GPU is usable: {}", e.message);
                e.with_message(message)
            }),
        BackendChoice::Auto => {
            let gpus = crate::gpu::device_count();
            if gpus > 0 && device >= gpus {
                // A wrong index on a GPU host must not quietly prove on the CPU.
                return Err(Error::no_device(format!("gpu_index {device} requested but {gpus} CUDA device(s) are usable")));
            }
            if gpus > device {
                gpu(device, settings)
            } else {
                if crate::gpu::BUILT_WITH_KERNELS {
                    warn_cpu_fallback();
                }
                Ok(Selected::Cpu(CpuCall::default()))
            }
        }
    }
}

/// Says once per process, at WARN, that a build with GPU kernels proves on
/// the CPU because no GPU is usable, and why: a host that installed a GPU
/// build expects GPU speed. A CPU chosen by a switch is not warned about.
fn warn_cpu_fallback() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        let why = crate::gpu::unusable_reason().unwrap_or_else(|| "no device was found when the call started".into());
        tracing::warn!(
            "this build has GPU kernels but no GPU is usable ({why}): proving on the CPU, far slower; \
             SUPRASEAL_C2_BACKEND=cpu (or BELLMAN_NO_GPU=1) chooses the CPU without this warning, \
             SUPRASEAL_C2_BACKEND=gpu makes a missing GPU an error (ENODEV)"
        );
    });
}

/// Opens the GPU backend on `ordinal` for one call, or explains why there is
/// none (`ENODEV`).
fn gpu(ordinal: usize, settings: Settings) -> Result<Selected> {
    #[cfg(supraseal_gpu)]
    {
        Ok(Selected::Gpu(Box::new(crate::gpu::GpuCall::new(ordinal, settings)?)))
    }
    #[cfg(not(supraseal_gpu))]
    {
        let _ = (ordinal, settings);
        Err(Error::no_device(crate::gpu::NO_KERNELS))
    }
}
