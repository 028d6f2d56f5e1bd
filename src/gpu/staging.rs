//! Page-locked staging buffers of one device ([`StagingRing`]): how callers'
//! pageable a/b/c reach the device without any host registration during a
//! call.
//!
//! `cuMemHostRegister` / `cuMemHostUnregister` of a circuit's buffers take a
//! driver-wide lock for as long as they run (~0.5–0.9 s and ~0.4 s for a
//! porep-32g circuit's 12 GiB on the H200), and every launch and copy of
//! every stream in the process waits behind it: the kernels of the circuit
//! computing beside the registration stalled by ~1 s per circuit
//! (notes/GPU.md). The ring instead holds a few buffers from `cuMemHostAlloc`,
//! made once per device and kept for the process. A fill copies the caller's
//! memory into them on CPU threads (`memcpy`) and each buffer goes up with
//! `cuMemcpyHtoDAsync`, followed by an event that the next filler of the
//! buffer waits on before writing it. A buffer the caller page-locked itself
//! goes up directly (`GpuCall::pin`), never through the ring.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use cudarc::driver::{CudaEvent, CudaStream, CudaViewMut, DevicePtrMut};

use super::device::{cuda_err, Gpu};
use crate::error::{Error, Result};

/// Bytes in each staging buffer: one `cuMemcpyHtoDAsync` each (16 MiB go
/// up in ~0.3 ms at PCIe 5 speed, far above the ~10 µs a copy costs to
/// enqueue).
pub const CHUNK: usize = 16 << 20;

/// One page-locked buffer of [`CHUNK`] bytes and the event recorded after
/// the last copy that reads it.
struct Slot {
    host: *mut u8,
    copied: CudaEvent,
}

// SAFETY: `host` is a driver allocation owned by the slot, written only by
// the thread that holds the slot (taken out of the ring's list).
unsafe impl Send for Slot {}

impl Drop for Slot {
    fn drop(&mut self) {
        let _ = self.copied.synchronize();
        // SAFETY: allocated for this slot, freed once, no copy reads it any more.
        let _ = unsafe { cudarc::driver::result::free_host(self.host as *mut c_void) };
    }
}

/// A device's staging buffers, shared by its calls: taken oldest-returned
/// first, so that the buffer a filler gets is the one whose copy was
/// enqueued longest ago (the most likely to be complete).
pub struct StagingRing {
    free: Mutex<VecDeque<Slot>>,
    returned: Condvar,
    /// CPU threads that one fill copies with.
    threads: usize,
    slots: usize,
}

/// Copies `host` to the start of `dst` on `stream`: through `ring` where
/// there is one and `host` is pageable (the copy is then asynchronous and
/// `host` may go once this returns), else directly (asynchronous only from
/// page-locked memory). Errors: the driver's, naming `what`.
pub fn copy_to_device<T: cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    ring: Option<&StagingRing>,
    stream: &std::sync::Arc<CudaStream>,
    host: &[T],
    dst: &mut CudaViewMut<'_, T>,
    threads: Option<usize>,
    what: &str,
) -> Result<()> {
    let bytes = std::mem::size_of_val(host);
    match ring {
        Some(ring) if bytes > 0 && !gpu.is_page_locked(host.as_ptr() as *const c_void, bytes) => ring.fill(gpu, stream, host, dst, threads, what),
        _ => stream.memcpy_htod(host, dst).map_err(cuda_err(what)),
    }
}

