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

use super::host::{gib, peak_rss, reset_peak_rss};
use super::BenchArgs;
use crate::collector::Witness;
use crate::ffi::{self, Params};
use crate::{kit, synthetic};

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
    let keys = kit::keys(&crate::params::cache_dir(), kind, k)?;
    let key = open_key(args, upstream, &keys.path)?;
    let witnesses = (0..max_workers)
        .map(|w| kit::witnesses(kind, k, per, &mut ChaCha20Rng::seed_from_u64(args.seed + w as u64)))
        .collect::<Result<_>>()?;
    Ok(Job { key, vk: Some(keys.vk), witnesses })
}

/// r, s of (worker, partition): the same in every mode.
pub(super) fn blinders(seed: u64, worker: usize, p: usize) -> (Scalar, Scalar) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9) ^ ((worker as u64) << 32 | p as u64));
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}
