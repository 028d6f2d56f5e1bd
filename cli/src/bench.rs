//! `supraseal-c2 bench`: W workers sharing one GPU (one lock handle), each
//! proving P partitions (one-circuit calls through the C ABI), under each lock
//! mode of DESIGN §5. Reports partitions/s, GPU busy fraction (compute-lock
//! held time / wall), pre-stage success and lock wait/hold percentiles, from
//! the library's per-call reports.
//!
//! Two inputs: `--synthetic-log-domain D` (a synthetic 2^D key and witness:
//! real work, proofs not verifiable) or a real circuit (`--circuit`,
//! `--log-constraints`), where every proof is verified with bellperson and
//! proofs of the same (witness, r, s) must be byte-identical across modes.

use std::collections::HashMap;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use supraseal_c2::pipeline::{self, CallReport};

use crate::circuits::Kind;
use crate::collector::Witness;
use crate::ffi::{self, Params};
use crate::{kit, synthetic};

/// One lock/staging configuration, set through the library's environment switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `SUPRASEAL_C2_LOCKS=single`.
    Single,
    /// Two locks, pre-staging on (the default).
    Two,
    /// Two locks, `SUPRASEAL_C2_PRESTAGE=off` (always the fallback path).
    Fallback,
    /// Two locks with `SUPRASEAL_C2_VRAM_LIMIT_MB=<MiB>`.
    TwoLimit(u64),
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Mode, String> {
        match s {
            "single" => Ok(Mode::Single),
            "two" => Ok(Mode::Two),
            "fallback" => Ok(Mode::Fallback),
            _ => s
                .strip_prefix("two-limit=")
                .and_then(|m| m.parse().ok())
                .map(Mode::TwoLimit)
                .ok_or_else(|| format!("{s:?}: expected single, two, fallback or two-limit=<MiB>")),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Single => write!(f, "single"),
            Mode::Two => write!(f, "two"),
            Mode::Fallback => write!(f, "fallback"),
            Mode::TwoLimit(m) => write!(f, "two-limit={m}"),
        }
    }
}

