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

mod host;
mod job;
mod pinned;
mod report;
mod run;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};

use crate::circuits::Kind;

pub use host::{cpu_seconds, peak_rss, reset_peak_rss};
use host::epoch_ms;
use job::{blinders, load};
use report::{phase_table, report_row, table_header, Notes};
use run::{run, run_batch, write_proofs, Seen};

/// One lock/staging configuration, set through the library's environment switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `SUPRASEAL_C2_LOCKS=single`.
    Single,
    /// Two locks, pre-staging on (the default).
    Two,
    /// Two locks, `SUPRASEAL_C2_PRESTAGE=off` (always the fallback path).
    Fallback,
    /// Two locks, `SUPRASEAL_C2_PRESTAGE=whole` (whole circuits pre-staged
    /// or none: no part of circuit 0 where a whole one does not fit).
    TwoWhole,
    /// Two locks, `SUPRASEAL_C2_PRESTAGE_RETRY=off` (a call whose phase 1
    /// left circuit 0 short uploads the rest in its turn, with no second
    /// admission while it waits for the compute lock).
    TwoNoRetry,
    /// Two locks, `SUPRASEAL_C2_BATCH_ADD_BESIDE=on` (the batch additions
    /// beside the last H-MSM also over a resident key).
    TwoBeside,
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
            "two-whole" => Ok(Mode::TwoWhole),
            "two-beside" => Ok(Mode::TwoBeside),
            "two-noretry" => Ok(Mode::TwoNoRetry),
            _ => s
                .strip_prefix("two-limit=")
                .and_then(|m| m.parse().ok())
                .map(Mode::TwoLimit)
                .ok_or_else(|| format!("{s:?}: expected single, two, two-whole, two-noretry, two-beside, fallback or two-limit=<MiB>")),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Single => write!(f, "single"),
            Mode::Two => write!(f, "two"),
            Mode::Fallback => write!(f, "fallback"),
            Mode::TwoWhole => write!(f, "two-whole"),
            Mode::TwoBeside => write!(f, "two-beside"),
            Mode::TwoNoRetry => write!(f, "two-noretry"),
            Mode::TwoLimit(m) => write!(f, "two-limit={m}"),
        }
    }
}

