//! [`ScalarBuf`]: a device vector of scalars that phase 2 computes in, either
//! the call's own allocation or a pre-stage vector lent by the device's idle
//! list and handed back on drop.

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use super::device::Gpu;

/// A device vector of scalars (4 u64 words per scalar, Montgomery form) that
/// phase 2 computes in: this call's own allocation, freed on drop like any
/// `CudaSlice` (stream-ordered), or a pre-stage vector, which on drop goes
/// back to its device's idle list for the next phase 1 instead
/// ([`super::memory::DeviceMemory::keep_idle_stage`]; the memory stays mapped until the device goes
/// idle). Either way dropping it waits for nothing.
pub struct ScalarBuf {
    buf: Option<CudaSlice<u64>>,
    lender: Option<Arc<Gpu>>,
}

impl ScalarBuf {
    /// A buffer freed on drop.
    pub fn owned(buf: CudaSlice<u64>) -> Self {
        ScalarBuf { buf: Some(buf), lender: None }
    }

    /// A pre-stage vector handed back to `gpu`'s idle list on drop.
    pub fn staged(buf: CudaSlice<u64>, gpu: Arc<Gpu>) -> Self {
        ScalarBuf { buf: Some(buf), lender: Some(gpu) }
    }
}

impl std::ops::Deref for ScalarBuf {
    type Target = CudaSlice<u64>;
    fn deref(&self) -> &CudaSlice<u64> {
        self.buf.as_ref().expect("ScalarBuf holds its buffer until dropped")
    }
}

impl std::ops::DerefMut for ScalarBuf {
    fn deref_mut(&mut self) -> &mut CudaSlice<u64> {
        self.buf.as_mut().expect("ScalarBuf holds its buffer until dropped")
    }
}

impl Drop for ScalarBuf {
    fn drop(&mut self) {
        if let (Some(buf), Some(gpu)) = (self.buf.take(), self.lender.take()) {
            gpu.memory.keep_idle_stage(buf);
        }
    }
}