impl Mode {
    /// Sets the library's switches for this mode. Only called between runs,
    /// while no proving call is in flight (the library reads them per call).
    fn apply(&self) {
        for k in ["SUPRASEAL_C2_LOCKS", "SUPRASEAL_C2_PRESTAGE", "SUPRASEAL_C2_VRAM_LIMIT_MB"] {
            std::env::remove_var(k);
        }
        match self {
            Mode::Single => std::env::set_var("SUPRASEAL_C2_LOCKS", "single"),
            Mode::Two => {}
            Mode::Fallback => std::env::set_var("SUPRASEAL_C2_PRESTAGE", "off"),
            Mode::TwoLimit(m) => std::env::set_var("SUPRASEAL_C2_VRAM_LIMIT_MB", m.to_string()),
        }
    }
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Synthetic key and witness with a domain of 2^D elements (no verification).
    #[arg(long = "synthetic-log-domain", value_name = "D", value_parser = clap::value_parser!(u32).range(10..=27))]
    pub synthetic: Option<u32>,
    /// Real circuit (with --log-constraints): every proof is verified.
    #[arg(long, value_enum)]
    pub circuit: Option<Kind>,
    /// Real circuit size, about 2^K constraints.
    #[arg(long = "log-constraints", value_name = "K", value_parser = clap::value_parser!(u32).range(8..=27))]
    pub log_constraints: Option<u32>,
    /// Worker counts to run (comma-separated, each 1..=64).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub workers: Vec<usize>,
    /// Partitions (one-circuit proving calls) per worker.
    #[arg(long, default_value_t = 4)]
    pub partitions: usize,
    /// Modes (comma-separated): single, two, fallback, two-limit=<MiB>.
    #[arg(long, value_delimiter = ',', default_value = "single,two")]
    pub modes: Vec<Mode>,
    /// Distinct witnesses per worker (cycled over its partitions; at most --partitions are made).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub witnesses: u64,
    /// Seed for witnesses and r, s.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// What the workers prove: a key handle and per-worker witnesses.
struct Job {
    params: Params,
    vk: Option<VerifyingKey<Bls12>>,
    /// `witnesses[worker][i]` with its public inputs (real circuits only).
    witnesses: Vec<Vec<(Witness, Vec<Scalar>)>>,
}

fn load(args: &BenchArgs, max_workers: usize) -> Result<Job> {
    let per = (args.witnesses as usize).clamp(1, args.partitions.max(1));
    if let Some(d) = args.synthetic {
        ensure!(args.circuit.is_none() && args.log_constraints.is_none(), "--synthetic-log-domain excludes --circuit/--log-constraints");
        let t = Instant::now();
        let shape = synthetic::Shape::new(d);
        let base = synthetic::witness(shape, args.seed);
        let key = synthetic::key(shape, &base, args.seed);
        // Every worker owns its witnesses' a/b/c (they are pinned per call);
        // they differ in their a/b/c values.
        let witnesses = (0..max_workers)
            .map(|w| {
                (0..per)
                    .map(|i| {
                        let mut wi = base.clone();
                        let mut rng = ChaCha20Rng::seed_from_u64(args.seed ^ ((w * 1000 + i) as u64 + 1));
                        for v in [&mut wi.a, &mut wi.b, &mut wi.c] {
                            v[0] = Scalar::random(&mut rng);
                        }
                        (wi, Vec::new())
                    })
                    .collect()
            })
            .collect();
        eprintln!("synthetic 2^{d} key and witnesses ready in {:.1} s", t.elapsed().as_secs_f64());
        let params = unsafe { Params::from_raw(supraseal_c2::SRS::from_key(key).into_raw()) };
        return Ok(Job { params, vk: None, witnesses });
    }
    let (Some(kind), Some(k)) = (args.circuit, args.log_constraints) else {
        bail!("give --synthetic-log-domain D, or --circuit and --log-constraints");
    };
    let keys = kit::keys(&crate::params::cache_dir(), kind, k)?;
    let params = Params::open(&keys.path, true).map_err(|e| anyhow::anyhow!("create_SRS: {e}"))?;
    let witnesses = (0..max_workers)
        .map(|w| kit::witnesses(kind, k, per, &mut ChaCha20Rng::seed_from_u64(args.seed + w as u64)))
        .collect::<Result<_>>()?;
    Ok(Job { params, vk: Some(keys.vk), witnesses })
}

/// r, s of (worker, partition): the same in every mode.
fn blinders(seed: u64, worker: usize, p: usize) -> (Scalar, Scalar) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9) ^ ((worker as u64) << 32 | p as u64));
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

struct Handle(*mut std::ffi::c_void);
// SAFETY: a lock handle is made to be shared by threads (DESIGN §5).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// Per-run outcome.
struct Run {
    wall: Duration,
    reports: Vec<CallReport>,
    failures: Vec<String>,
    unverified: usize,
}

fn run(job: &Job, args: &BenchArgs, workers: usize, proofs: &Mutex<HashMap<(usize, usize), Vec<u8>>>) -> Result<Run> {
    let handle = Handle(unsafe { ffi::create_gpu_mutex() });
    let barrier = Barrier::new(workers + 1);
    let failures = Mutex::new(Vec::new());
    let unverified = Mutex::new(0usize);
    pipeline::record_reports(true);
    let wall = std::thread::scope(|scope| {
        for w in 0..workers {
            let (handle, barrier, failures, unverified) = (&handle, &barrier, &failures, &unverified);
            scope.spawn(move || {
                barrier.wait();
                for p in 0..args.partitions {
                    let (wit, inputs) = &job.witnesses[w][p % job.witnesses[w].len()];
                    let (r, s) = blinders(args.seed, w, p);
                    match ffi::prove(&job.params, std::slice::from_ref(wit), &[r], &[s], handle.0, 0) {
                        Ok(out) => {
                            let bytes = proof_bytes(&out[0]);
                            if let Some(vk) = &job.vk {
                                if !ffi::verify(vk, &out[0], inputs) {
                                    *unverified.lock().unwrap() += 1;
                                }
                                let mut seen = proofs.lock().unwrap();
                                match seen.get(&(w, p)) {
                                    Some(prev) if *prev != bytes => {
                                        failures.lock().unwrap().push(format!("worker {w} partition {p}: proof bytes differ from an earlier mode"))
                                    }
                                    Some(_) => {}
                                    None => {
                                        seen.insert((w, p), bytes);
                                    }
                                }
                            }
                        }
                        Err(e) => failures.lock().unwrap().push(format!("worker {w} partition {p}: {e}")),
                    }
                }
            });
        }
        barrier.wait();
        // The scope joins every worker before returning.
        Instant::now()
    })
    .elapsed();
    let reports = pipeline::take_reports();
    pipeline::record_reports(false);
    unsafe { ffi::destroy_gpu_mutex(handle.0) };
    Ok(Run { wall, reports, failures: failures.into_inner().unwrap(), unverified: unverified.into_inner().unwrap() })
}