impl StagingRing {
    /// `threads` filler threads per fill and two buffers per thread (so
    /// that a buffer's copy to the device runs while its thread fills the
    /// next), plus two: `(2·threads + 2) · CHUNK` bytes page-locked.
    /// Errors: the driver's, when `cuMemHostAlloc` refuses (the caller then
    /// stages another way).
    pub fn new(gpu: &Gpu, threads: usize) -> Result<StagingRing> {
        let threads = threads.max(1);
        let slots = 2 * threads + 2;
        gpu.ctx.bind_to_thread().map_err(cuda_err("staging buffers"))?;
        // Slots made before a failure are freed by their `Drop`.
        let mut free = VecDeque::with_capacity(slots);
        for _ in 0..slots {
            // A filler that waits for a copy sleeps instead of spinning
            // beside the call's CPU work.
            let copied = gpu
                .ctx
                .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC))
                .map_err(cuda_err("cuEventCreate (staging buffer)"))?;
            // SAFETY: a fresh allocation, owned by the slot and freed in its
            // `Drop`; written before it is read (fills copy into it first).
            let host = unsafe { cudarc::driver::result::malloc_host(CHUNK, cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE) }
                .map_err(cuda_err("cuMemHostAlloc (staging buffer)"))? as *mut u8;
            free.push_back(Slot { host, copied });
        }
        Ok(StagingRing { free: Mutex::new(free), returned: Condvar::new(), threads, slots })
    }

    /// Page-locked bytes the ring holds.
    pub fn bytes(&self) -> usize {
        self.slots * CHUNK
    }

    fn take(&self) -> Slot {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(s) = free.pop_front() {
                return s;
            }
            free = self.returned.wait(free).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn put(&self, s: Slot) {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).push_back(s);
        self.returned.notify_one();
    }

    /// Copies `host` to the start of `dst` on `stream` through the ring:
    /// [`CHUNK`]-sized pieces, each copied into a free buffer by one of the
    /// ring's filler threads and sent up from there. Returns once every
    /// piece is enqueued; the copies finish on the device in stream order,
    /// and `dst`'s write is recorded for cudarc's cross-stream ordering
    /// after the last of them. `threads`: the copying threads (this one
    /// included; `None`: the ring's default). Errors: the first driver
    /// error (the pieces enqueued before it still complete).
    pub fn fill<T: cudarc::driver::DeviceRepr>(
        &self,
        gpu: &Gpu,
        stream: &CudaStream,
        host: &[T],
        dst: &mut CudaViewMut<'_, T>,
        threads: Option<usize>,
        what: &str,
    ) -> Result<()> {
        assert!(dst.len() >= host.len(), "{what}: {} device elements for {} host elements", dst.len(), host.len());
        let bytes = std::mem::size_of_val(host);
        if bytes == 0 {
            return Ok(());
        }
        let src = host.as_ptr() as usize;
        // Held until every piece is enqueued: its drop records `dst`'s write
        // event after them.
        let (base, _written) = dst.device_ptr_mut(stream);
        let pieces = bytes.div_ceil(CHUNK);
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        let fail = |e: Error| {
            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        };
        let worker = || {
            if let Err(e) = gpu.ctx.bind_to_thread() {
                fail(cuda_err("staging fill")(e));
                return;
            }
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= pieces || failed.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                    return;
                }
                let (off, len) = (k * CHUNK, CHUNK.min(bytes - k * CHUNK));
                let slot = self.take();
                let mut enqueued = false;
                let sent = (|| -> std::result::Result<(), cudarc::driver::DriverError> {
                    // The copy that last read this buffer is complete.
                    slot.copied.synchronize()?;
                    // SAFETY: `src + off .. + len` lies in `host` (len ≤ bytes − off);
                    // the slot's buffer holds CHUNK ≥ len bytes and is this
                    // thread's alone until `put`; the two do not overlap
                    // (one is the driver's allocation).
                    unsafe { std::ptr::copy_nonoverlapping((src + off) as *const u8, slot.host, len) };
                    // SAFETY: `base + off .. + len` lies in `dst` (len ≤ its
                    // bytes − off); the source is page-locked and is not
                    // written again before `copied` completes.
                    unsafe {
                        cudarc::driver::result::memcpy_htod_async(
                            base + off as u64,
                            std::slice::from_raw_parts(slot.host, len),
                            stream.cu_stream(),
                        )
                    }?;
                    enqueued = true;
                    slot.copied.record(stream)
                })();
                if sent.is_err() && enqueued {
                    // The event does not follow the copy: wait for the copy
                    // itself before the buffer can be written again.
                    let _ = stream.synchronize();
                }
                self.put(slot);
                if let Err(e) = sent {
                    fail(cuda_err(what)(e));
                    return;
                }
            }
        };
        let threads = threads.unwrap_or(self.threads).clamp(1, pieces);
        std::thread::scope(|s| {
            // A thread that cannot be started leaves its share to the others
            // (this one always runs).
            for _ in 1..threads {
                let _ = std::thread::Builder::new().name("supraseal-c2-staging".into()).spawn_scoped(s, worker);
            }
            worker();
        });
        match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

