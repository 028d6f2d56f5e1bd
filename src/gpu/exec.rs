//! One call's compute stream on a device ([`Exec`]): phase-2 allocations from
//! the device's compute pool, uploads and downloads, and the launch shape.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};

use super::device::{cuda_err, Gpu};
use super::faults::check_alloc;
use super::group::DeviceGroup;
use super::kernels::{Kernel, PointKernel};
use super::tuning::MsmTuning;
use crate::config::{FaultPhase, Settings};
use crate::error::Result;

/// One call's compute stream on a device, with the call's settings.
pub struct Exec {
    pub gpu: Arc<Gpu>,
    pub stream: Arc<CudaStream>,
    pub settings: Settings,
    /// The phase its allocations count in (`SUPRASEAL_C2_FAULT_ALLOC`).
    phase: FaultPhase,
    /// Its compute-pool allocations so far, and the host time they took (a
    /// pool trimmed at the end of the last call maps its memory again here).
    allocs: AtomicU64,
    alloc_nanos: AtomicU64,
    /// Device bytes the sets of tails put ahead over a streamed key may take
    /// together ([`super::stage::tails_ahead_room`]); 0 (none) until the
    /// call's phase 2 sets it.
    tails_ahead_room: AtomicUsize,
}

impl Exec {
    /// A new stream on `gpu` for a proving call's phase 2.
    pub fn new(gpu: Arc<Gpu>, settings: Settings) -> Result<Exec> {
        let stream = gpu.new_stream()?;
        Ok(Exec { gpu, stream, settings, phase: FaultPhase::Phase2, allocs: AtomicU64::new(0), alloc_nanos: AtomicU64::new(0), tails_ahead_room: AtomicUsize::new(0) })
    }

    /// A new stream on `gpu` for a params load, whose allocations count
    /// apart from the proving calls' (`N@load`).
    pub fn for_load(gpu: Arc<Gpu>, settings: Settings) -> Result<Exec> {
        let stream = gpu.new_stream()?;
        Ok(Exec { gpu, stream, settings, phase: FaultPhase::Load, allocs: AtomicU64::new(0), alloc_nanos: AtomicU64::new(0), tails_ahead_room: AtomicUsize::new(0) })
    }

    /// A second stream on this one's device, with its settings and phase, for
    /// work that runs beside this stream's kernels (an MSM's sort beside its
    /// accumulation), at the device's greatest priority where `first`
    /// ([`Gpu::new_priority_stream`]). Its launches order themselves against
    /// this stream's through the buffers they share (cudarc's read and write
    /// events); it allocates nothing of its own here.
    pub fn beside(&self, first: bool) -> Result<Exec> {
        let stream = if first { self.gpu.new_priority_stream()? } else { self.gpu.new_stream()? };
        Ok(Exec {
            gpu: self.gpu.clone(),
            stream,
            settings: self.settings,
            phase: self.phase,
            allocs: AtomicU64::new(0),
            alloc_nanos: AtomicU64::new(0),
            tails_ahead_room: AtomicUsize::new(0),
        })
    }

