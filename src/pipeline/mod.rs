//! One proving call on safe values: the backend is chosen ([`select`]), the
//! circuits go to one device or are spread over several ([`spread`]), each
//! group runs the phases of docs/ARCHITECTURE.md §5 ([`phases::prove`]): 0
//! pin and start the CPU thread, 1 pre-stage under the memory lock, 2
//! kernels under the compute lock, 3 unpin and join; and each group's
//! [`CallReport`] is logged and kept ([`report`]).
//!
//! [`start`] does everything up to the epilogue and returns a [`Pending`] that
//! owns what the epilogue needs (the key, r, s and the intermediate sums), so
//! the split form never reads the caller's buffers after start returns. The
//! raw pointers of the C ABI are turned into these values by
//! [`crate::abi::intake`].

mod checks;
pub mod phases;
pub mod report;
pub mod select;
pub mod spread;
pub mod verify;

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::Scalar;

use crate::abi::types::groth16_proof;
use crate::assignment::Batch;
use crate::config::Settings;
use crate::error::Result;
use crate::groth16::{epilogue, Intermediates};
use crate::locks::{self, LockHandle};
use crate::log::round1;
use crate::srs::Srs;

#[cfg(any(test, feature = "tools"))]
pub use crate::threads::cpu_threads;
pub use report::{record_reports, take_reports, CallReport};
pub use select::select;
#[cfg(any(test, feature = "tools"))]
pub use select::Selected;
pub use spread::spread_devices;
#[cfg(any(test, feature = "tools"))]
pub use spread::split_ranges;

/// Which lock handle a call uses.
pub enum Locks {
    /// The process-wide default handle of the device (a NULL `gpu_mtx`).
    Default,
    /// The caller's handle from `create_gpu_mutex`, held for the whole call
    /// so that a concurrent `destroy_gpu_mutex` cannot free it under the call.
    Caller(Arc<LockHandle>),
}

/// A validated proving call.
pub struct Call<'a> {
    /// The key, held until the proofs are written (split form included).
    pub key: Arc<Srs>,
    /// The circuits' witnesses, checked against `key`.
    pub batch: Batch<'a>,
    /// One r and one s per circuit (canonical scalars).
    pub r: Vec<Scalar>,
    pub s: Vec<Scalar>,
    pub locks: Locks,
    /// `gpu_index`: `None` (−1) lets the library choose and spread.
    pub gpu_index: Option<usize>,
    /// Time spent validating (phase 0's first part), for the report.
    pub validated: Duration,
}

/// Runs the call up to the epilogue.
pub fn start(call: Call<'_>) -> Result<Pending> {
    let Call { key, batch, r, s, locks, gpu_index, validated } = call;
    let settings = Settings::from_env()?;
    crate::gpu::tuning::set_sort_beside(settings.msm_sort_beside);
    // The public inputs (all but the constant one), copied: the split form
    // does not read the caller's buffers after start returns.
    let public_inputs = if settings.verify {
        verify::check_key(&key, batch.num_inputs())?;
        Some(batch.circuits.iter().map(|c| c.inp[1..].to_vec()).collect())
    } else {
        None
    };
    // Declared after `locks`, so dropped first: a GPU call names its locks
    // by address (`Backend::under_locks`) until its drop, while the caller's
    // handle cannot be freed and its address taken by another.
    let backend = select(gpu_index.unwrap_or(0), settings)?;
    // The CPU backend is one device: every gpu_index shares its default
    // handle (and no handle table grows with a large index).
    let device = if backend.is_gpu() { gpu_index.unwrap_or(0) } else { 0 };
    let gpus = if backend.is_gpu() { crate::gpu::device_count() } else { 1 };
    let devices = spread_devices(gpu_index, batch.circuits.len(), matches!(locks, Locks::Caller(_)), gpus);
    if devices.len() > 1 {
        // This backend never reaches phase 1: it must not count as a call the
        // pre-stage pool grows for while the per-device calls run.
        #[allow(clippy::drop_non_drop)] // the GPU backend has a Drop; a CPU-only build's backend does not
        drop(backend);
        let sums = spread::prove_spread(&key, &batch, &devices, settings, validated)?;
        return Ok(Pending { srs: key, r_s: r, s_s: s, sums, public_inputs });
    }
    let handle: &LockHandle = match &locks {
        Locks::Default => locks::default_handle(device),
        Locks::Caller(h) => h,
    };
    let sums = backend.prove(&key, &batch, handle, settings, device, validated)?;
    Ok(Pending { srs: key, r_s: r, s_s: s, sums, public_inputs })
}

/// A proof whose device/CPU work is done and whose epilogue is pending.
pub struct Pending {
    srs: Arc<Srs>,
    r_s: Vec<Scalar>,
    s_s: Vec<Scalar>,
    sums: Vec<Intermediates>,
    /// Each circuit's public inputs when `SUPRASEAL_C2_VERIFY` is on.
    public_inputs: Option<Vec<Vec<Scalar>>>,
}

impl Pending {
    /// Number of circuits (and proofs to write).
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether the pending proof holds no circuit (never true for a started call).
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Runs the epilogue (blinding with r and s) and writes one proof per
    /// circuit into `proofs`, which must hold exactly [`Pending::len`] slots.
    /// With `SUPRASEAL_C2_VERIFY` on (when the call started), every proof is
    /// verified first. Errors: `EINVAL` for a wrong slot count, `EBADMSG`
    /// naming the first circuit whose proof does not verify; on error no
    /// slot is written.
    pub fn finish(self, proofs: &mut [MaybeUninit<groth16_proof>]) -> Result<()> {
        if proofs.len() != self.len() {
            return Err(crate::error::Error::invalid(format!(
                "proofs holds {} slots but the call has {} circuits",
                proofs.len(),
                self.len()
            )));
        }
        let t = Instant::now();
        let points: Vec<_> = self.sums.iter().enumerate().map(|(i, m)| epilogue::points(&self.srs, m, self.r_s[i], self.s_s[i])).collect();
        let epilogue_ms = round1(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        if let Some(inputs) = &self.public_inputs {
            // The circuits in parallel, on the library's pool (a host's
            // synthesis may fill the global one); the lowest failing
            // circuit is named.
            let verdicts: Vec<Result<()>> = crate::threads::in_cpu_pool(|| {
                use rayon::prelude::*;
                points.par_iter().zip(inputs).enumerate().map(|(i, (p, inputs))| verify::verify(&self.srs, i, p, inputs)).collect()
            });
            verdicts.into_iter().collect::<Result<Vec<()>>>()?;
        }
        for (p, slot) in points.into_iter().zip(proofs.iter_mut()) {
            slot.write(p.into());
        }
        let verify_ms = self.public_inputs.as_ref().map(|_| round1(t.elapsed().as_secs_f64() * 1e3));
        tracing::info!(circuits = self.len(), epilogue_ms, verify_ms, "epilogue done");
        Ok(())
    }
}
