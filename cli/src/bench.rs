//! `supraseal-c2 bench`: W workers sharing one GPU (one lock handle), each
//! proving P partitions (one-circuit calls through the C ABI), under each lock
//! lock mode (memory lock, compute lock). Reports partitions/s, compute-lock busy fraction (compute-lock
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

use supraseal_c2::CallReport;

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

/// Which library proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lib {
    /// This library, through its C ABI.
    Ours,
    /// The published supraseal-c2 0.1.2 (`--reference`): the same-run baseline.
    Upstream,
}

/// Input: exactly one of `--shape`, `--synthetic-log-domain`, or `--circuit`
/// with `--log-constraints`. [`bench`] checks that, with its own messages (an
/// `ArgGroup` would replace them with clap's), so the help states it in the
/// usage line and after the options.
#[derive(clap::Args)]
#[command(
    override_usage = "supraseal-c2 bench <--shape <NAME> | --synthetic-log-domain <D> | --circuit <CIRCUIT> --log-constraints <K>> [OPTIONS]",
    after_help = "Exactly one input is required: --shape NAME, --synthetic-log-domain D, or --circuit CIRCUIT with --log-constraints K."
)]
pub struct BenchArgs {
    /// Synthetic key and witness with a domain of 2^D elements (no verification); same as --shape 2^D.
    #[arg(long = "synthetic-log-domain", value_name = "D", value_parser = clap::value_parser!(u32).range(10..=27))]
    pub synthetic: Option<u32>,
    /// Synthetic key and witness of a named shape: porep-32g (one 32 GiB
    /// sector partition: domain 2^27, 130,169,893 aux variables) or 2^D.
    #[arg(long, value_name = "NAME")]
    pub shape: Option<String>,
    /// With a synthetic shape: load its key from this params file (written
    /// by `params synth` with the same --shape and --seed) instead of
    /// building it in memory. Required for --lib upstream.
    #[arg(long, value_name = "FILE")]
    pub params: Option<std::path::PathBuf>,
    /// The library that proves.
    #[arg(long, value_enum, default_value_t = Lib::Ours)]
    pub lib: Lib,
    /// The reference library for --lib upstream (libupstream_ref.so from
    /// scripts/build-upstream-reference.sh).
    #[arg(long, value_name = "SO")]
    pub reference: Option<std::path::PathBuf>,
    /// After the worker rows, one call with N circuits (as bellperson sends a
    /// sector's partitions); N is at most the largest --workers value.
    #[arg(long, value_name = "N")]
    pub batch: Option<usize>,
    /// Write every proof as a line `<worker|batch> <partition> <hex>` (the
    /// first time its (witness, r, s) is proved), to compare libraries.
    #[arg(long = "proofs-out", value_name = "FILE")]
    pub proofs_out: Option<std::path::PathBuf>,
    /// Write the run as a Chrome/Perfetto trace (JSON).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,
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

/// A params handle of the library under test.
enum Key<'a> {
    Ours(Params),
    Upstream(crate::upstream::UpstreamSrs<'a>),
}

/// What the workers prove: a key handle and per-worker witnesses.
struct Job<'a> {
    key: Key<'a>,
    vk: Option<VerifyingKey<Bls12>>,
    /// `witnesses[worker][i]` with its public inputs (real circuits only).
    witnesses: Vec<Vec<(Witness, Vec<Scalar>)>>,
}

impl Job<'_> {
    fn prove(&self, w: &[Witness], r: &[Scalar], s: &[Scalar], handle: *mut std::ffi::c_void) -> Result<Vec<supraseal_c2::groth16_proof>, String> {
        match &self.key {
            Key::Ours(p) => ffi::prove(p, w, r, s, handle, 0).map_err(|e| e.to_string()),
            Key::Upstream(u) => u.prove(&w.iter().collect::<Vec<_>>(), r, s),
        }
    }
}

/// Peak resident memory (VmHWM) since the last [`reset_peak_rss`], in bytes.
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.unwrap_or(0) * 1024
}

/// CPU time (user + system) of the process so far, in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Resets VmHWM to the current resident size (Linux `clear_refs` 5).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

fn epoch_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

fn open_key<'a>(args: &BenchArgs, upstream: Option<&'a crate::upstream::Upstream>, path: &std::path::Path) -> Result<Key<'a>> {
    let t = Instant::now();
    reset_peak_rss();
    let key = match upstream {
        Some(u) => Key::Upstream(u.open(path)?),
        None => Key::Ours(Params::open(path, true).map_err(|e| anyhow::anyhow!("{e}"))?),
    };
    let line = format!(
        "params load ({:?}): {} in {:.1} s, peak RSS during the load {:.2} GiB",
        args.lib,
        path.display(),
        t.elapsed().as_secs_f64(),
        gib(peak_rss())
    );
    println!("{line}");
    Ok(key)
}

