//! Opening params files: the entry points of the loader ([`Srs::load`],
//! [`Srs::load_with`]), which give `crate::srs` the device its subgroup check
//! may run on, and the handle cache behind `create_SRS` ([`open`]). This
//! module sits above both `srs` and `gpu`, so neither imports the other's
//! loader-side code.

use std::path::Path;

use crate::config::CheckOn;
use crate::error::{Error, Result};
use crate::srs::{BucketSums, LoadOptions, LoadReport, Srs};

mod cache;

pub use cache::{evict, open};
#[cfg(any(test, feature = "tools"))]
pub use cache::{cached_entries, CACHE_CAPACITY};

impl Srs {
    /// Reads and validates a params file (see [`Srs::load_with`]), with
    /// `SUPRASEAL_C2_LOAD_THREADS` threads when it is set.
    ///
    /// Errors: `ENOENT` (missing), the OS errno or `EIO` (unreadable, a
    /// directory, truncated while being read), `EINVAL` (any malformed
    /// section or point, or a bad `SUPRASEAL_C2_LOAD_THREADS` or
    /// `SUPRASEAL_C2_LOAD_CHECK`; the message names the file, the section,
    /// the point and its byte offset), `ENODEV` (the check demanded on a GPU
    /// and none usable),
    /// `ENOMEM` (the points do not fit in host memory).
    pub fn load(path: &Path) -> Result<Srs> {
        let threads = crate::config::load_threads()?;
        Srs::load_with(path, &LoadOptions { threads, ..Default::default() }).map(|(srs, _)| srs)
    }

    /// Reads and validates a params file with the given threads and progress
    /// callback, and says how long each phase took. Every point is decoded
    /// canonically and checked on the curve; subgroup membership is checked
    /// per vector with the batched test of `srs::subgroup` (a bad point passes
    /// with probability below 2⁻¹²⁸), its bucket sums on GPU 0 where
    /// `check_on` allows and one is usable. Errors as [`Srs::load`].
    pub fn load_with(path: &Path, opts: &LoadOptions<'_>) -> Result<(Srs, LoadReport)> {
        crate::srs::Srs::load_file(path, opts, &checker)
    }
}

/// The device to check on, if any, for `on`. Errors: with `Gpu`, `ENODEV`
/// when no GPU is usable and the device's error when it cannot be opened.
fn checker(on: CheckOn, path: &Path) -> Result<Option<Box<dyn BucketSums>>> {
    match on {
        CheckOn::Cpu => Ok(None),
        CheckOn::Gpu => crate::gpu::subgroup_device()?.map(Some).ok_or_else(|| {
            Error::no_device(format!(
                "{}: the subgroup check was asked to run on the GPU (SUPRASEAL_C2_LOAD_CHECK=gpu or --check-on gpu) but no GPU is usable{}",
                path.display(),
                if crate::gpu::BUILT_WITH_KERNELS { "" } else { " (this build has no GPU kernels)" }
            ))
        }),
        CheckOn::Auto => crate::gpu::subgroup_device().or_else(|e| {
            tracing::warn!(target: "supraseal_c2::srs", error = %e.message, "GPU not usable for the params check: checking on the CPU");
            Ok(None)
        }),
    }
}
