//! One device's memory, owned in one place ([`DeviceMemory`]): the three
//! pools a call allocates from (compute, pre-stage, resident key), the idle
//! pre-stage list handed from call to call, the resident key, and the one
//! function that answers admission ([`DeviceMemory::room`]): how much a
//! call may stage beside a computing call's peak. Phase 1 and phase 2's
//! staging ahead ([`super::stage`]) ask it the same question; the resident
//! key's rule ([`super::resident`]) works inside the room it returns.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaSlice, CudaStream};

use super::device::{cuda_err, CUDA_ERROR_OUT_OF_MEMORY};
use super::resident::Room;
use super::stage::{compute_peak_bytes, KeyShape};
use crate::config::Settings;
use crate::error::{Error, Result};

/// A `CUmemoryPool` handle of ours (a driver object the whole context may use).
pub(super) struct Pool(cudarc::driver::sys::CUmemoryPool);
// SAFETY: a pool handle is an opaque driver object, valid from any thread of the process.
unsafe impl Send for Pool {}
// SAFETY: as above; the driver synchronises its use.
unsafe impl Sync for Pool {}

/// The memory of one device as this library uses it.
pub struct DeviceMemory {
    ctx: Arc<CudaContext>,
    /// The pool phase 2 allocates from ([`super::exec::Exec::upload`], [`super::exec::Exec::zeros`])
    /// and trims at its end, unless a call keeps its cache for the next call
    /// ([`DeviceMemory::keep_compute_cache`]: over a resident key, or for
    /// the calls in flight with `SUPRASEAL_C2_COMPUTE_CACHE=busy`). Ours, not the device's default pool: that one
    /// belongs to every CUDA user of the process (the primary context is
    /// shared), whose cached memory we must neither keep ("never" release
    /// threshold, see [`DeviceMemory::keep_pool_memory`]) nor trim.
    compute_pool: Pool,
    /// The pool phase 1 allocates pre-stages from, apart from the compute
    /// pool that phase 2 uses and trims: it keeps its memory while calls are
    /// in flight, so a phase 1 reuses a finished call's pre-stage instead of
    /// mapping new memory, which on the H200 waited ~0.1–0.2 s for the
    /// kernels running on the device. Trimmed when the device goes idle.
    stage_pool: Pool,
    /// Pre-stage vectors no call holds (see [`DeviceMemory::take_idle_stage`]): a
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
    pub resident_failed: AtomicU64,
    /// The pool the resident copies come from, apart from the compute and
    /// pre-stage pools: its allocations never reuse memory whose free is
    /// still pending on another stream (internal dependencies off), so an
    /// upload in phase 1 waits for no other call's kernels; freed memory goes
    /// back to the device at the next synchronisation (release threshold 0).
    resident_pool: Pool,
    /// Whose the compute pool's cache is ([`CacheOwner`]).
    compute_owner: Mutex<CacheOwner>,
    /// How many times a call kept the compute pool's cache past its phase 2
    /// over a resident key, and for the calls in flight (`busy`), since the
    /// process started (tests and diagnostics).
    keeps: [std::sync::atomic::AtomicU64; 2],
}

/// The one shape (domain n, key lengths) whose calls admission lets count
/// the compute pool's cache, from the first such admission after a trim
/// until the next trim; whether a call of it kept the cache past its phase 2
/// (`kept`), and whether it kept it only for the calls then in flight
/// (`busy`: over a streamed key, so the device's last call trims it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheOwner {
    /// Trimmed since any call counted it.
    #[default]
    None,
    Shape { n: usize, key: KeyShape, kept: bool, busy: bool },
}

/// The pre-stage memory that [`DeviceMemory::room`] counted as reusable, in
/// bytes (the pool growth of phase 1 reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageReuse {
    /// The part of the room's `avail` that is reused pre-stage memory (idle
    /// vectors and the pool's cache), not new mappings.
    pub reusable: usize,
    /// The pre-stage pool's cache and the idle vectors of this size.
    pub stage_cached: usize,
    pub idle: usize,
}

/// What [`DeviceMemory::room`] reads from the driver and the pools, in bytes.
#[derive(Clone, Copy, Debug)]
struct Figures {
    /// Free on the device plus every pool's cache; the device's total.
    free: usize,
    total: usize,
    /// The compute pool's memory in use (the running phase 2's) and its
    /// cache, of which `counted` counts for this call; `mine`: the cache's
    /// owner is this call's shape (or none).
    in_use: usize,
    cached: usize,
    counted: usize,
    mine: bool,
    /// The pre-stage pool's cache, and its idle vectors of this call's size.
    stage_cached: usize,
    idle: usize,
}