fn load<'a>(args: &BenchArgs, max_workers: usize, upstream: Option<&'a crate::upstream::Upstream>) -> Result<Job<'a>> {
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
fn blinders(seed: u64, worker: usize, p: usize) -> (Scalar, Scalar) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9) ^ ((worker as u64) << 32 | p as u64));
    (Scalar::random(&mut rng), Scalar::random(&mut rng))
}

struct Handle(*mut std::ffi::c_void);
// SAFETY: a lock handle is made to be shared by threads (docs/ARCHITECTURE.md §5).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// Per-run outcome.
struct Run {
    wall: Duration,
    reports: Vec<CallReport>,
    calls: Vec<crate::trace::Call>,
    failures: Vec<String>,
    unverified: usize,
}

/// Proofs seen so far, by (worker or 1000 + batch index, partition).
type Seen = Mutex<HashMap<(usize, usize), Vec<u8>>>;

/// Records a proof's bytes the first time its (witness, r, s) is proved and
/// reports a difference from an earlier mode.
fn note_proof(seen: &Seen, key: (usize, usize), bytes: Vec<u8>, failures: &Mutex<Vec<String>>) {
    let mut seen = seen.lock().unwrap();
    match seen.get(&key) {
        Some(prev) if *prev != bytes => failures.lock().unwrap().push(format!("{key:?}: proof bytes differ from an earlier mode")),
        Some(_) => {}
        None => {
            seen.insert(key, bytes);
        }
    }
}

