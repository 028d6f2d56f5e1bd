//! The GPU backend: CUDA kernels (cuda/) loaded at run time through cudarc
//! with dynamic loading, so the same library runs on machines without a GPU.
//!
//! Layers (after cudarc's sys → result → safe): [`device`] is the only
//! module that makes raw driver calls; it owns the context, the memory pools
//! and the kernel module ([`kernels`] names each kernel once), wraps host
//! registrations in [`device::HostRegistration`] and converts driver errors;
//! [`exec`] is one call's stream on it; [`ntt`] and [`msm`] drive the
//! kernels; [`pins`] page-locks callers' buffers once per range for the
//! process; [`call::GpuCall`] owns one proving call on a device from pin to
//! unpin and implements the pipeline's [`crate::backend::Backend`] (its
//! compute stream, [`exec::Exec`], is the GPU's [`crate::backend::Compute`]),
//! with phases 0, 1 and 3 of docs/ARCHITECTURE.md §5 in [`stage`]. The NTTs,
//! the G1 MSMs and the batch additions (G1 and G2) run on the device; the G2
//! MSMs of B′ stay on CPU threads, as in the reference, unless
//! `SUPRASEAL_C2_G2_MSM=gpu` moves them to the device.

#[cfg(supraseal_gpu)]
pub mod batch_add;
#[cfg(supraseal_gpu)]
pub mod call;
#[cfg(supraseal_gpu)]
pub mod device;
#[cfg(supraseal_gpu)]
pub mod exec;
#[cfg(supraseal_gpu)]
pub mod faults;
#[cfg(supraseal_gpu)]
pub mod group;
#[cfg(feature = "tools")]
mod harness;
#[cfg(all(test, supraseal_gpu))]
mod host_checks;
#[cfg(supraseal_gpu)]
pub mod kernels;
mod load;
#[cfg(supraseal_gpu)]
pub mod memory;
#[cfg(supraseal_gpu)]
pub mod msm;
#[cfg(supraseal_gpu)]
pub mod ntt;
#[cfg(supraseal_gpu)]
pub mod pins;
pub mod resident;
#[cfg(supraseal_gpu)]
pub mod scalar_buf;
#[cfg(supraseal_gpu)]
pub mod stage;
#[cfg(supraseal_gpu)]
pub mod staging;
#[cfg(supraseal_gpu)]
pub mod subgroup;
pub mod tuning;
pub mod words;
#[cfg(supraseal_gpu)]
pub mod workspace;

#[cfg(supraseal_gpu)]
pub use call::GpuCall;
#[cfg(feature = "tools")]
pub use harness::{pool_state, GpuBackendHandle, PoolState};
pub use load::subgroup_device;
#[cfg(any(test, feature = "tools"))]
pub use load::{subgroup_device_with_chunk, BucketSums};
pub use tuning::MsmProfile;
#[cfg(any(test, feature = "tools"))]
pub use tuning::{MsmTuning, NttTuning};
#[cfg(any(test, feature = "tools"))]
pub use words::{from_limbs, limbs, Limbs};



/// Whether this build carries GPU kernels.
pub const BUILT_WITH_KERNELS: bool = cfg!(supraseal_gpu);

/// Why a build without kernels has no GPU backend.
#[cfg(any(not(supraseal_gpu), test, feature = "tools"))]
pub const NO_KERNELS: &str = "this build has no GPU kernels (built without nvcc: none found, or NVCC=off)";

/// Number of usable CUDA devices (0 without kernels, libcuda or devices).
pub fn device_count() -> usize {
    #[cfg(supraseal_gpu)]
    {
        device::device_count()
    }
    #[cfg(not(supraseal_gpu))]
    {
        0
    }
}

/// Why this build cannot prove on a GPU here, or `None` when a device is
/// usable: no kernels ([`NO_KERNELS`]), no libcuda, a driver error, or no device.
pub fn unusable_reason() -> Option<String> {
    #[cfg(supraseal_gpu)]
    {
        device::unusable_reason()
    }
    #[cfg(not(supraseal_gpu))]
    {
        Some(NO_KERNELS.to_string())
    }
}

/// Restarts the device-allocation counts that `SUPRASEAL_C2_FAULT_ALLOC=N@phase`
/// refers to (tests); a no-op in a build without kernels.
#[cfg(feature = "tools")]
pub fn reset_fault_counters() {
    #[cfg(supraseal_gpu)]
    faults::reset_fault_counters();
}