/// [`DeviceMemory::room`]'s arithmetic, for a call of domain `n` whose
/// computing peak is `peak`, asking for `need` bytes of pre-stage vectors.
fn room_from(f: Figures, n: usize, peak: usize, need: usize, settings: &Settings) -> (Room, StageReuse) {
    let free = f.free.saturating_sub(f.cached - f.counted);
    // Idle pre-stage vectors of this size and the pre-stage pool's cache
    // can serve only pre-stages, not a computing call's phase 2 (compute
    // pool): count at most `need` of them. (`free` counts the cache, not
    // the idle vectors: the driver sees those as in use.)
    let reusable = (f.stage_cached + f.idle).min(need);
    let free_compute = free.saturating_sub(f.stage_cached);
    let compute_avail = settings.effective_free(free_compute, f.total);
    // As a `SUPRASEAL_C2_VRAM_LIMIT_MB` card sees it once given back.
    let returning = if f.mine { settings.effective_free(free_compute + f.in_use, f.total).saturating_sub(compute_avail) } else { 0 };
    let room = Room {
        avail: settings.effective_free(free_compute + reusable, f.total),
        compute_avail,
        one_circuit: 3 * n * std::mem::size_of::<blstrs::Scalar>(),
        // Saturating: a margin of up to 2^44 − 1 MiB parses.
        reserve: settings.vram_margin.saturating_add(peak),
        returning,
    };
    (room, StageReuse { reusable, stage_cached: f.stage_cached, idle: f.idle })
}

impl DeviceMemory {
    /// The pools of device `ordinal` on `ctx` (they live as long as the process).
    pub(super) fn new(ctx: Arc<CudaContext>, ordinal: usize) -> Result<DeviceMemory> {
        let compute_pool = Pool(Self::create_pool(ordinal)?);
        let stage_pool = Pool(Self::create_pool(ordinal)?);
        let resident_pool = Pool(Self::create_pool(ordinal)?);
        Self::no_internal_dependencies(resident_pool.0)?;
        Self::keep_pool_memory(compute_pool.0)?;
        Self::keep_pool_memory(stage_pool.0)?;
        Ok(DeviceMemory {
            ctx,
            compute_pool,
            stage_pool,
            stage_idle: Default::default(),
            compute_owner: Default::default(),
            keeps: Default::default(),
            resident: Default::default(),
            resident_admission: Default::default(),
            resident_failed: Default::default(),
            resident_pool,
        })
    }

    /// Admission's one question: what a call of domain `n`, key `key` and
    /// `settings` may stage, asking for `need` bytes of pre-stage vectors,
    /// beside the reserve a computing call needs ([`Room`]: `avail` counts
    /// free memory less the pre-stage pool's cache and the compute pool's
    /// cache beyond a computing call's peak, plus at most `need` of
    /// that cache and the idle vectors, which serve only pre-stages;
    /// `compute_avail` what phase 2's pool may take; `reserve` the margin
    /// plus [`compute_peak_bytes`]; `returning` what the running phase 2
    /// holds in the compute pool, for calls of the cache's shape; the caller
    /// zeroes it where phase 2s may overlap), and the reusable part of it. Queries
    /// only (`cuMemGetInfo`, pool attributes): it waits for nothing. Vectors
    /// on the idle list of another length are freed back to the pre-stage
    /// pool on the way.
    pub fn room(&self, n: usize, key: &KeyShape, settings: &Settings, need: usize) -> Result<(Room, StageReuse)> {
        // Read before the free memory and the caches and again after them,
        // the smaller kept: a buffer that the running phase 2 allocates or
        // frees between the reads is counted once or not at all, never twice.
        let in_use_before = self.compute_in_use();
        let (free, total) = self.available()?;
        // The compute pool's cache serves phase 2's allocations only, and it
        // stays mapped between calls over a resident key
        // ([`DeviceMemory::keep_compute_cache`]): it counts only up to a
        // computing call's peak, which the reserve below holds back anyway.
        let peak = compute_peak_bytes(n, key, settings);
        // Only calls of one shape count it: a cache of another shape's
        // buffers may hold no block this call's fit in, and a call keeps it
        // past its phase 2 only where no other shape counted on its trim
        // ([`DeviceMemory::keep_compute_cache`]).
        // The same holds for what the running phase 2 gives back: a call of
        // the owner shape keeps it as that shape's cache, others trim it.
        let (cached, counted, mine) = {
            let mut owner = self.compute_owner.lock().unwrap_or_else(|p| p.into_inner());
            let cached = self.compute_cached();
            let (counted, mine) = match *owner {
                CacheOwner::None => {
                    *owner = CacheOwner::Shape { n, key: *key, kept: false, busy: false };
                    (cached.min(peak), true)
                }
                CacheOwner::Shape { n: on, key: ok, .. } if (on, ok) == (n, *key) => (cached.min(peak), true),
                CacheOwner::Shape { .. } => (0, false),
            };
            (cached, counted, mine)
        };
        let in_use = in_use_before.min(self.compute_in_use());
        let figures = Figures { free, total, in_use, cached, counted, mine, stage_cached: self.stage_cached(), idle: self.idle_stage_bytes(4 * n) };
        Ok(room_from(figures, n, peak, need, settings))
    }

