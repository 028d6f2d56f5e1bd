//! One GPU as the backend sees it: [`Gpu`] is the device shared by every call
//! (a cudarc context and the kernel module loaded from the fatbin embedded at
//! build time); [`Exec`] is one call's compute stream on it, through which
//! every phase-2 allocation, copy and launch goes. Device buffers are cudarc
//! `CudaSlice`s, which free themselves on drop (every path, errors included),
//! so a call never leaves VRAM behind. cudarc's event tracking orders uses of
//! one buffer across streams (the upload stream's copies before the compute
//! stream's kernels, and both before the free).

use std::ffi::c_void;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;

use super::kernels::Kernel;
use crate::error::{Error, Result};
use crate::locks::RegistrationGate;

/// The kernels compiled by build.rs from cuda/kernels.cu.
pub(super) static FATBIN: &[u8] = include_bytes!(env!("SUPRASEAL_C2_FATBIN"));

/// Converts a driver error into our error: the CUDA error number as code and
/// the call that failed in the message.
pub fn cuda_err(call: &str) -> impl FnOnce(DriverError) -> Error + '_ {
    move |e: DriverError| Error::cuda(e.0 as i32, format!("CUDA error in {call}: {e:?}"))
}

/// `CUDA_ERROR_OUT_OF_MEMORY`, the code an exhausted (or limited, or
/// fault-injected) allocation returns.
pub const CUDA_ERROR_OUT_OF_MEMORY: i32 = 2;

/// A loaded device.
pub struct Gpu {
    pub ordinal: usize,
    pub ctx: Arc<CudaContext>,
    /// Kept so that the context stays in cudarc's multi-stream mode: the first
    /// `new_stream` synchronises the whole context, later ones do not, so
    /// per-call streams are made without any device-wide wait.
    _first_stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    /// The module's kernels, indexed by [`Kernel::index`].
    funcs: Vec<CudaFunction>,
    /// Proving calls in flight on this device (between backend creation and drop).
    pub active: AtomicUsize,
    /// The locks (the address of their `GpuLocks`) of the calls in flight
    /// that named them (`Backend::under_locks`). Where every call in
    /// flight names the same, their phase 2s run one at a time.
    pub call_locks: std::sync::Mutex<Vec<usize>>,
    /// Calls in flight that have not finished phase 1 yet (the pre-stages
    /// the pool should be ready for, see `GpuCall::grow_stage_pool`).
    pub awaiting_stage: AtomicUsize,
    /// Moves whenever a call gives device memory back that an admission
    /// could use: its quotient consumed its inputs (c freed, b before the
    /// H-MSM), its phase 2 ended (`Backend::memory_events`).
    pub memory_events: std::sync::atomic::AtomicU64,
    /// Moves at the end of each call's phase 2 (also counted in `memory_events`).
    pub phase2_ends: std::sync::atomic::AtomicU64,
    /// Held exclusively around each `cuMemHostRegister`/`Unregister` of a
    /// call's a/b/c (phases 0 and 3) and shared by phase 1 from before the
    /// memory lock until after it: those driver calls hold a driver-wide lock
    /// for tens of ms (512 MiB at 2^24), and a phase-1 allocation made
    /// meanwhile waited for it inside the memory lock (40–50 ms holds on the
    /// H200); with the gate, that wait happens before the lock.
    pub host_registration: RegistrationGate,
    /// The device's pools, idle pre-stage list and resident key.
    pub memory: super::memory::DeviceMemory,
    /// Page-locked staging buffers for callers' pageable a/b/c, made on
    /// first use and kept for the process; `None` where the driver refused
    /// them ([`Gpu::staging`]).
    staging: std::sync::OnceLock<Option<super::staging::StagingRing>>,
}

impl Gpu {
    fn open(ordinal: usize) -> Result<Gpu> {
        let ctx = CudaContext::new(ordinal).map_err(cuda_err("cuCtxCreate"))?;
        let first = ctx.new_stream().map_err(cuda_err("cuStreamCreate"))?;
        let module = ctx.load_module(Ptx::from_binary(FATBIN.to_vec())).map_err(cuda_err("cuModuleLoadData"))?;
        let funcs = Kernel::ALL
            .iter()
            .map(|k| module.load_function(k.name()).map_err(cuda_err(k.name())))
            .collect::<Result<Vec<_>>>()?;
        // The NTT passes keep their tiles and twiddles in dynamic shared
        // memory, past the 48 KiB a launch gets without asking.
        for k in super::kernels::NTT_PASS_KERNELS {
            funcs[k.index()]
                .set_attribute(
                    cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    super::kernels::NTT_MAX_SHARED_BYTES as i32,
                )
                .map_err(|e| cuda_err(&format!("cuFuncSetAttribute({}, max dynamic shared memory)", k.name()))(e))?;
        }
        let memory = super::memory::DeviceMemory::new(ctx.clone(), ordinal)?;
        Ok(Gpu {
            ordinal,
            ctx,
            _first_stream: first,
            _module: module,
            funcs,
            active: AtomicUsize::new(0),
            call_locks: Default::default(),
            awaiting_stage: AtomicUsize::new(0),
            memory_events: Default::default(),
            phase2_ends: Default::default(),
            host_registration: Default::default(),
            staging: Default::default(),
            memory,
        })
    }

