//! The params cache behind `create_SRS(path, cache = true)`: up to
//! [`CACHE_CAPACITY`] loaded keys, each filed under its file's identity, and
//! one load at a time per file (a second thread opening the same path waits
//! for the first one's key).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::srs::Srs;
use crate::error::Result;

/// How many loaded keys the cache keeps (the reference keeps 4).
pub const CACHE_CAPACITY: usize = 4;

/// What a cached key was loaded from: the resolved path and the file's
/// identity, so a file replaced or rewritten in place is loaded again.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    /// The inode change time: a rewrite that restores the mtime (`touch -r`,
    /// `cp -p`) still changes it.
    ctime_ns: i128,
}

impl FileKey {
    /// `None` when the file cannot be stat'ed (the load reports why).
    fn of(path: &Path) -> Option<FileKey> {
        use std::os::unix::fs::MetadataExt;
        let resolved = std::fs::canonicalize(path).ok()?;
        let m = std::fs::metadata(&resolved).ok()?;
        Some(FileKey {
            path: resolved,
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            ctime_ns: m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
        })
    }
}

/// Most recently used first.
static CACHE: Mutex<Vec<(FileKey, Arc<Srs>)>> = Mutex::new(Vec::new());

/// A load in progress: every caller that asks for the same file meanwhile
/// waits for it instead of loading the file again.
type InFlight = Arc<std::sync::OnceLock<Result<Arc<Srs>>>>;
static LOADING: Mutex<Vec<(FileKey, InFlight)>> = Mutex::new(Vec::new());

/// Returns the key for `path`: from the LRU cache when `cache` is true (loading
/// and inserting it on a miss), freshly loaded otherwise. Entries are keyed by
/// the resolved path and the file's identity (device, inode, size,
/// modification time): a file replaced or rewritten after it was cached is
/// loaded again. Two threads that ask for an uncached file at once share one
/// load. Errors as [`Srs::load`].
pub fn open(path: &Path, cache: bool) -> Result<Arc<Srs>> {
    // Uncached, or a file that cannot be stat'ed (the load says why).
    let Some(key) = cache.then(|| FileKey::of(path)).flatten() else {
        let srs = Srs::load(path)?;
        if let Ok(resolved) = std::fs::canonicalize(path) {
            let _ = srs.resolved.set(resolved);
        }
        return Ok(Arc::new(srs));
    };
    // The cache is looked up under the in-flight lock: a loader publishes its
    // key in the cache before it drops its in-flight entry, so a caller never
    // misses both and loads the file a second time.
    let flight: InFlight = {
        let mut loading = LOADING.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = lookup(&key) {
            return Ok(hit);
        }
        match loading.iter().find(|(k, _)| *k == key) {
            Some((_, f)) => f.clone(),
            None => {
                let f: InFlight = Default::default();
                loading.push((key.clone(), f.clone()));
                f
            }
        }
    };
    // Load outside both locks: a 47 GB file takes minutes and other paths
    // must stay usable meanwhile.
    let result = flight.get_or_init(|| {
        let loaded = Srs::load(path).map(|srs| {
            let _ = srs.resolved.set(key.path.clone());
            Arc::new(srs)
        });
        if let Ok(srs) = &loaded {
            let mut entries = CACHE.lock().unwrap_or_else(|p| p.into_inner());
            entries.retain(|(k, _)| k.path != key.path);
            entries.insert(0, (key.clone(), srs.clone()));
            entries.truncate(CACHE_CAPACITY);
        }
        LOADING.lock().unwrap_or_else(|p| p.into_inner()).retain(|(k, f)| !(k == &key && Arc::ptr_eq(f, &flight)));
        loaded
    });
    result.clone()
}

fn lookup(key: &FileKey) -> Option<Arc<Srs>> {
    let mut entries = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let i = entries.iter().position(|(k, _)| k == key)?;
    let hit = entries.remove(i);
    let srs = hit.1.clone();
    entries.insert(0, hit);
    Some(srs)
}

/// Drops the cache entry for the file `srs` was loaded from (the reference's
/// behaviour: any handle of that file evicts it, cached or not), found by
/// the path resolved when it was opened, so a `chdir` or a retargeted symlink
/// since then does not matter; and the entry holding `srs` itself, if any.
/// Handles already given out stay valid (they are reference counted).
pub fn evict(srs: &Srs) {
    let mut entries = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let resolved = srs.resolved.get();
    entries.retain(|(k, s)| !(std::ptr::eq(Arc::as_ptr(s), srs) || Some(&k.path) == resolved));
}

/// Number of entries currently cached (for tests and diagnostics).
#[cfg(any(test, feature = "tools"))]
pub fn cached_entries() -> usize {
    CACHE.lock().unwrap_or_else(|p| p.into_inner()).len()
}