/// The 384 bytes of a proof as the C caller receives them.
fn proof_bytes(p: &supraseal_c2::groth16_proof) -> Vec<u8> {
    // SAFETY: groth16_proof is repr(C) plain data (u64 limbs), 384 bytes, no padding.
    unsafe { std::slice::from_raw_parts(p as *const _ as *const u8, std::mem::size_of_val(p)) }.to_vec()
}

/// Whether the memory-lock hold `m` of call `c` overlapped the compute-lock
/// hold of another call in `all`.
fn overlaps_compute(all: &[CallReport], c: &CallReport, m: supraseal_c2::locks::Span) -> bool {
    all.iter()
        .filter(|o| !std::ptr::eq(*o, c))
        .filter_map(|o| o.compute)
        .any(|k| k.acquired < m.released && m.acquired < k.released)
}

/// (p50, p99) in ms of `v` (nearest rank).
fn pct(mut v: Vec<Duration>) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort();
    let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1].as_secs_f64() * 1e3;
    (at(0.50), at(0.99))
}

/// Runs every mode × worker count and prints one table row each.
pub fn bench(args: BenchArgs) -> Result<bool> {
    let max_w = args.workers.iter().copied().max().context("--workers is empty")?;
    ensure!(args.workers.iter().all(|&w| (1..=64).contains(&w)), "every --workers value must be at least 1 and at most 64");
    ensure!(args.partitions >= 1, "--partitions must be at least 1");
    let job = load(&args, max_w)?;
    let proofs = Mutex::new(HashMap::new());
    let mut ok = true;
    println!(
        "| mode | W | partitions | wall s | proved/s | GPU busy | pre-staged | mem hold p50/p99 ms | mem wait p50/p99 ms | compute wait p50/p99 ms | compute hold p50/p99 ms | failed | unverified |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // One untimed partition first: it loads the kernels and page-locks the
    // key (a one-time cost of seconds at 2^24), which would otherwise land in
    // the first timed mode's numbers. (The pools are trimmed when it ends, as
    // after every burst, so each row starts from an idle device.)
    let t = Instant::now();
    let (wit, _) = &job.witnesses[0][0];
    let (r, s) = blinders(args.seed, 0, 0);
    ffi::prove(&job.params, std::slice::from_ref(wit), &[r], &[s], std::ptr::null_mut(), 0).context("warm-up proof")?;
    eprintln!("warm-up partition (not counted): {:.2} s", t.elapsed().as_secs_f64());
    let mut phase_rows = Vec::new();
    for mode in &args.modes {
        mode.apply();
        for &w in &args.workers {
            let r = run(&job, &args, w, &proofs)?;
            let total = w * args.partitions;
            let proved = total - r.failures.len();
            let compute: Vec<Duration> = r.reports.iter().filter_map(|c| c.compute.map(|s| s.hold())).collect();
            let busy = compute.iter().sum::<Duration>().as_secs_f64() / r.wall.as_secs_f64();
            let staged = r.reports.iter().filter(|c| c.prestaged == Some(true)).count();
            let mem_hold = pct(r.reports.iter().filter_map(|c| c.mem.map(|s| s.hold())).collect());
            let mem_wait = pct(r.reports.iter().filter_map(|c| c.mem.map(|s| s.wait())).collect());
            let cw = pct(r.reports.iter().filter_map(|c| c.compute.map(|s| s.wait())).collect());
            let ch = pct(compute);
            println!(
                "| {mode} | {w} | {total} | {:.2} | {:.3} | {:.0}% | {staged}/{} | {:.1}/{:.1} | {:.1}/{:.1} | {:.1}/{:.1} | {:.1}/{:.1} | {} | {} |",
                r.wall.as_secs_f64(),
                proved as f64 / r.wall.as_secs_f64(),
                busy * 100.0,
                r.reports.len(),
                mem_hold.0,
                mem_hold.1,
                mem_wait.0,
                mem_wait.1,
                cw.0,
                cw.1,
                ch.0,
                ch.1,
                r.failures.len(),
                r.unverified,
            );
            for f in &r.failures {
                eprintln!("  failure: {f}");
            }
            if let Some(c) = r.reports.iter().filter(|c| c.mem.is_some()).max_by_key(|c| c.mem.map(|s| s.hold())) {
                eprintln!(
                    "  longest memory-lock hold ({mode}, W={w}): {:.1} ms, of which pre-stage {:.1} ms: {}",
                    c.mem.map_or(0.0, |s| s.hold().as_secs_f64() * 1e3),
                    c.times.stage.as_secs_f64() * 1e3,
                    c.stage_detail.as_deref().unwrap_or("-")
                );
            }
            // The issue-4 measure: memory-lock holds that overlapped another
            // call's compute-lock hold (kernels running), from the spans.
            let during: Vec<&CallReport> =
                r.reports.iter().filter(|c| c.mem.is_some_and(|m| overlaps_compute(&r.reports, c, m))).collect();
            let dp = pct(during.iter().filter_map(|c| c.mem.map(|s| s.hold())).collect());
            if !during.is_empty() {
                eprintln!(
                    "  memory-lock hold while another call held the compute lock ({mode}, W={w}): p50/p99 {:.1}/{:.1} ms over {} of {} calls",
                    dp.0,
                    dp.1,
                    during.len(),
                    r.reports.len()
                );
            }
            let long: Vec<_> = r.reports.iter().filter(|c| c.mem.is_some_and(|s| s.hold().as_millis() > 20)).collect();
            for c in long.iter().take(6) {
                eprintln!(
                    "  memory-lock hold over 20 ms ({mode}, W={w}): {:.1} ms, during another call's compute: {}, pre-stage: {}",
                    c.mem.map_or(0.0, |s| s.hold().as_secs_f64() * 1e3),
                    if during.iter().any(|d| std::ptr::eq(*d, *c)) { "yes" } else { "no" },
                    c.stage_detail.as_deref().unwrap_or("-")
                );
            }
            if !long.is_empty() {
                eprintln!("  ({} of {} memory-lock holds over 20 ms)", long.len(), r.reports.len());
            }
            for c in r.reports.iter().filter(|c| c.prestaged == Some(false)).take(1) {
                eprintln!("  fallback reason ({mode}, W={w}): {}", c.reason.as_deref().unwrap_or("?"));
            }
            ok &= r.failures.is_empty() && r.unverified == 0 && r.reports.len() == total;
            if w == 1 {
                phase_rows.push((mode.to_string(), r.reports));
            }
        }
    }
    Mode::Two.apply();
    // Per-phase times of single-worker calls (mean over the run's partitions).
    println!();
    println!("| mode (W=1) | backend | pin | stage | NTT | H-MSM | batch add | tails | prep (CPU) | G2 (CPU) | compute hold |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (mode, reports) in phase_rows {
        let k = reports.len().max(1) as f64;
        let mean = |f: &dyn Fn(&CallReport) -> Duration| reports.iter().map(f).sum::<Duration>().as_secs_f64() * 1e3 / k;
        println!(
            "| {mode} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            reports.first().map_or("?", |c| c.backend),
            mean(&|c| c.times.pin),
            mean(&|c| c.times.stage),
            mean(&|c| c.times.ntt),
            mean(&|c| c.times.h_msm),
            mean(&|c| c.times.batch_add),
            mean(&|c| c.times.tails),
            mean(&|c| c.times.prep),
            mean(&|c| c.times.g2),
            mean(&|c| c.compute.map_or(Duration::ZERO, |s| s.hold())),
        );
    }
    Ok(ok)
}