fn run(job: &Job, args: &BenchArgs, workers: usize, proofs: &Seen) -> Result<Run> {
    let handle = Handle(unsafe { ffi::create_gpu_mutex() });
    let barrier = Barrier::new(workers + 1);
    let failures = Mutex::new(Vec::new());
    let unverified = Mutex::new(0usize);
    let calls = Mutex::new(Vec::new());
    supraseal_c2::record_reports(true);
    let wall = std::thread::scope(|scope| {
        for w in 0..workers {
            let (handle, barrier, failures, unverified, calls) = (&handle, &barrier, &failures, &unverified, &calls);
            scope.spawn(move || {
                barrier.wait();
                for p in 0..args.partitions {
                    let (wit, inputs) = &job.witnesses[w][p % job.witnesses[w].len()];
                    let (r, s) = blinders(args.seed, w, p);
                    let start = Instant::now();
                    let result = job.prove(std::slice::from_ref(wit), &[r], &[s], handle.0);
                    calls.lock().unwrap().push(crate::trace::Call { worker: w, thread: std::thread::current().id(), start, end: Instant::now() });
                    match result {
                        Ok(out) => {
                            if let Some(vk) = &job.vk {
                                if !ffi::verify(vk, &out[0], inputs) {
                                    *unverified.lock().unwrap() += 1;
                                }
                            }
                            note_proof(proofs, (w, p), proof_bytes(&out[0]), failures);
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
    let reports = supraseal_c2::take_reports();
    supraseal_c2::record_reports(false);
    unsafe { ffi::destroy_gpu_mutex(handle.0) };
    Ok(Run {
        wall,
        reports,
        calls: calls.into_inner().unwrap(),
        failures: failures.into_inner().unwrap(),
        unverified: unverified.into_inner().unwrap(),
    })
}

/// One call with `n` circuits (the workers' first witnesses), as bellperson
/// sends a sector's partitions.
fn run_batch(job: &Job, args: &BenchArgs, n: usize, proofs: &Seen) -> Result<Run> {
    let refs: Vec<&(Witness, Vec<Scalar>)> = (0..n).map(|i| &job.witnesses[i][0]).collect();
    let (r, s): (Vec<Scalar>, Vec<Scalar>) = (0..n).map(|i| blinders(args.seed, 1000 + i, 0)).unzip();
    let failures = Mutex::new(Vec::new());
    supraseal_c2::record_reports(true);
    let start = Instant::now();
    let result = match &job.key {
        Key::Ours(p) => ffi::prove_refs(p, &refs.iter().map(|x| &x.0).collect::<Vec<_>>(), &r, &s, std::ptr::null_mut(), 0).map_err(|e| e.to_string()),
        Key::Upstream(u) => u.prove(&refs.iter().map(|x| &x.0).collect::<Vec<_>>(), &r, &s),
    };
    let end = Instant::now();
    let reports = supraseal_c2::take_reports();
    supraseal_c2::record_reports(false);
    let mut unverified = 0;
    match result {
        Ok(out) => {
            for (i, p) in out.iter().enumerate() {
                if let Some(vk) = &job.vk {
                    unverified += usize::from(!ffi::verify(vk, p, &refs[i].1));
                }
                note_proof(proofs, (1000 + i, 0), proof_bytes(p), &failures);
            }
        }
        Err(e) => failures.lock().unwrap().push(format!("batch of {n}: {e}")),
    }
    let calls = vec![crate::trace::Call { worker: 0, thread: std::thread::current().id(), start, end }];
    Ok(Run { wall: end - start, reports, calls, failures: failures.into_inner().unwrap(), unverified })
}

/// The 384 bytes of a proof as the C caller receives them.
fn proof_bytes(p: &supraseal_c2::groth16_proof) -> Vec<u8> {
    // SAFETY: groth16_proof is repr(C) plain data (u64 limbs), 384 bytes, no padding.
    unsafe { std::slice::from_raw_parts(p as *const _ as *const u8, std::mem::size_of_val(p)) }.to_vec()
}

/// Whether the memory-lock hold `m` of call `c` overlapped the compute-lock
/// hold of another call in `all`.
fn overlaps_compute(all: &[CallReport], c: &CallReport, m: supraseal_c2::Span) -> bool {
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

/// One row of the table, with the detail lines below it (stderr).
#[allow(clippy::too_many_arguments)]
fn report_row(label: &str, mode: &str, w: usize, total: usize, r: &Run, verified: bool, t0: u128, t1: u128, rss: u64) -> bool {
    let proved = total - r.failures.len();
    let compute: Vec<Duration> = r.reports.iter().filter_map(|c| c.compute.map(|s| s.hold())).collect();
    let busy = compute.iter().sum::<Duration>().as_secs_f64() / r.wall.as_secs_f64();
    let staged = r.reports.iter().filter(|c| c.prestaged == Some(true)).count();
    let mem_hold = pct(r.reports.iter().filter_map(|c| c.mem.map(|s| s.hold())).collect());
    let mem_wait = pct(r.reports.iter().filter_map(|c| c.mem.map(|s| s.wait())).collect());
    let cw = pct(r.reports.iter().filter_map(|c| c.compute.map(|s| s.wait())).collect());
    let ch = pct(compute);
    let ours = !r.reports.is_empty();
    let or_dash = |s: String| if ours { s } else { "–".into() };
    println!(
        "| {label} | {mode} | {w} | {total} | {:.2} | {:.3} | {:.2} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} |",
        r.wall.as_secs_f64(),
        proved as f64 / r.wall.as_secs_f64(),
        r.wall.as_secs_f64() * w as f64 / total.max(1) as f64,
        or_dash(format!("{:.0}%", busy * 100.0)),
        or_dash(format!("{staged}/{}", r.reports.len())),
        or_dash(format!("{:.1}/{:.1}", mem_hold.0, mem_hold.1)),
        or_dash(format!("{:.1}/{:.1}", mem_wait.0, mem_wait.1)),
        or_dash(format!("{:.1}/{:.1}", cw.0, cw.1)),
        or_dash(format!("{:.1}/{:.1}", ch.0, ch.1)),
        gib(rss),
        r.failures.len(),
        if verified { r.unverified.to_string() } else { "not verifiable".into() },
    );
    // For scripts/gpu-samples.py: the row's wall-clock window, to align with
    // the GPU samples (memory used, utilisation) taken beside the run.
    eprintln!("ROW lib={label} mode={mode} W={w} t0_ms={t0} t1_ms={t1} peak_rss_bytes={rss}");
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
    // Memory-lock holds that overlapped another call's compute-lock hold
    // (kernels running), from the spans.
    let during: Vec<&CallReport> = r.reports.iter().filter(|c| c.mem.is_some_and(|m| overlaps_compute(&r.reports, c, m))).collect();
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
    for c in r.reports.iter().filter(|c| c.prestaged == Some(false)).take(1) {
        eprintln!("  fallback reason ({mode}, W={w}): {}", c.reason.as_deref().unwrap_or("?"));
    }
    r.failures.is_empty() && r.unverified == 0 && (!ours || r.reports.len() == r.calls.len())
}

/// Runs every mode × worker count (and the batch call) and prints one table
/// row each.
pub fn bench(args: BenchArgs) -> Result<bool> {
    let max_w = args.workers.iter().copied().max().context("--workers is empty")?;
    ensure!(args.workers.iter().all(|&w| (1..=64).contains(&w)), "every --workers value must be at least 1 and at most 64");
    ensure!(args.partitions >= 1, "--partitions must be at least 1");
    if let Some(n) = args.batch {
        ensure!((1..=max_w).contains(&n), "--batch {n}: must be in 1..={max_w} (the largest --workers value: one witness per worker)");
    }
    let upstream = match (args.lib, &args.reference) {
        (Lib::Upstream, Some(so)) => Some(crate::upstream::Upstream::load(so)?),
        (Lib::Upstream, None) => bail!("--lib upstream needs --reference PATH (libupstream_ref.so)"),
        (Lib::Ours, _) => None,
    };
    // Output files are created now, so a bad path fails before the run.
    let create = |p: &Option<std::path::PathBuf>| -> Result<Option<std::fs::File>> {
        p.as_ref().map(|p| std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))).transpose()
    };
    let (trace_file, proofs_file) = (create(&args.trace)?, create(&args.proofs_out)?);
    let origin = Instant::now();
    let job = load(&args, max_w, upstream.as_ref())?;
    let proofs: Seen = Mutex::new(HashMap::new());
    let mut trace = crate::trace::Trace::new(origin);
    let label = match args.lib {
        Lib::Ours => "ours",
        Lib::Upstream => "upstream",
    };
    // The reference has one lock (its static mutex) and no switches.
    let modes = match args.lib {
        Lib::Ours => args.modes.clone(),
        Lib::Upstream => vec![Mode::Two],
    };
    let mode_name = |m: &Mode| if args.lib == Lib::Upstream { "its own lock".to_string() } else { m.to_string() };
    let mut ok = true;
    println!(
        "| library | mode | W | partitions | wall s | partitions/s | s per partition (wall × W / P) | compute-lock busy | pre-staged | mem hold p50/p99 ms | mem wait p50/p99 ms | compute wait p50/p99 ms | compute hold p50/p99 ms | peak RSS GiB | failed | unverified |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // One untimed partition first: it loads the kernels and page-locks the
    // key (a one-time cost of seconds at 2^24), which would otherwise land in
    // the first timed mode's numbers. (The pools are trimmed when it ends, as
    // after every burst, so each row starts from an idle device.)
    let t = Instant::now();
    let (wit, _) = &job.witnesses[0][0];
    let (r, s) = blinders(args.seed, 0, 0);
    job.prove(std::slice::from_ref(wit), &[r], &[s], std::ptr::null_mut()).map_err(|e| anyhow::anyhow!("warm-up proof: {e}"))?;
    eprintln!("warm-up partition (not counted): {:.2} s", t.elapsed().as_secs_f64());
    let mut phase_rows = Vec::new();
    for mode in &modes {
        mode.apply();
        for &w in &args.workers {
            reset_peak_rss();
            let t0 = epoch_ms();
            let r = run(&job, &args, w, &proofs)?;
            let (t1, rss) = (epoch_ms(), peak_rss());
            ok &= report_row(label, &mode_name(mode), w, w * args.partitions, &r, job.vk.is_some(), t0, t1, rss);
            trace.row(&format!("{label} {} W={w}", mode_name(mode)), &r.calls, &r.reports);
            if w == 1 {
                phase_rows.push((mode.to_string(), r.reports));
            }
        }
        if let Some(n) = args.batch {
            reset_peak_rss();
            let t0 = epoch_ms();
            let r = run_batch(&job, &args, n, &proofs)?;
            let (t1, rss) = (epoch_ms(), peak_rss());
            ok &= report_row(label, &format!("{} ({n} circuits in one call)", mode_name(mode)), 1, n, &r, job.vk.is_some(), t0, t1, rss);
            trace.row(&format!("{label} {} batch of {n}", mode_name(mode)), &r.calls, &r.reports);
        }
    }
    if let (Some(path), Some(file)) = (&args.trace, trace_file) {
        trace.write(file).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("trace written to {}", path.display());
    }
    if let (Some(path), Some(mut file)) = (&args.proofs_out, proofs_file) {
        let mut lines: Vec<String> = proofs
            .lock()
            .unwrap()
            .iter()
            .map(|(&(w, p), b)| {
                let who = if w >= 1000 { format!("batch{}", w - 1000) } else { format!("w{w}") };
                format!("{who} {p} {}", b.iter().map(|x| format!("{x:02x}")).collect::<String>())
            })
            .collect();
        lines.sort();
        std::io::Write::write_all(&mut file, (lines.join("\n") + "\n").as_bytes()).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("{} proofs written to {}", lines.len(), path.display());
    }
    if args.lib == Lib::Upstream {
        return Ok(ok);
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