    /// A kernel of the module.
    pub fn kernel(&self, k: Kernel) -> &CudaFunction {
        &self.funcs[k.index()]
    }

    /// Streaming multiprocessors (0 if the driver does not say).
    pub fn multiprocessors(&self) -> usize {
        self.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_or(0, |v| v.max(0) as usize)
    }

    /// Threads of `k` in blocks of `block` that the device keeps resident at
    /// once: SMs × the driver's resident blocks per SM for the kernel's
    /// registers and shared memory × `block` (0 if the driver does not say;
    /// the first refusal is logged, since callers then skip what they would
    /// fit to the wave).
    pub fn resident_threads(&self, k: Kernel, block: u32) -> usize {
        static REFUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let per_sm = match self.kernel(k).occupancy_max_active_blocks_per_multiprocessor(block, 0, None) {
            Ok(b) => b as usize,
            Err(e) => {
                if !REFUSED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    tracing::warn!(target: "supraseal_c2::gpu", kernel = ?k, block, error = %e, "cuOccupancyMaxActiveBlocksPerMultiprocessor failed; launches are not fitted to the device's waves");
                }
                0
            }
        };
        self.multiprocessors() * per_sm * block as usize
    }

    /// Peak SM clock in MHz (0 if the driver does not say).
    pub fn clock_mhz(&self) -> usize {
        self.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map_or(0, |v| v.max(0) as usize / 1000)
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`: a query, it
    /// waits for nothing).
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(cuda_err("cuMemGetInfo"))
    }

    /// A new non-blocking stream (no device-wide synchronisation, see `_first_stream`).
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.new_stream().map_err(cuda_err("cuStreamCreate"))
    }

    /// A stream at the context's greatest priority: the block scheduler
    /// gives its kernels' waiting blocks the SMs that free up before those
    /// of kernels on streams of the default priority.
    pub fn new_priority_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.bind_to_thread().map_err(cuda_err("cuCtxSetCurrent"))?;
        let (_, greatest) = cudarc::driver::result::stream::get_priority_range().map_err(cuda_err("cuCtxGetStreamPriorityRange"))?;
        self.ctx.new_stream_with_priority(greatest).map_err(cuda_err("cuStreamCreateWithPriority"))
    }

}

/// What a host registration is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registration {
    /// A call's a/b/c, through [`super::pins`] (made before a circuit is
    /// needed, undone once its inputs are on the device): made and undone
    /// under the device's [`RegistrationGate`], so that no phase 1 waits for
    /// it. Portable: the registry is process-wide, and a range may be shared
    /// by calls on several devices.
    Input,
    /// A key's query vectors, once per key: `CU_MEMHOSTREGISTER_PORTABLE`
    /// (pinned for every context), not gated (it happens once: in the
    /// params load where a GPU checks the key and no call is in flight,
    /// else in phase 0 of the key's first call).
    Key,
}

/// Host memory page-locked for DMA (`cuMemHostRegister`), unregistered on
/// drop. The memory must outlive the registration; the owner drops it only
/// once no stream still copies from it.
pub struct HostRegistration {
    gpu: Arc<Gpu>,
    ptr: usize,
    kind: Registration,
}

impl Gpu {
    /// Page-locks `bytes` bytes at `ptr`. Errors: the driver's result
    /// (e.g. `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`, or an
    /// `RLIMIT_MEMLOCK` refusal), for the caller's log or fallback reason.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is live host memory that outlives the returned
    /// registration.
    pub unsafe fn register_host(
        self: &Arc<Self>,
        ptr: *const c_void,
        bytes: usize,
        kind: Registration,
    ) -> std::result::Result<HostRegistration, cudarc::driver::sys::CUresult> {
        use cudarc::driver::sys;
        if let Err(e) = self.ctx.bind_to_thread() {
            return Err(e.0);
        }
        // Portable for both kinds: pinned for every context.
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE;
        let r = {
            let _gate = (kind == Registration::Input).then(|| self.host_registration.register());
            // SAFETY: the caller's contract: live memory that outlives the registration.
            unsafe { sys::cuMemHostRegister_v2(ptr as *mut c_void, bytes, flags) }
        };
        if r != sys::cudaError_enum::CUDA_SUCCESS {
            return Err(r);
        }
        Ok(HostRegistration { gpu: self.clone(), ptr: ptr as usize, kind })
    }
}

impl Gpu {
    /// This device's staging ring, made on first use with one filler thread
    /// per two CPU threads (at most eight: on the H200's 16-core host, 8
    /// threads took a 16 GiB card's W = 2 calls from 0.33 to 0.355
    /// partitions/s against 4, BENCHMARKS.md); `None` when `cuMemHostAlloc`
    /// refused its buffers (logged once), and callers' buffers are then
    /// registered instead.
    pub fn staging(&self) -> Option<&super::staging::StagingRing> {
        self.staging
            .get_or_init(|| {
                let threads = (crate::threads::cpu_threads() / 2).clamp(1, 8);
                match super::staging::StagingRing::new(self, threads) {
                    Ok(ring) => {
                        tracing::debug!(bytes = ring.bytes(), threads, "staging buffers for pageable a, b, c");
                        Some(ring)
                    }
                    Err(e) => {
                        tracing::warn!(error = %e.message, "no staging buffers: callers' a, b, c are page-locked per call instead");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// This device's staging ring where a call has made it ([`Gpu::staging`]).
    pub fn staging_made(&self) -> Option<&super::staging::StagingRing> {
        self.staging.get().and_then(Option::as_ref)
    }

    /// Whether the first and last byte of `ptr..ptr + bytes` are page-locked
    /// host memory the driver knows (`cuMemHostAlloc`, or a registration of
    /// anyone's): the driver's memory type for both is host. `false` for
    /// pageable memory or on any error.
    pub fn is_page_locked(&self, ptr: *const c_void, bytes: usize) -> bool {
        use cudarc::driver::sys;
        if bytes == 0 || self.ctx.bind_to_thread().is_err() {
            return false;
        }
        let host = |p: usize| {
            let mut kind: std::ffi::c_uint = 0;
            // SAFETY: a query that writes one unsigned int; any address is accepted.
            let r = unsafe {
                sys::cuPointerGetAttribute(
                    &mut kind as *mut _ as *mut c_void,
                    sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                    p as sys::CUdeviceptr,
                )
            };
            r == sys::cudaError_enum::CUDA_SUCCESS && kind == sys::CUmemorytype::CU_MEMORYTYPE_HOST as std::ffi::c_uint
        };
        host(ptr as usize) && host(ptr as usize + bytes - 1)
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        let _ = self.gpu.ctx.bind_to_thread();
        let _gate = (self.kind == Registration::Input).then(|| self.gpu.host_registration.register());
        // SAFETY: registered by `register_host`, unregistered only here.
        let _ = unsafe { cudarc::driver::sys::cuMemHostUnregister(self.ptr as *mut c_void) };
    }
}

static DEVICES: Mutex<Vec<Option<Arc<Gpu>>>> = Mutex::new(Vec::new());

/// Number of visible CUDA devices (honours `CUDA_VISIBLE_DEVICES`); 0 when
/// libcuda is missing or reports none.
pub fn device_count() -> usize {
    // SAFETY: only probes for the library; cudarc panics on first use without it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return 0;
    }
    driver_device_count().map(|n| n.max(0) as usize).unwrap_or(0)
}

/// `cuDeviceGetCount` (after `cuInit`), with cudarc's panic on a driver
/// library that lacks one of the functions it loads (a stub or a driver
/// older than the binding) turned into an error message.
fn driver_device_count() -> std::result::Result<i32, String> {
    match std::panic::catch_unwind(CudaContext::device_count) {
        Ok(r) => r.map_err(|e| format!("the CUDA driver failed to initialise: {e:?}")),
        Err(panic) => Err(format!(
            "the CUDA driver library lacks a function this build calls ({}): a stub or a driver older than CUDA 12.0",
            crate::error::panic_message(panic.as_ref())
        )),
    }
}

/// Why no CUDA device is usable, or `None` when one is: no libcuda, a
/// driver that fails to initialise (its error), or one that lists no device.
pub fn unusable_reason() -> Option<String> {
    // SAFETY: only probes for the library; cudarc panics on first use without it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Some("libcuda (the NVIDIA driver library) was not found".into());
    }
    match driver_device_count() {
        Ok(n) if n > 0 => None,
        Ok(_) => Some(match std::env::var_os("CUDA_VISIBLE_DEVICES") {
            Some(v) => format!("the CUDA driver lists no device (CUDA_VISIBLE_DEVICES is {v:?})"),
            None => "the CUDA driver lists no device".into(),
        }),
        Err(why) => Some(why),
    }
}

/// The devices opened so far.
pub fn opened() -> Vec<Arc<Gpu>> {
    DEVICES.lock().unwrap_or_else(|p| p.into_inner()).iter().flatten().cloned().collect()
}

/// The loaded device `ordinal`, opened on first use and kept for the process.
/// Errors: `ENODEV` when libcuda is missing or the ordinal does not exist;
/// CUDA error numbers when the context or module cannot be created.
pub fn device(ordinal: usize) -> Result<Arc<Gpu>> {
    let count = device_count();
    if count == 0 {
        return Err(Error::no_device(unusable_reason().unwrap_or_else(|| "no CUDA device is usable".into())));
    }
    if ordinal >= count {
        return Err(Error::no_device(format!("GPU {ordinal} requested but {count} CUDA device(s) are usable")));
    }
    let mut devs = DEVICES.lock().unwrap_or_else(|p| p.into_inner());
    if devs.len() <= ordinal {
        devs.resize(ordinal + 1, None);
    }
    if let Some(g) = &devs[ordinal] {
        return Ok(g.clone());
    }
    let g = Arc::new(Gpu::open(ordinal)?);
    devs[ordinal] = Some(g.clone());
    Ok(g)
}
