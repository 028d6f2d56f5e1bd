//! The params loader's use of the GPU: bucket sums for the batched subgroup
//! check ([`super::subgroup`]) on GPU 0, given way to proving calls.

#[cfg(supraseal_gpu)]
use blstrs::{G1Affine, G2Affine};

#[cfg(supraseal_gpu)]
use super::{device, exec, msm, subgroup};
use crate::error::Result;
pub use crate::srs::BucketSums;

/// GPU 0 for the params loader's subgroup check: `Ok(None)` when this build
/// has no kernels or no device is usable. Errors: a CUDA error number when
/// the device cannot be opened, `EINVAL` for a malformed switch
/// (`SUPRASEAL_C2_VRAM_LIMIT_MB`, `SUPRASEAL_C2_FAULT_ALLOC`).
pub fn subgroup_device() -> Result<Option<Box<dyn BucketSums>>> {
    #[cfg(supraseal_gpu)]
    {
        subgroup_device_with_chunk(subgroup::MAX_CHUNK)
    }
    #[cfg(not(supraseal_gpu))]
    {
        Ok(None)
    }
}

/// [`subgroup_device`] with vectors sent in chunks of at most `max_chunk`
/// points (tests of the chunking).
#[doc(hidden)]
pub fn subgroup_device_with_chunk(max_chunk: usize) -> Result<Option<Box<dyn BucketSums>>> {
    #[cfg(supraseal_gpu)]
    {
        if device::device_count() == 0 {
            return Ok(None);
        }
        let settings = crate::config::Settings::from_env()?;
        let exec = exec::Exec::for_load(device::device(0)?, settings)?;
        // Proving calls run on the CPU with SUPRASEAL_C2_BACKEND=cpu: page-locking the key would only cost.
        let pin_key = !matches!(crate::config::backend_switch(), Ok(crate::config::BackendChoice::Cpu));
        Ok(Some(Box::new(LoadDevice { exec, max_chunk, pin_key })))
    }
    #[cfg(not(supraseal_gpu))]
    {
        let _ = max_chunk;
        Ok(None)
    }
}

/// One stream on GPU 0, for params loads (allocations counted as `N@load`).
#[cfg(supraseal_gpu)]
struct LoadDevice {
    exec: exec::Exec,
    max_chunk: usize,
    /// Page-lock the key's vectors as they are checked (proving calls will use a GPU).
    pin_key: bool,
}

#[cfg(supraseal_gpu)]
impl LoadDevice {
    /// Runs one vector's check, unless proving calls are in flight on the
    /// device: the load takes neither lock, so it leaves a busy device to
    /// them (`EBUSY`: the vector is checked on the CPU). Afterwards it waits
    /// for its buffers' frees and, if the device is still idle, returns the
    /// pool's memory to it.
    fn run<T>(&self, f: impl FnOnce(&exec::Exec) -> Result<T>) -> Result<T> {
        use std::sync::atomic::Ordering::SeqCst;
        let gpu = &self.exec.gpu;
        if gpu.active.load(SeqCst) != 0 {
            return Err(crate::error::Error::new(
                libc::EBUSY,
                format!("GPU {} has proving calls in flight: the params check leaves it to them", gpu.ordinal),
            ));
        }
        // The uploads from pinned vectors are asynchronous: the stream is
        // synchronized before the vector goes back, also when `f` panics.
        struct Synchronize<'a>(&'a exec::Exec);
        impl Drop for Synchronize<'_> {
            fn drop(&mut self) {
                let _ = self.0.stream.synchronize();
            }
        }
        let out = {
            let _sync = Synchronize(&self.exec);
            f(&self.exec)
        };
        if gpu.active.load(SeqCst) == 0 {
            let _ = gpu.memory.trim_pool();
        }
        out
    }
}

#[cfg(supraseal_gpu)]
impl BucketSums for LoadDevice {
    fn name(&self) -> String {
        format!("GPU {}", self.exec.gpu.ordinal)
    }
    fn g1(&self, points: &[G1Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<blstrs::G1Projective>> {
        self.run(|exec| subgroup::bucket_sums::<msm::G1>(exec, points, key, first_stream, groups, buckets, self.max_chunk))
    }
    fn g2(&self, points: &[G2Affine], key: &[u32; 8], first_stream: u64, groups: usize, buckets: u32) -> Result<Vec<blstrs::G2Projective>> {
        self.run(|exec| subgroup::bucket_sums::<msm::G2>(exec, points, key, first_stream, groups, buckets, self.max_chunk))
    }
    unsafe fn pin(&self, ptr: *const u8, bytes: usize) -> Option<crate::srs::Pin> {
        // Registering gigabytes stalls the allocations of calls in flight
        // (`RegistrationGate`): with calls on the device, the first call
        // of this key pins it instead, as without the load's pinning.
        if !self.pin_key || self.exec.gpu.active.load(std::sync::atomic::Ordering::SeqCst) != 0 {
            return None;
        }
        // SAFETY: the caller's contract (live memory that outlives the value).
        match unsafe { self.exec.gpu.register_host(ptr as *const std::ffi::c_void, bytes, device::Registration::Key) } {
            Ok(r) => Some(Box::new(r)),
            Err(error) => {
                tracing::warn!(target: "supraseal_c2::srs", bytes, ?error, "key vector not pinned during the load: the first GPU call pins the key");
                None
            }
        }
    }
}