    /// Counts one compute-pool allocation that started at `t`.
    fn allocated(&self, t: Instant) {
        self.allocs.fetch_add(1, Ordering::Relaxed);
        self.alloc_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// [`Exec::tails_ahead_room`]'s bytes.
    pub fn set_tails_ahead_room(&self, bytes: usize) {
        self.tails_ahead_room.store(bytes, Ordering::Relaxed);
    }

    /// Device bytes the sets of tails put ahead over a streamed key may take
    /// together ([`super::msm::put_ahead`]).
    pub fn tails_ahead_room(&self) -> usize {
        self.tails_ahead_room.load(Ordering::Relaxed)
    }

    /// This stream's compute-pool allocations so far and the host time they took.
    pub fn allocations(&self) -> (u64, Duration) {
        (self.allocs.load(Ordering::Relaxed), Duration::from_nanos(self.alloc_nanos.load(Ordering::Relaxed)))
    }

    /// A kernel of the module.
    pub fn kernel(&self, k: Kernel) -> &CudaFunction {
        self.gpu.kernel(k)
    }

    /// The launch choice of an MSM of `n` points of `G` on this device:
    /// [`MsmTuning::for_points`], its accumulation threads fitted to whole
    /// waves of the device ([`MsmTuning::fitted_to_waves`]).
    pub fn msm_tuning<G: DeviceGroup>(&self, n: usize) -> MsmTuning {
        let t = MsmTuning::for_points(n);
        t.fitted_to_waves(n, self.accumulation_wave::<G>(t.block))
    }

    /// Accumulation threads of `G` in blocks of `block` that the device
    /// keeps resident at once (a wave, [`Gpu::resident_threads`]; 0 if the
    /// driver does not say).
    pub fn accumulation_wave<G: DeviceGroup>(&self, block: u32) -> usize {
        self.gpu.resident_threads(G::kernel(PointKernel::MsmAccumulate), block)
    }

    /// Copies `host` to a new device buffer (a phase-2 allocation, from the
    /// device's compute pool on this call's stream).
    pub fn upload<T: cudarc::driver::DeviceRepr>(&self, host: &[T], what: &str) -> Result<CudaSlice<T>> {
        check_alloc(&self.gpu, &self.settings, self.phase, std::mem::size_of_val(host), what)?;
        let t = Instant::now();
        // SAFETY: every element is written by the copy before any read.
        let mut d = unsafe { self.gpu.memory.compute_alloc::<T>(&self.stream, host.len(), what) }?;
        self.allocated(t);
        self.stream.memcpy_htod(host, &mut d).map_err(cuda_err(what))?;
        Ok(d)
    }

    /// A zeroed device buffer of `n` elements (a phase-2 allocation).
    pub fn zeros<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>> {
        check_alloc(&self.gpu, &self.settings, self.phase, n.max(1) * std::mem::size_of::<T>(), what)?;
        let t = Instant::now();
        // SAFETY: zeroed below before any read.
        let mut d = unsafe { self.gpu.memory.compute_alloc::<T>(&self.stream, n.max(1), what) }?;
        self.allocated(t);
        self.stream.memset_zeros(&mut d).map_err(cuda_err(what))?;
        Ok(d)
    }

    /// A phase-2 buffer of `n` elements from the compute pool, allocated in
    /// `stream`'s order (an upload stream: a copy into it then waits for none
    /// of the kernels queued on this call's compute stream), its elements
    /// from `written` on zeroed on that stream.
    ///
    /// # Safety
    /// Elements `..written` are uninitialised: the caller writes them
    /// before any read.
    pub unsafe fn alloc_padded_on<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        stream: &Arc<CudaStream>,
        n: usize,
        written: usize,
        what: &str,
    ) -> Result<CudaSlice<T>> {
        check_alloc(&self.gpu, &self.settings, self.phase, n.max(1) * std::mem::size_of::<T>(), what)?;
        let t = Instant::now();
        // SAFETY: the tail is zeroed below; the caller writes the head.
        let mut d = unsafe { self.gpu.memory.compute_alloc::<T>(stream, n.max(1), what) }?;
        self.allocated(t);
        if written < n {
            stream.memset_zeros(&mut d.slice_mut(written..)).map_err(cuda_err(what))?;
        }
        Ok(d)
    }

    /// Copies a device buffer back (waits for this stream only).
    pub fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(&self, d: &CudaSlice<T>, what: &str) -> Result<Vec<T>> {
        self.stream.clone_dtoh(d).map_err(cuda_err(what))
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.gpu.mem_info()
    }
}

/// A 1-D launch of `n` threads in blocks of 256.
pub fn grid(n: usize) -> LaunchConfig {
    let threads = 256u32;
    LaunchConfig { grid_dim: ((n.max(1)).div_ceil(threads as usize) as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

