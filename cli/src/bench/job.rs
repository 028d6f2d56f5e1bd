//! What the bench proves: the key handle of the library under test and the
//! per-worker witnesses, loaded from a synthetic shape or a real circuit, and
//! the blinders r, s of each (worker, partition).

use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::host::{gib, memory_available, peak_rss, reset_peak_rss};
use super::BenchArgs;
use crate::collector::Witness;
use crate::ffi::{self, Params};
use crate::{kit, synthetic, units};

/// A params handle of the library under test.
pub(super) enum Key<'a> {
    Ours(Params),
    Upstream(crate::upstream::UpstreamSrs<'a>),
}

/// What the workers prove: a key handle and per-worker witnesses.
pub(super) struct Job<'a> {
    pub(super) key: Key<'a>,
    pub(super) vk: Option<VerifyingKey<Bls12>>,
    /// `witnesses[worker][i]` with its public inputs (real circuits only).
    pub(super) witnesses: Vec<Vec<(Witness, Vec<Scalar>)>>,
}

impl Job<'_> {
    pub(super) fn prove(&self, w: &[Witness], r: &[Scalar], s: &[Scalar], handle: *mut std::ffi::c_void) -> Result<Vec<supraseal_c2::groth16_proof>, String> {
        match &self.key {
            Key::Ours(p) => ffi::prove(p, w, r, s, handle, 0).map_err(|e| e.to_string()),
            Key::Upstream(u) => u.prove(&w.iter().collect::<Vec<_>>(), r, s),
        }
    }
}

fn open_key<'a>(args: &BenchArgs, upstream: Option<&'a crate::upstream::Upstream>, path: &std::path::Path) -> Result<Key<'a>> {
    let t = Instant::now();
    reset_peak_rss();
    // Upstream's create_SRS returns before its points are decoded: the load
    // ends when they are (its first proof would otherwise wait for them).
    let (key, returned) = match upstream {
        Some(u) => u.open_and_wait(path).map(|(k, l)| (Key::Upstream(k), format!(" (create_SRS returned at {:.1} s; {})", l.returned_s, l.how())))?,
        None => (Key::Ours(Params::open(path, true).map_err(|e| anyhow::anyhow!("{e}"))?), String::new()),
    };
    let line = format!(
        "params load ({:?}): {} usable in {:.1} s{returned}, peak RSS during the load {:.2} GiB",
        args.lib,
        path.display(),
        t.elapsed().as_secs_f64(),
        gib(peak_rss())
    );
    println!("{line}");
    Ok(key)
}

pub(super) fn load<'a>(args: &BenchArgs, max_workers: usize, upstream: Option<&'a crate::upstream::Upstream>) -> Result<Job<'a>> {
    let per = (args.witnesses as usize).clamp(1, args.partitions.max(1));
    let shape = match (&args.shape, args.synthetic) {
        (Some(_), Some(_)) => bail!("give --shape or --synthetic-log-domain, not both"),
        (Some(name), None) => Some(synthetic::Shape::named(name).with_context(|| format!("--shape {name:?}: expected porep-32g or 2^D with D in 10..=27"))?),
        (None, Some(d)) => Some(synthetic::Shape::new(d)),
        (None, None) => None,
    };
    if let Some(shape) = shape {
        ensure!(args.circuit.is_none() && args.log_constraints.is_none(), "--shape/--synthetic-log-domain excludes --circuit/--log-constraints");
        ensure!(upstream.is_none() || args.params.is_some(), "--lib upstream needs --params FILE (from `params synth`)");
        // Before any of it is allocated: a host without the memory would
        // otherwise abort in an allocation, seconds or minutes in.
        let need = MemoryNeed::of(&shape, max_workers * per, upstream.is_none() && cpu_backend());
        let available = memory_available();
        if let Some(why) = need.refusal(&shape.name, available) {
            bail!("{why}");
        }
        eprintln!(
            "host memory: {} needs at least {}{}",
            shape.name,
            need.describe(),
            available.map_or(String::new(), |(b, from)| format!("; {} available ({from})", units::bytes(b)))
        );
        let t = Instant::now();
        eprintln!("building the synthetic {} witnesses ({} workers x {per}) ...", shape.name, max_workers);
        let base = synthetic::witness(&shape, args.seed);
        // Every worker owns its witnesses' a/b/c (they are pinned per call);
        // they differ in their a/b/c values.
        let total = max_workers * per;
        let mut base = Some(base);
        let mut witnesses: Vec<Vec<(Witness, Vec<Scalar>)>> = Vec::new();
        for w in 0..max_workers {
            let mut row = Vec::new();
            for i in 0..per {
                let last = w * per + i + 1 == total;
                let mut wi = if last { base.take().expect("base witness") } else { base.as_ref().expect("base witness").clone() };
                let mut rng = ChaCha20Rng::seed_from_u64(args.seed ^ ((w * 1000 + i) as u64 + 1));
                for v in [&mut wi.a, &mut wi.b, &mut wi.c] {
                    v[0] = Scalar::random(&mut rng);
                }
                row.push((wi, Vec::new()));
            }
            witnesses.push(row);
        }
        eprintln!("synthetic {} witnesses ready in {:.1} s", shape.name, t.elapsed().as_secs_f64());
        let key = match &args.params {
            Some(path) => {
                synthetic::check_params_file(&shape, args.seed, path)?;
                open_key(args, upstream, path)?
            }
            None => {
                let t = Instant::now();
                let key = synthetic::key(&shape, args.seed);
                println!("synthetic {} key built in memory in {:.1} s", shape.name, t.elapsed().as_secs_f64());
                Key::Ours(unsafe { Params::from_raw(supraseal_c2::SRS::from_key(key).into_raw()) })
            }
        };
        return Ok(Job { key, vk: None, witnesses });
    }
    let (Some(kind), Some(k)) = (args.circuit, args.log_constraints) else {
        bail!("give --shape NAME, --synthetic-log-domain D, or --circuit and --log-constraints");
    };
    let dir = crate::params::cache_dir();
    if crate::params::params_path(&dir, kind, k).exists() {
        eprintln!("parameters for {}-k{k}: from the cache ({})", kind.name(), dir.display());
    } else {
        eprintln!("parameters for {}-k{k}: not in the cache ({}), generating them with bellperson ...", kind.name(), dir.display());
    }
    let keys = kit::keys(&dir, kind, k)?;
    let key = open_key(args, upstream, &keys.path)?;
    let witnesses = (0..max_workers)
        .map(|w| kit::witnesses(kind, k, per, &mut ChaCha20Rng::seed_from_u64(args.seed + w as u64)))
        .collect::<Result<_>>()?;
    Ok(Job { key, vk: Some(keys.vk), witnesses })
}