impl Mode {
    /// Sets the library's switches for this mode: the lock and pre-stage
    /// switches the modes name are cleared first, so each row is what its
    /// label says whatever the bench's environment has;
    /// `SUPRASEAL_C2_BATCH_ADD_BESIDE` keeps the bench's environment value
    /// (as the process had it at its first mode) but in `two-beside`. Only
    /// called between runs, while no proving call is in flight (the library
    /// reads them per call).
    fn apply(&self) {
        const BESIDE: &str = "SUPRASEAL_C2_BATCH_ADD_BESIDE";
        static BESIDE_BEFORE: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
        match BESIDE_BEFORE.get_or_init(|| std::env::var_os(BESIDE)) {
            Some(v) => std::env::set_var(BESIDE, v),
            None => std::env::remove_var(BESIDE),
        }
        for k in ["SUPRASEAL_C2_LOCKS", "SUPRASEAL_C2_PRESTAGE", "SUPRASEAL_C2_PRESTAGE_RETRY", "SUPRASEAL_C2_VRAM_LIMIT_MB"] {
            std::env::remove_var(k);
        }
        match self {
            Mode::Single => std::env::set_var("SUPRASEAL_C2_LOCKS", "single"),
            Mode::Two => {}
            Mode::Fallback => std::env::set_var("SUPRASEAL_C2_PRESTAGE", "off"),
            Mode::TwoWhole => std::env::set_var("SUPRASEAL_C2_PRESTAGE", "whole"),
            Mode::TwoBeside => std::env::set_var("SUPRASEAL_C2_BATCH_ADD_BESIDE", "on"),
            Mode::TwoNoRetry => std::env::set_var("SUPRASEAL_C2_PRESTAGE_RETRY", "off"),
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
    after_help = "Exactly one input is required: --shape NAME, --synthetic-log-domain D, or --circuit CIRCUIT with --log-constraints K.

Host memory of a synthetic shape: the key plus every witness, all built before the first proof
(max(--workers) x min(--witnesses, --partitions) witnesses), plus 3 x 32 x 2^D bytes while a
proof's quotient is computed on the CPU backend; the bench checks this against the available
memory before it starts. The prover's other working memory comes on top (a few GiB at porep-32g).
  porep-32g  key 44.1 GiB, 15.6 GiB per witness (1 witness: 59.7 GiB; 3: 90.8 GiB; defaults: 137.5 GiB)
  2^D        key about 329 x 2^D bytes, about 126 x 2^D bytes per witness (2^24: 5.1 GiB + 2.0 GiB each)"
)]
pub struct BenchArgs {
    /// Synthetic key and witness with a domain of 2^D elements (no verification); same as --shape 2^D.
    #[arg(long = "synthetic-log-domain", value_name = "D", value_parser = clap::value_parser!(u32).range(10..=27))]
    pub synthetic: Option<u32>,
    /// Synthetic key and witness of a named shape: porep-32g (one 32 GiB
    /// sector partition: domain 2^27, 130,169,893 aux variables; key 44.1 GiB,
    /// 15.6 GiB per witness of host memory) or 2^D.
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
    /// After the worker rows, one call with N circuits (as filecoin-proofs
    /// sends a sector's partitions), for each N given (comma-separated, each
    /// 1..=64). The circuits use the workers' first witnesses in turn (as many
    /// distinct ones as the largest --workers value; the row says how many),
    /// each with its own r and s; a witness passed twice is treated as two.
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub batch: Vec<usize>,
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
    /// Modes (comma-separated): single, two, two-whole, two-noretry, two-beside, fallback, two-limit=<MiB>.
    #[arg(long, value_delimiter = ',', default_value = "single,two")]
    pub modes: Vec<Mode>,
    /// Distinct witnesses per worker (cycled over its partitions; at most --partitions are made).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub witnesses: u64,
    /// Seed for witnesses and r, s.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Page-lock the witnesses' a/b/c (cuMemHostRegister, device 0) before
    /// the timed rows, as a caller with a pinned buffer pool (Curio's cuzk)
    /// does; either library then copies from them at pinned speed without
    /// registering them itself. Needs libcuda.
    #[arg(long = "caller-pinned")]
    pub caller_pinned: bool,
}

/// Runs every mode × worker count (and the batch call) and prints one table
/// row each.
pub fn bench(args: BenchArgs) -> Result<bool> {
    let max_w = args.workers.iter().copied().max().context("--workers is empty")?;
    ensure!(args.workers.iter().all(|&w| (1..=64).contains(&w)), "every --workers value must be at least 1 and at most 64");
    ensure!(args.partitions >= 1, "--partitions must be at least 1");
    for &n in &args.batch {
        ensure!((1..=64).contains(&n), "--batch {n}: must be in 1..=64");
    }
    // The rule `prove` applies, before anything is loaded or created.
    if let (Some(kind), Some(k)) = (args.circuit, args.log_constraints) {
        crate::circuits::check_size(kind, k).map_err(anyhow::Error::msg)?;
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
    let _caller_pins = if args.caller_pinned {
        let t = Instant::now();
        let ranges: Vec<_> = job
            .witnesses
            .iter()
            .flatten()
            .flat_map(|(w, _)| [&w.a, &w.b, &w.c])
            .map(|v| (v.as_ptr() as *const std::ffi::c_void, std::mem::size_of_val(v.as_slice())))
            .collect();
        let pins = pinned::CallerPins::register(&ranges)?;
        eprintln!("--caller-pinned: {} of witness buffers page-locked by the caller in {:.1} s", crate::units::bytes(pins.bytes() as u64), t.elapsed().as_secs_f64());
        Some(pins)
    } else {
        None
    };
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
    let mut notes = Notes::default();
    // One untimed partition in each mode before its rows: the first loads
    // the kernels, page-locks the key and makes it resident where it fits (a
    // one-time cost of seconds), and a later mode's releases a key that its
    // VRAM limit has no room for (or uploads it again); either would
    // otherwise land in the mode's first row, its time and its peak VRAM.
    // (The pools are trimmed when it ends, as after every burst, so each row
    // starts from an idle device.) The first mode's line comes before the
    // table, later ones' in the notes after it, so the table stays whole. A
    // warm-up the library refuses is noted, not fatal: the mode's rows then
    // fail and are counted as failures.
    let warm_up = |mode: &Mode| -> String {
        let t = Instant::now();
        let (wit, _) = &job.witnesses[0][0];
        let (r, s) = blinders(args.seed, 0, 0);
        match job.prove(std::slice::from_ref(wit), &[r], &[s], std::ptr::null_mut()) {
            Ok(_) => format!("warm-up partition, {} (not counted): {:.2} s", mode_name(mode), t.elapsed().as_secs_f64()),
            Err(e) => format!("warm-up partition, {}: failed: {e}", mode_name(mode)),
        }
    };
    let mut phase_rows = Vec::new();
    for (i, mode) in modes.iter().enumerate() {
        mode.apply();
        let line = warm_up(mode);
        if i == 0 {
            eprintln!("{line}");
            table_header();
        } else {
            notes.add(format!("  {line}"));
        }
        for &w in &args.workers {
            reset_peak_rss();
            let t0 = epoch_ms();
            let r = run(&job, &args, w, &proofs)?;
            let (t1, rss) = (epoch_ms(), peak_rss());
            ok &= report_row(label, &mode_name(mode), w, w * args.partitions, &r, job.vk.is_some(), t0, t1, rss, &mut notes);
            trace.row(&format!("{label} {} W={w}", mode_name(mode)), &r.calls, &r.reports);
            if w == 1 {
                phase_rows.push((format!("{mode}, W=1"), r.reports));
            }
        }
        for &n in &args.batch {
            reset_peak_rss();
            let t0 = epoch_ms();
            let r = run_batch(&job, &args, n, &proofs)?;
            let (t1, rss) = (epoch_ms(), peak_rss());
            let distinct = n.min(job.witnesses.len());
            ok &= report_row(label, &format!("{} ({n} circuits in one call, {distinct} distinct witnesses)", mode_name(mode)), 1, n, &r, job.vk.is_some(), t0, t1, rss, &mut notes);
            trace.row(&format!("{label} {} batch of {n}", mode_name(mode)), &r.calls, &r.reports);
            phase_rows.push((format!("{mode}, {n} circuits in one call"), r.reports));
        }
    }
    if let (Some(path), Some(file)) = (&args.trace, trace_file) {
        trace.write(file).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("trace written to {}", path.display());
    }
    if let (Some(path), Some(mut file)) = (&args.proofs_out, proofs_file) {
        let n = write_proofs(&proofs, &mut file).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("{n} proofs written to {}", path.display());
    }
    if args.lib == Lib::Ours {
        Mode::Two.apply();
        phase_table(phase_rows);
    }
    notes.print();
    Ok(ok)
}