    /// A stream-ordered allocation of `len` elements of `T` from the compute
    /// pool on `stream` (phase 2's buffers).
    ///
    /// # Safety
    /// The memory is uninitialised: write it before reading it.
    /// Errors: the CUDA error, naming `what`.
    pub unsafe fn compute_alloc<T>(&self, stream: &Arc<CudaStream>, len: usize, what: &str) -> Result<CudaSlice<T>> {
        self.alloc_in(&self.compute_pool, stream, len, what)
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
    unsafe fn alloc_in<T>(&self, pool: &Pool, stream: &Arc<CudaStream>, len: usize, what: &str) -> Result<CudaSlice<T>> {
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
    /// recorded in its events; see [`DeviceMemory::take_idle_stage`]).
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
    pub fn release_idle_stages(&self, active: &AtomicUsize) {
        let idle = {
            let mut list = self.stage_idle.lock().unwrap_or_else(|p| p.into_inner());
            if active.load(std::sync::atomic::Ordering::SeqCst) != 0 {
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
    /// [`DeviceMemory::trim_pool`] (under the compute lock) and
    /// [`DeviceMemory::trim_stage_pool`] (when the device is idle).
    fn keep_pool_memory(pool: cudarc::driver::sys::CUmemoryPool) -> Result<()> {
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

    /// Bytes the compute and pre-stage pools keep mapped but no allocation
    /// uses: a stream-ordered allocation reuses them without mapping new
    /// memory. `cuMemGetInfo` counts them as used. (Pool queries; they wait for nothing.)
    pub fn pool_cached(&self) -> usize {
        Self::cached_in(self.compute_pool.0) + Self::cached_in(self.stage_pool.0)
    }

    /// Bytes the compute pool keeps mapped but no allocation uses (part of
    /// [`DeviceMemory::pool_cached`]); only phase 2's allocations can reuse them.
    pub fn compute_cached(&self) -> usize {
        Self::cached_in(self.compute_pool.0)
    }

    /// Bytes allocated from the compute pool and not yet freed: what the
    /// running phase 2 holds.
    pub fn compute_in_use(&self) -> usize {
        Self::pool_attr(self.compute_pool.0, cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT).unwrap_or(0) as usize
    }

    /// Bytes the pre-stage pool keeps mapped but no pre-stage uses (part of
    /// [`DeviceMemory::pool_cached`]); only pre-stage allocations can reuse them.
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
        let (free, total) = self.ctx.mem_get_info().map_err(cuda_err("cuMemGetInfo"))?;
        Ok((free + self.pool_cached(), total))
    }

    /// Leaves the compute pool's cache mapped after the phase 2 of a call
    /// of domain `n` and key `key` (instead of [`DeviceMemory::trim_pool`]),
    /// for the next call of that shape to reuse: only where the cache's
    /// owner is that shape (`false` otherwise, and the caller trims), so no
    /// call of another shape was admitted counting on memory this cache
    /// then keeps. `busy`: kept only for the calls in flight (the device's
    /// last call trims it, [`DeviceMemory::compute_cache_busy`]).
    pub fn keep_compute_cache(&self, n: usize, key: KeyShape, busy: bool) -> bool {
        let mut owner = self.compute_owner.lock().unwrap_or_else(|p| p.into_inner());
        match *owner {
            CacheOwner::Shape { n: on, key: ok, .. } if (on, ok) == (n, key) => {
                *owner = CacheOwner::Shape { n, key, kept: true, busy };
                self.keeps[busy as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }

    /// Whether a call's phase 2 left the compute pool's cache mapped for the
    /// next call of its shape (a call that never computed leaves it so).
    pub fn compute_cache_kept(&self) -> bool {
        matches!(*self.compute_owner.lock().unwrap_or_else(|p| p.into_inner()), CacheOwner::Shape { kept: true, .. })
    }

    /// How many times calls kept the compute pool's cache past their phase
    /// 2: (over a resident key, for the calls in flight).
    #[cfg(any(test, feature = "tools"))]
    pub fn compute_keeps(&self) -> (u64, u64) {
        let [resident, busy] = &self.keeps;
        (resident.load(std::sync::atomic::Ordering::Relaxed), busy.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Whether the compute pool's cache was kept only for the calls in
    /// flight (over a streamed key): the device's last call trims it.
    pub fn compute_cache_busy(&self) -> bool {
        matches!(*self.compute_owner.lock().unwrap_or_else(|p| p.into_inner()), CacheOwner::Shape { kept: true, busy: true, .. })
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
        // After the trim: an admission in between still sees the old owner
        // (it counts less, not more).
        *self.compute_owner.lock().unwrap_or_else(|p| p.into_inner()) = CacheOwner::None;
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

#[cfg(test)]
mod tests {
    use super::{room_from, Figures};
    use crate::config::Settings;

    const GB: usize = 1 << 30;
    /// porep-32g: n = 2^27, peak 12 GiB.
    const N: usize = 1 << 27;

    fn figures(free: usize, in_use: usize) -> Figures {
        Figures { free, total: 79 * GB, in_use, cached: 0, counted: 0, mine: true, stage_cached: 0, idle: 0 }
    }

    #[test]
    fn the_running_phase_2s_memory_counts_as_returning_only_for_the_caches_shape() {
        let s = Settings { vram_margin: GB / 2, vram_limit: None, ..Settings::default() };
        // An 80 GB card: the key (44 GiB), one call computing (12 GiB), one pre-staged (12 GiB).
        let (room, _) = room_from(figures(11 * GB, 12 * GB), N, 12 * GB, 12 * GB, &s);
        assert_eq!((room.compute_avail, room.returning, room.reserve), (11 * GB, 12 * GB, 12 * GB + GB / 2));
        // Another shape owns the compute cache: the running call keeps what it frees.
        let (room, _) = room_from(Figures { mine: false, ..figures(11 * GB, 12 * GB) }, N, 12 * GB, 12 * GB, &s);
        assert_eq!((room.compute_avail, room.returning), (11 * GB, 0));
        // The cache beyond what counts is not free, whatever is returning.
        let f = Figures { cached: 5 * GB, counted: 2 * GB, ..figures(11 * GB, GB) };
        let (room, _) = room_from(f, N, 12 * GB, 12 * GB, &s);
        assert_eq!((room.compute_avail, room.returning), (8 * GB, GB));
    }

    #[test]
    fn returning_is_what_a_vram_limited_card_gets_back() {
        // A 79 GiB card limited to 16 GiB.
        let s = Settings { vram_margin: 0, vram_limit: Some(16 * GB), ..Settings::default() };
        // 9 GiB in use, 4 GiB of it the running phase 2's: 7 GiB free now, 11 once given back.
        let (room, _) = room_from(figures(70 * GB, 4 * GB), N, 12 * GB, 12 * GB, &s);
        assert_eq!((room.compute_avail, room.returning), (7 * GB, 4 * GB));
        // 21 GiB in use (another process's over the limit): nothing is free,
        // and giving 4 GiB back leaves the card still over it.
        let (room, _) = room_from(figures(58 * GB, 4 * GB), N, 12 * GB, 12 * GB, &s);
        assert_eq!((room.compute_avail, room.returning), (0, 0));
        // 18 GiB in use: 2 GiB over; 4 GiB back gives 2 GiB.
        let (room, _) = room_from(figures(61 * GB, 4 * GB), N, 12 * GB, 12 * GB, &s);
        assert_eq!((room.compute_avail, room.returning), (0, 2 * GB));
    }
}
