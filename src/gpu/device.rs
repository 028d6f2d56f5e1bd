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

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;

use super::kernels::Kernel;
use crate::error::{Error, Result};
use crate::locks::RegistrationGate;

/// The kernels compiled by build.rs from cuda/kernels.cu.
static FATBIN: &[u8] = include_bytes!(env!("SUPRASEAL_C2_FATBIN"));

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
    /// Calls in flight that have not finished phase 1 yet (the pre-stages
    /// the pool should be ready for, see `GpuBackend::grow_stage_pool`).
    pub awaiting_stage: AtomicUsize,
    /// Held exclusively around each `cuMemHostRegister`/`Unregister` of a
    /// call's a/b/c (phases 0 and 3) and shared by phase 1 from before the
    /// memory lock until after it: those driver calls hold a driver-wide lock
    /// for tens of ms (512 MiB at 2^24), and a phase-1 allocation made
    /// meanwhile waited for it inside the memory lock (40–50 ms holds on the
    /// H200); with the gate, that wait happens before the lock.
    pub host_registration: RegistrationGate,
    /// The pool phase 2 allocates from ([`Exec::upload`], [`Exec::zeros`])
    /// and trims at its end. Ours, not the device's default pool: that one
    /// belongs to every CUDA user of the process (the primary context is
    /// shared), whose cached memory we must neither keep ("never" release
    /// threshold, see [`Gpu::keep_pool_memory`]) nor trim.
    pub(super) compute_pool: Pool,
    /// The pool phase 1 allocates pre-stages from, apart from the compute
    /// pool that phase 2 uses and trims: it keeps its memory while calls are
    /// in flight, so a phase 1 reuses a finished call's pre-stage instead of
    /// mapping new memory, which on the H200 waited ~0.1–0.2 s for the
    /// kernels running on the device. Trimmed when the device goes idle.
    stage_pool: Pool,
    /// Pre-stage vectors no call holds (see [`Gpu::take_idle_stage`]): a
    /// phase 2 hands its staged a/b/c back here instead of freeing them, and
    /// the next phase 1 takes them without any driver allocation. A
    /// stream-ordered allocation from the pool while another call computed
    /// took ~50 ms now and then on the H200 (3–6 of 36 memory-lock
    /// holds), even with the pool's cache large enough. Emptied when the
    /// device goes idle.
    stage_idle: Mutex<Vec<CudaSlice<u64>>>,
    /// The key whose bases stay on this device between calls, if any
    /// ([`super::resident`]); locked only to read or swap the `Arc`.
    pub resident: Mutex<Option<Arc<super::resident::copy::ResidentKey>>>,
    /// Held by a phase 1 across its residency decision and upload, so that
    /// calls under different lock handles of this device decide one at a
    /// time; phase 2's lookups take only `resident`, never this.
    pub resident_admission: Mutex<()>,
    /// The key whose upload failed on this device (its [`Srs`](crate::srs::Srs) id; 0: none),
    /// not tried again.
    pub resident_failed: std::sync::atomic::AtomicU64,
    /// The pool the resident copies come from, apart from the compute and
    /// pre-stage pools: its allocations never reuse memory whose free is
    /// still pending on another stream (internal dependencies off), so an
    /// upload in phase 1 waits for no other call's kernels; freed memory goes
    /// back to the device at the next synchronisation (release threshold 0).
    resident_pool: Pool,
    /// Page-locked staging buffers for callers' pageable a/b/c, made on
    /// first use and kept for the process; `None` where the driver refused
    /// them ([`Gpu::staging`]).
    staging: std::sync::OnceLock<Option<super::staging::StagingRing>>,
}

/// A `CUmemoryPool` handle of ours (a driver object the whole context may use).
pub(super) struct Pool(cudarc::driver::sys::CUmemoryPool);
// SAFETY: a pool handle is an opaque driver object, valid from any thread of the process.
unsafe impl Send for Pool {}
// SAFETY: as above; the driver synchronises its use.
unsafe impl Sync for Pool {}

