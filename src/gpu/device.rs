//! One GPU as the backend sees it: a cudarc context, a stream and the kernel
//! module loaded from the fatbin embedded at build time. Device buffers are
//! cudarc `CudaSlice`s, which free themselves on drop (every path, errors
//! included), so a call never leaves VRAM behind.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};

/// The kernels compiled by build.rs from cuda/kernels.cu.
static FATBIN: &[u8] = include_bytes!(env!("SUPRASEAL_C2_FATBIN"));

/// Kernel names in the module.
const KERNELS: &[&str] = &[
    "fr_powers",
    "fr_mul_powers",
    "fr_scale",
    "fr_bit_reverse",
    "fr_ntt_stage",
    "fr_quotient_pointwise",
    "fr_from_montgomery",
    "g1_batch_add",
    "g1_reduce_groups",
    "msm_histogram",
    "msm_scan",
    "msm_scatter",
    "msm_accumulate",
    "msm_fixup",
    "msm_bucket_segments",
];

/// Converts a driver error into our error: the CUDA error number as code and
/// the call that failed in the message.
pub fn cuda_err(call: &str) -> impl FnOnce(DriverError) -> Error + '_ {
    move |e: DriverError| Error::new(e.0 as i32, format!("CUDA error in {call}: {e:?}"))
}

/// A loaded device.
pub struct Gpu {
    pub ordinal: usize,
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    funcs: HashMap<&'static str, CudaFunction>,
}

impl Gpu {
    fn open(ordinal: usize) -> Result<Gpu> {
        let ctx = CudaContext::new(ordinal).map_err(cuda_err("cuCtxCreate"))?;
        let stream = ctx.new_stream().map_err(cuda_err("cuStreamCreate"))?;
        let module = ctx.load_module(Ptx::from_binary(FATBIN.to_vec())).map_err(cuda_err("cuModuleLoadData"))?;
        let mut funcs = HashMap::new();
        for &k in KERNELS {
            funcs.insert(k, module.load_function(k).map_err(cuda_err(k))?);
        }
        Ok(Gpu { ordinal, ctx, stream, _module: module, funcs })
    }

    /// The kernel `name` (one of `KERNELS`).
    pub fn kernel(&self, name: &str) -> &CudaFunction {
        &self.funcs[name]
    }

    /// Copies `host` to a new device buffer.
    pub fn upload<T: cudarc::driver::DeviceRepr>(&self, host: &[T], what: &str) -> Result<CudaSlice<T>> {
        self.stream.clone_htod(host).map_err(cuda_err(what))
    }

    /// A zeroed device buffer of `n` elements.
    pub fn zeros<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros(n.max(1)).map_err(cuda_err(what))
    }

    /// Copies a device buffer back.
    pub fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(&self, d: &CudaSlice<T>, what: &str) -> Result<Vec<T>> {
        self.stream.clone_dtoh(d).map_err(cuda_err(what))
    }

    /// Free and total device memory in bytes.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(cuda_err("cuMemGetInfo"))
    }
}

/// A 1-D launch of `n` threads in blocks of 256.
pub fn grid(n: usize) -> LaunchConfig {
    let threads = 256u32;
    LaunchConfig { grid_dim: ((n.max(1)).div_ceil(threads as usize) as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
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
