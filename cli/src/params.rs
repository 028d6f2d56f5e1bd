//! Groth16 parameters for the tool's circuits: generated with bellperson on
//! first use, written with bellperson's own writer as a `.params` file, and
//! cached by circuit and size.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bellperson::groth16::{generate_random_parameters, VerifyingKey};
use blstrs::Bls12;
use rand::SeedableRng;

use crate::circuits::{Instance, Kind};

/// The cache folder: `$SUPRASEAL_C2_CACHE`, else `$XDG_CACHE_HOME/supraseal-c2`,
/// else `$HOME/.cache/supraseal-c2`, else the system temp dir.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SUPRASEAL_C2_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("supraseal-c2")
}

/// Version of the circuits' shapes: bumped whenever a circuit changes, so a
/// cached file of an older shape is never used for the new one.
pub const CIRCUIT_VERSION: u32 = 2;

/// Path of the cached params file for a circuit shape inside `dir`:
/// `<circuit>-k<K>-v<CIRCUIT_VERSION>.params`.
pub fn params_path(dir: &Path, kind: Kind, log_constraints: u32) -> PathBuf {
    dir.join(format!("{}-k{}-v{CIRCUIT_VERSION}.params", kind.name(), log_constraints))
}

/// Returns the params file for the shape, generating it first if missing.
/// Generation is atomic (write to a temp file, then rename). The second value
/// is true when the file was generated now.
pub fn ensure(dir: &Path, kind: Kind, log_constraints: u32, seed: u64) -> Result<(PathBuf, bool)> {
    let path = params_path(dir, kind, log_constraints);
    if path.exists() {
        return Ok((path, false));
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed ^ 0x7061_7261_6d73);
    let params = generate_random_parameters::<Bls12, _, _>(Instance::shape(kind, log_constraints), &mut rng)
        .context("bellperson parameter generation")?;
    // A private temp name (process and thread), then a hard link, which fails
    // if another generator got there first: the first file wins and every
    // reader sees one consistent parameter set (proving and verifying key).
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("params.tmp{}-{unique}", std::process::id()));
    {
        let mut w = BufWriter::new(File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?);
        params.write(&mut w).context("writing params")?;
        std::io::Write::flush(&mut w)?;
    }
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok((path, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok((path, false)),
        Err(e) => Err(e).with_context(|| format!("publishing {}", path.display())),
    }
}

/// Reads the verifying key from the start of a params file.
pub fn read_vk(path: &Path) -> Result<VerifyingKey<Bls12>> {
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    VerifyingKey::read(BufReader::new(f)).with_context(|| format!("reading the verifying key of {}", path.display()))
}