impl Gpu {
    fn open(ordinal: usize) -> Result<Gpu> {
        let ctx = CudaContext::new(ordinal).map_err(cuda_err("cuCtxCreate"))?;
        let first = ctx.new_stream().map_err(cuda_err("cuStreamCreate"))?;
        let module = ctx.load_module(Ptx::from_binary(FATBIN.to_vec())).map_err(cuda_err("cuModuleLoadData"))?;
        let funcs = Kernel::ALL
            .iter()
            .map(|k| module.load_function(k.name()).map_err(cuda_err(k.name())))
            .collect::<Result<Vec<_>>>()?;
        // The NTT pass keeps its tile and twiddles in dynamic shared memory,
        // past the 48 KiB a launch gets without asking.
        funcs[Kernel::FrNttPass.index()]
            .set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                super::kernels::NTT_MAX_SHARED_BYTES as i32,
            )
            .map_err(cuda_err("cuFuncSetAttribute(fr_ntt_pass, max dynamic shared memory)"))?;
        let compute_pool = Pool(Self::create_pool(ordinal)?);
        let stage_pool = Pool(Self::create_pool(ordinal)?);
        let resident_pool = Pool(Self::create_pool(ordinal)?);
        Self::no_internal_dependencies(resident_pool.0)?;
        let gpu = Gpu {
            ordinal,
            ctx,
            _first_stream: first,
            _module: module,
            funcs,
            active: AtomicUsize::new(0),
            awaiting_stage: AtomicUsize::new(0),
            host_registration: Default::default(),
            staging: Default::default(),
            compute_pool,
            stage_pool,
            stage_idle: Default::default(),
            resident: Default::default(),
            resident_admission: Default::default(),
            resident_failed: Default::default(),
            resident_pool,
        };
        gpu.keep_pool_memory(gpu.compute_pool.0)?;
        gpu.keep_pool_memory(gpu.stage_pool.0)?;
        Ok(gpu)
    }

    /// A new device-memory pool on device `ordinal` (lives as long as the process).
    fn create_pool(ordinal: usize) -> Result<cudarc::driver::sys::CUmemoryPool> {
        use cudarc::driver::sys;
        // SAFETY: CUmemPoolProps is a plain C struct; all-zero is its documented default
        // (no export handles, no size cap), then type and location are set.
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ordinal as i32;
        // SAFETY: `props` is valid for the call.
        unsafe { cudarc::driver::result::mem_pool::create(&props) }.map_err(cuda_err("cuMemPoolCreate"))
    }

    /// A stream-ordered allocation of `words` u64 from the pre-stage pool on
    /// `stream` (`cuMemAllocFromPoolAsync`); freed, like any `CudaSlice`, by
    /// `cuMemFreeAsync` on `stream` when dropped.
    ///
    /// # Safety
    /// The memory is uninitialised: write it before reading it.
    /// Errors: the CUDA error, naming `what`.
    pub unsafe fn stage_alloc(&self, stream: &Arc<CudaStream>, words: usize, what: &str) -> Result<CudaSlice<u64>> {
        self.alloc_in(&self.stage_pool, stream, words, what)
    }

    /// A stream-ordered allocation of `words` u64 for a resident key
    /// ([`super::resident`]), from the resident pool on `stream`.
    ///
    /// # Safety
    /// The memory is uninitialised: write it before reading it.
    /// Errors: the CUDA error, naming `what`.
    pub unsafe fn resident_alloc(&self, stream: &Arc<CudaStream>, words: usize, what: &str) -> Result<CudaSlice<u64>> {
        self.alloc_in(&self.resident_pool, stream, words, what)
    }

    /// Turns off a pool's reuse of memory whose free is pending on another
    /// stream (the allocation would then wait, on the device, for that
    /// stream's work; a synchronisation of the allocating stream would wait
    /// for it too).
    fn no_internal_dependencies(pool: cudarc::driver::sys::CUmemoryPool) -> Result<()> {
        let mut off: i32 = 0;
        // SAFETY: REUSE_ALLOW_INTERNAL_DEPENDENCIES is an int read from `off`; `pool` is one of ours.
        unsafe {
            cudarc::driver::result::mem_pool::set_attribute(
                pool,
                cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                &mut off as *mut i32 as *mut c_void,
            )
        }
        .map_err(cuda_err("cuMemPoolSetAttribute(REUSE_ALLOW_INTERNAL_DEPENDENCIES)"))
    }

    /// The key resident on this device, if any (held by the caller until its
    /// kernels that read it are done).
    pub fn resident_key(&self) -> Option<Arc<super::resident::copy::ResidentKey>> {
        self.resident.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A stream-ordered allocation of `len` elements of `T` from `pool` on
    /// `stream` (at least one byte is allocated, so that an empty buffer
    /// still has an address to free).
    ///
    /// # Safety
    /// The memory is uninitialised: write it before reading it.
    /// Errors: the CUDA error, naming `what`.
    pub(super) unsafe fn alloc_in<T>(&self, pool: &Pool, stream: &Arc<CudaStream>, len: usize, what: &str) -> Result<CudaSlice<T>> {
        self.ctx.bind_to_thread().map_err(cuda_err(what))?;
        let bytes = (len * std::mem::size_of::<T>()).max(1);
        let ptr = cudarc::driver::result::mem_pool::alloc_async(pool.0, bytes, stream.cu_stream()).map_err(cuda_err(what))?;
        // cudarc unwraps the creation of the slice's two events: a failure
        // there is a panic, caught here so that the memory is freed and the
        // call falls back with an error instead.
        let mut slice = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stream.upgrade_device_ptr(ptr, len))).map_err(|_| {
            // SAFETY: `ptr` came from the allocation above and nothing else refers to it.
            let _ = cudarc::driver::result::free_async(ptr, stream.cu_stream());
            Error::cuda(CUDA_ERROR_OUT_OF_MEMORY, format!("CUDA error in {what}: creating the buffer's events failed"))
        })?;
        // The pool may hand out memory whose free is still pending on another
        // stream and orders only `stream` after it; recording the buffer's
        // write event here makes every later user (another call's upload or
        // compute stream, when the buffer goes through the idle list) wait
        // for this allocation point too.
        drop(cudarc::driver::DevicePtrMut::<T>::device_ptr_mut(&mut slice, stream).1);
        Ok(slice)
    }

    /// An idle pre-stage vector of exactly `words` u64, if any. Its last
    /// user may still be running on another call's stream: cudarc's events on
    /// the buffer make the next stream that writes it wait for that on the
    /// device, so taking it waits for nothing here.
    pub fn take_idle_stage(&self, words: usize) -> Option<CudaSlice<u64>> {
        let mut idle = self.stage_idle.lock().unwrap_or_else(|p| p.into_inner());
        let i = idle.iter().position(|v| v.len() == words)?;
        Some(idle.swap_remove(i))
    }

    /// Hands a pre-stage vector back to the idle list (its last uses are
    /// recorded in its events; see [`Gpu::take_idle_stage`]).
    pub fn keep_idle_stage(&self, v: CudaSlice<u64>) {
        self.stage_idle.lock().unwrap_or_else(|p| p.into_inner()).push(v);
    }

    /// Bytes of idle pre-stage vectors of `words` u64 each. Vectors of any
    /// other length (calls of another domain size) are freed back to the
    /// pre-stage pool (`cuMemFreeAsync` on their stream, after their last
    /// use: no wait here), where an allocation of this size can reuse them.
    pub fn idle_stage_bytes(&self, words: usize) -> usize {
        let mut idle = self.stage_idle.lock().unwrap_or_else(|p| p.into_inner());
        let (keep, other): (Vec<_>, Vec<_>) = std::mem::take(&mut *idle).into_iter().partition(|v| v.len() == words);
        *idle = keep;
        let bytes = idle.len() * words * 8;
        drop(idle);
        drop(other);
        bytes
    }

    /// Frees every idle pre-stage vector and waits for the frees (on their
    /// own streams only), so that a pool trim after it returns the memory;
    /// called when the device goes idle (a call that started meanwhile keeps
    /// the list: it counted on it in admission).
    pub fn release_idle_stages(&self) {
        let idle = {
            let mut list = self.stage_idle.lock().unwrap_or_else(|p| p.into_inner());
            if self.active.load(std::sync::atomic::Ordering::SeqCst) != 0 {
                return;
            }
            std::mem::take(&mut *list)
        };
        for v in idle {
            let stream = v.stream().clone();
            drop(v);
            let _ = stream.synchronize();
        }
    }

    /// Sets one of our pools' release threshold to "never": by default a
    /// pool unmaps freed memory at every stream synchronisation, so the next
    /// stream-ordered allocation maps memory anew, and mapping waited for
    /// running kernels on the H200 (memory-lock holds of ~0.5 s at p99 while
    /// another call computed). Memory goes back to the device only through
    /// [`Gpu::trim_pool`] (under the compute lock) and
    /// [`Gpu::trim_stage_pool`] (when the device is idle).
    fn keep_pool_memory(&self, pool: cudarc::driver::sys::CUmemoryPool) -> Result<()> {
        let mut never: u64 = u64::MAX;
        // SAFETY: RELEASE_THRESHOLD is a cuuint64_t read from `never`; `pool` is one of ours.
        unsafe {
            cudarc::driver::result::mem_pool::set_attribute(
                pool,
                cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut never as *mut u64 as *mut c_void,
            )
        }
        .map_err(cuda_err("cuMemPoolSetAttribute(RELEASE_THRESHOLD)"))
    }

    /// A kernel of the module.
    pub fn kernel(&self, k: Kernel) -> &CudaFunction {
        &self.funcs[k.index()]
    }

    /// Streaming multiprocessors (0 if the driver does not say).
    pub fn multiprocessors(&self) -> usize {
        self.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_or(0, |v| v.max(0) as usize)
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

    /// Bytes the compute and pre-stage pools keep mapped but no allocation
    /// uses: a stream-ordered allocation reuses them without mapping new
    /// memory. `cuMemGetInfo` counts them as used. (Pool queries; they wait for nothing.)
    pub fn pool_cached(&self) -> usize {
        Self::cached_in(self.compute_pool.0) + Self::cached_in(self.stage_pool.0)
    }

    /// Bytes the pre-stage pool keeps mapped but no pre-stage uses (part of
    /// [`Gpu::pool_cached`]); only pre-stage allocations can reuse them.
    pub fn stage_cached(&self) -> usize {
        Self::cached_in(self.stage_pool.0)
    }

    /// Bytes allocated from this device's three pools and not yet freed
    /// (compute, pre-stage with its idle vectors, resident copy): what the
    /// library holds on the device, apart from the driver's own reservations.
    #[cfg(any(test, feature = "tools"))]
    pub fn pools_in_use(&self) -> usize {
        [&self.compute_pool, &self.stage_pool, &self.resident_pool]
            .into_iter()
            .map(|p| Self::pool_attr(p.0, cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT).unwrap_or(0) as usize)
            .sum()
    }

    fn pool_attr(pool: cudarc::driver::sys::CUmemoryPool, a: cudarc::driver::sys::CUmemPool_attribute) -> Option<u64> {
        let mut v: u64 = 0;
        // SAFETY: the attributes asked for are cuuint64_t, written into `v`; `pool` is one of ours.
        unsafe { cudarc::driver::result::mem_pool::get_attribute(pool, a, &mut v as *mut u64 as *mut c_void) }.ok()?;
        Some(v)
    }

    fn cached_in(pool: cudarc::driver::sys::CUmemoryPool) -> usize {
        let attr = |a| Self::pool_attr(pool, a);
        use cudarc::driver::sys::CUmemPool_attribute::{CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_CURRENT};
        match (attr(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), attr(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)) {
            (Some(r), Some(u)) => r.saturating_sub(u) as usize,
            _ => 0,
        }
    }

    /// Memory an allocation can get, in bytes: free plus what the pool keeps
    /// cached; and the total.
    pub fn available(&self) -> Result<(usize, usize)> {
        let (free, total) = self.mem_info()?;
        Ok((free + self.pool_cached(), total))
    }

    /// Returns the compute pool's unused memory to the device
    /// (`cuMemPoolTrimTo`), and the resident pool's (a released key's copy,
    /// once its free has run). Called at the end of phase 2, under the
    /// compute lock, where waiting for other streams costs nothing, and when
    /// the device is idle.
    pub fn trim_pool(&self) -> Result<()> {
        for pool in [&self.compute_pool, &self.resident_pool] {
            // SAFETY: a valid pool of our device.
            unsafe { cudarc::driver::result::mem_pool::trim_to(pool.0, 0) }.map_err(cuda_err("cuMemPoolTrimTo"))?;
        }
        Ok(())
    }

    /// Returns the pre-stage pool's unused memory to the device; called by
    /// the last call in flight on the device, so that an idle device is back
    /// to its free memory before the calls.
    pub fn trim_stage_pool(&self) -> Result<()> {
        // SAFETY: a valid pool of our device.
        unsafe { cudarc::driver::result::mem_pool::trim_to(self.stage_pool.0, 0) }.map_err(cuda_err("cuMemPoolTrimTo(pre-stage)"))
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
    /// per four CPU threads (at most four); `None` when `cuMemHostAlloc`
    /// refused its buffers (logged once), and callers' buffers are then
    /// registered instead.
    pub fn staging(&self) -> Option<&super::staging::StagingRing> {
        self.staging
            .get_or_init(|| {
                let threads = (crate::threads::cpu_threads() / 4).clamp(1, 4);
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
    CudaContext::device_count().map(|n| n.max(0) as usize).unwrap_or(0)
}

/// Why no CUDA device is usable, or `None` when one is: no libcuda, a
/// driver that fails to initialise (its error), or one that lists no device.
pub fn unusable_reason() -> Option<String> {
    // SAFETY: only probes for the library; cudarc panics on first use without it.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Some("libcuda (the NVIDIA driver library) was not found".into());
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => None,
        Ok(_) => Some(match std::env::var_os("CUDA_VISIBLE_DEVICES") {
            Some(v) => format!("the CUDA driver lists no device (CUDA_VISIBLE_DEVICES is {v:?})"),
            None => "the CUDA driver lists no device".into(),
        }),
        Err(e) => Some(format!("the CUDA driver failed to initialise: {e:?}")),
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
    if ordinal >= count {
        return Err(Error::no_device(format!(
            "GPU {ordinal} requested but {count} CUDA device(s) are usable (libcuda present: {})",
            // SAFETY: as above.
            unsafe { cudarc::driver::sys::is_culib_present() }
        )));
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