/// Whether our library proves on the CPU: asked for, or no usable GPU.
fn cpu_backend() -> bool {
    let asked = std::env::var("SUPRASEAL_C2_BACKEND").unwrap_or_default();
    asked.trim().eq_ignore_ascii_case("cpu") || !supraseal_c2::BUILT_WITH_KERNELS || supraseal_c2::gpu_device_count() == 0
}

/// The host memory a synthetic run takes at least, in bytes: the key, every
/// worker's witnesses (all built before the first proof), and on the CPU
/// backend one quotient's buffers (calls compute one at a time, under the
/// compute lock). The prover's other working memory (split-MSM tails, MSM
/// scratch) and the process itself come on top: porep-32g on the GPU with 3
/// witnesses peaked at 96.5 GiB of RSS against 90.8 GiB here (BENCHMARKS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MemoryNeed {
    pub(super) key: u64,
    pub(super) witness: u64,
    pub(super) witnesses: usize,
    pub(super) quotient: u64,
}

impl MemoryNeed {
    pub(super) fn of(shape: &synthetic::Shape, witnesses: usize, cpu: bool) -> MemoryNeed {
        MemoryNeed { key: shape.key_bytes(), witness: shape.witness_bytes(), witnesses, quotient: if cpu { shape.cpu_quotient_bytes() } else { 0 } }
    }

    pub(super) fn total(&self) -> u64 {
        self.key + self.witness * self.witnesses as u64 + self.quotient
    }

    /// `90.79 GiB (the key 44.12 GiB + 3 witnesses x 15.56 GiB)`.
    pub(super) fn describe(&self) -> String {
        format!(
            "{} (the key {} + {} witness{} x {}{})",
            units::bytes(self.total()),
            units::bytes(self.key),
            self.witnesses,
            if self.witnesses == 1 { "" } else { "es" },
            units::bytes(self.witness),
            if self.quotient > 0 { format!(" + the CPU prover's quotient buffers {}", units::bytes(self.quotient)) } else { String::new() }
        )
    }

    /// Why the run cannot start with `available` bytes (and where that
    /// figure comes from), or `None` when it fits or nothing is known.
    pub(super) fn refusal(&self, shape: &str, available: Option<(u64, &str)>) -> Option<String> {
        let (have, from) = available?;
        (self.total() > have).then(|| {
            format!(
                "bench --shape {shape} needs at least {} of host memory, and {} are available ({from}): \
                 use fewer witnesses (--workers, --witnesses: every worker builds min(--witnesses, --partitions) of them), \
                 a smaller --shape, or a host with more memory",
                self.describe(),
                units::bytes(have)
            )
        })
    }
}

/// r, s of (worker, partition): the same in every mode.
pub(super) fn blinders(seed: u64, worker: usize, p: usize) -> (Scalar, Scalar) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9) ^ ((worker as u64) << 32 | p as u64));
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_larger_than_the_available_memory_is_refused_naming_both() {
        let shape = synthetic::Shape::porep_32g();
        let need = MemoryNeed::of(&shape, 3, false);
        // BENCHMARKS.md's porep-32g rows: 3 witnesses and the key.
        assert_eq!(need.describe(), "90.79 GiB (the key 44.12 GiB + 3 witnesses x 15.56 GiB)");
        let why = need.refusal("porep-32g", Some((22 << 30, "MemAvailable in /proc/meminfo"))).expect("refused");
        assert!(why.contains("needs at least 90.79 GiB") && why.contains("22.00 GiB are available (MemAvailable"), "{why}");
        assert_eq!(need.refusal("porep-32g", Some((128 << 30, "MemAvailable"))), None);
        assert_eq!(need.refusal("porep-32g", None), None, "nothing known: not refused");
        let cpu = MemoryNeed::of(&shape, 1, true);
        assert_eq!(cpu.total(), shape.key_bytes() + shape.witness_bytes() + (96u64 << 27));
        assert!(cpu.describe().contains("1 witness x") && cpu.describe().contains("quotient buffers 12.00 GiB"), "{}", cpu.describe());
    }
}
