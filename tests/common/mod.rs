//! Shared test helpers: cached small parameters and fresh randomness.
#![allow(dead_code)]

use std::path::PathBuf;

use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::kit::{self, Keys};

/// Where test parameters are cached (inside the build's target dir).
pub fn params_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("params")
}

/// A command running the CLI at `exe` with the tests' parameter cache
/// ([`params_dir`], through `SUPRASEAL_C2_CACHE`), and `HOME` and
/// `XDG_CACHE_HOME` pointed into the build's temp dir: no test writes into
/// the user's `~/.cache/supraseal-c2`, even one that forgets the cache.
pub fn cli_command(exe: &str) -> std::process::Command {
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-home");
    std::fs::create_dir_all(&home).expect("the tests' HOME");
    let mut cmd = std::process::Command::new(exe);
    cmd.env("SUPRASEAL_C2_CACHE", params_dir()).env("HOME", &home).env("XDG_CACHE_HOME", home.join(".cache"));
    cmd
}

pub fn keys(kind: Kind, k: u32) -> Keys {
    kit::keys(&params_dir(), kind, k).expect("test parameters")
}

/// A generator with a fresh seed, printed so a failure can be replayed
/// with `TEST_SEED=<seed>`.
pub fn rng() -> ChaCha20Rng {
    let seed = std::env::var("TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("TEST_SEED={seed}");
    ChaCha20Rng::seed_from_u64(seed)
}

pub fn random_scalars(rng: &mut impl Rng, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// A lock handle from `create_gpu_mutex`, shared by the threads of a test:
/// the library synchronises every use of one handle, so it may cross threads.
#[allow(dead_code)] // not every test binary that includes this module shares handles
pub struct Handle(pub *mut std::ffi::c_void);
// SAFETY: the handle is an opaque id the library looks up and synchronises.
unsafe impl Send for Handle {}
// SAFETY: as above.
unsafe impl Sync for Handle {}

/// The pipeline's switches that the lock and concurrency tests set.
pub const SWITCHES: [&str; 9] = [
    "SUPRASEAL_C2_LOCKS",
    "SUPRASEAL_C2_KEY_RESIDENT",
    "SUPRASEAL_C2_PRESTAGE",
    "SUPRASEAL_C2_PRESTAGE_PART",
    "SUPRASEAL_C2_PRESTAGE_RETRY",
    "SUPRASEAL_C2_COMPUTE_CACHE",
    "SUPRASEAL_C2_VRAM_LIMIT_MB",
    "SUPRASEAL_C2_VRAM_MARGIN_MB",
    "SUPRASEAL_C2_FAULT_ALLOC",
];

/// Sets exactly `vars` among [`SWITCHES`] (only while no call is in flight:
/// the library reads them at the start of every call).
pub fn switches(vars: &[(&str, &str)]) {
    for k in SWITCHES {
        std::env::remove_var(k);
    }
    for (k, v) in vars {
        std::env::set_var(k, v);
    }
}

/// A proof's 384 bytes, for comparing proofs.
pub fn bytes(p: &supraseal_c2::groth16_proof) -> Vec<u8> {
    // SAFETY: groth16_proof is #[repr(C)] plain data of 384 bytes.
    unsafe { std::slice::from_raw_parts(p as *const _ as *const u8, 384) }.to_vec()
}

/// Spans of one lock must not overlap: sorted by acquisition, each is
/// released before the next is acquired.
pub fn assert_one_holder(mut spans: Vec<supraseal_c2::Span>, what: &str) {
    spans.sort_by_key(|s| s.acquired);
    for w in spans.windows(2) {
        assert!(w[0].released <= w[1].acquired, "{what} held by two calls at once: {:?} then {:?}", w[0], w[1]);
    }
}
