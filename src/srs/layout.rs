//! The params file's layout: the single points and the section counts, read
//! and checked against the file's length before anything is allocated, and
//! errors located by section and byte offset.

use std::path::Path;

use blstrs::{G1Affine, G2Affine};

use super::source::Source;
use super::subgroup::{self, Key, Subgroup};
use super::{decode_g1, decode_g2, G1_BYTES, G2_BYTES};
use crate::error::{Error, Result};

/// One length-prefixed vector of the file.
pub(super) struct Section {
    pub(super) name: &'static str,
    /// Offset of its u32 count.
    pub(super) count_at: u64,
    /// Offset of its first point.
    pub(super) start: u64,
    pub(super) count: usize,
}

/// An `EINVAL` error naming the file, the section and the byte offset.
pub(super) fn located(path: &Path, section: &str, offset: u64, what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{}: section {section} at byte offset {offset}: {what}", path.display()))
}

/// Reads the single points and the section counts; checks every length
/// against the file before anything is allocated.
pub(super) struct Layout<'a, S: Source> {
    pub(super) src: &'a S,
    pub(super) path: &'a Path,
    pub(super) pos: u64,
}

impl<S: Source> Layout<'_, S> {
    fn take(&mut self, section: &str, len: usize) -> Result<Vec<u8>> {
        let left = self.src.len() - self.pos;
        if len as u64 > left {
            return Err(located(self.path, section, self.pos, format!("file truncated: needs {len} bytes, only {left} left")));
        }
        let mut buf = vec![0u8; len];
        self.src.read_at(&mut buf, self.pos)?;
        self.pos += len as u64;
        Ok(buf)
    }

    pub(super) fn g1(&mut self, section: &str) -> Result<G1Affine> {
        let at = self.pos;
        let b = self.take(section, G1_BYTES)?;
        decode_g1(&b).map_err(|why| located(self.path, section, at, why))
    }

    pub(super) fn g2(&mut self, section: &str) -> Result<G2Affine> {
        let at = self.pos;
        let b = self.take(section, G2_BYTES)?;
        decode_g2(&b).map_err(|why| located(self.path, section, at, why))
    }

    pub(super) fn section(&mut self, name: &'static str, point_bytes: usize) -> Result<Section> {
        let count_at = self.pos;
        let raw = self.take(name, 4)?;
        let count = u32::from_be_bytes(raw.try_into().expect("4 bytes")) as usize;
        let need = (count * point_bytes) as u64; // at most 2^32 * 192: no overflow
        let left = self.src.len() - self.pos;
        if need > left {
            return Err(located(self.path, name, count_at, format!("count {count} needs {need} bytes of points, only {left} left in the file")));
        }
        let start = self.pos;
        self.pos += need;
        Ok(Section { name, count_at, start, count })
    }
}

/// The subgroup check of one section's decoded `points`, its error naming
/// the bad point and its byte offset.
pub(super) fn check<C: Subgroup>(path: &Path, s: &Section, points: &[C::Affine], point_bytes: usize, key: &Key, section: u64) -> Result<()> {
    subgroup::check::<C>(points, key, section).map_err(|k| {
        located(path, s.name, s.start + (k * point_bytes) as u64, format!("point {k}: point is not in the prime-order subgroup"))
    })
}
