//! `supraseal-c2`: proves real bellperson circuits through the library's C
//! ABI and verifies every proof with bellperson.
//!
//! `supraseal-c2 prove` with no options proves two SHA-256 preimage circuits
//! of about 2^17 constraints each, generating (and caching) their parameters
//! with bellperson on first use.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use blstrs::Scalar;
use clap::{Parser, Subcommand, ValueEnum};
use ff::Field;
use indicatif::{ProgressBar, ProgressStyle};
use progress::spinner;
use rand::{Rng, SeedableRng};

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::{ffi, kit, params, units};

mod fixture;
mod progress;

/// `supraseal-c2 0.1.3 (library supraseal-c2 0.1.3, with GPU kernels)`:
/// the tool and the library it runs (`--version`).
fn version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let kernels = if supraseal_c2::BUILT_WITH_KERNELS { "with GPU kernels" } else { "CPU only: built without nvcc" };
        format!("{} (library supraseal-c2 {}, {kernels})", env!("CARGO_PKG_VERSION"), supraseal_c2::VERSION)
    })
}

#[derive(Parser)]
#[command(name = "supraseal-c2", version = version(), about = "Groth16 (BLS12-381) proving through the supraseal-c2 C ABI: self-test, benchmarks and params tools. lotus, Curio and other provers load the library itself (docs/INTEGRATION.md)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Backend {
    Cpu,
    Gpu,
    Auto,
}

#[derive(Subcommand)]
enum Command {
    /// Self-test: synthesize test circuits (SHA-256 or MiMC, not a sector's C1 output), prove them through the C ABI, verify with bellperson.
    Prove(ProveArgs),
    /// Write test fixtures for C/Go callers: params, witnesses, r/s, expected proofs.
    Fixture(fixture::FixtureArgs),
    /// Throughput of W workers sharing one GPU under each lock mode (the two-lock pipeline of docs/ARCHITECTURE.md §5).
    Bench(supraseal_c2_cli::bench::BenchArgs),
    /// Params files: write synthetic shapes (`params synth`), load and check one (`params check`).
    #[command(subcommand)]
    Params(ParamsCommand),
}

#[derive(Subcommand)]
enum ParamsCommand {
    /// Write a structurally valid params file of a synthetic shape (distinct
    /// subgroup points, bellperson's layout), streamed to disk; `bench
    /// --shape S --params FILE --seed N` proves with it.
    Synth(SynthArgs),
    /// Load a params file as `create_SRS` does (decode, curve and batched
    /// subgroup checks), with a progress bar; prints wall, CPU, peak RSS and
    /// the time of each phase. Exit status 1 when the file is refused.
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The params file.
    file: PathBuf,
    /// Threads that decode and check [default: SUPRASEAL_C2_LOAD_THREADS, else every core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    threads: Option<u64>,
    /// Where the batched subgroup check runs: auto (GPU 0 when usable), cpu
    /// or gpu [default: SUPRASEAL_C2_LOAD_CHECK, else auto].
    #[arg(long, value_name = "WHERE")]
    check_on: Option<supraseal_c2::CheckOn>,
    /// Load the file with the reference library instead (`libupstream_ref.so`
    /// from scripts/build-upstream-reference.sh: the published supraseal-c2
    /// 0.1.2, which checks no subgroup), for a same-run comparison: prints
    /// when its create_SRS returned and when its background decode ended.
    #[arg(long, value_name = "SO", conflicts_with_all = ["threads", "check_on"])]
    reference: Option<PathBuf>,
}


/// `params check --reference SO`: the reference library's load of the file.
fn check_upstream(file: &std::path::Path, so: &std::path::Path) -> Result<bool> {
    let lib = supraseal_c2_cli::upstream::Upstream::load(so)?;
    supraseal_c2_cli::bench::reset_peak_rss();
    let cpu0 = supraseal_c2_cli::bench::cpu_seconds();
    let t = Instant::now();
    let srs = match lib.open(file) {
        Ok(v) => v,
        Err(e) => {
            println!("refused by upstream: {e:#}");
            return Ok(false);
        }
    };
    // A failure to observe its decode is the tool's, not the file's (exit 2).
    let load = supraseal_c2_cli::upstream::wait_decoded(file, t)?;
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    println!("{}: loaded by upstream supraseal-c2 0.1.2 (no subgroup check; decoding errors ignored)", file.display());
    println!("  size         {size} bytes ({})", units::bytes(size));
    println!("  usable       {:.2} s ({}): {}", load.usable_s, units::per_second(size, load.usable_s), load.how());
    println!("    create_SRS {:.2} s: the file mapped, the page-locked buffer allocated", load.returned_s);
    println!("  CPU          {:.1} s", supraseal_c2_cli::bench::cpu_seconds() - cpu0);
    println!("  peak RSS     {} (process high-water mark)", units::bytes(supraseal_c2_cli::bench::peak_rss()));
    drop(srs);
    Ok(true)
}

fn check(args: CheckArgs) -> Result<bool> {
    use supraseal_c2::{LoadOptions, Srs};
    if let Some(so) = &args.reference {
        return check_upstream(&args.file, so);
    }
    let threads = match args.threads {
        Some(n) => Some(n as usize),
        None => supraseal_c2::load_threads().map_err(|e| anyhow::anyhow!(e.message))?,
    };
    let size = std::fs::metadata(&args.file).map(|m| m.len()).unwrap_or(0);
    let pb = ProgressBar::new(size);
    pb.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} [{elapsed}] {msg}").expect("valid template"),
    );
    pb.set_message("reading and decoding");
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("reading and decoding {} ...", args.file.display());
    }
    let shown = progress::show(pb);
    let cpu0 = supraseal_c2_cli::bench::cpu_seconds();
    let t = Instant::now();
    // The library reports the bytes decoded; the batched subgroup check that
    // follows the decode has no byte count, so the bar becomes a spinner
    // with its own clock rather than sit at 100 % with a falling rate.
    let checking = std::sync::Once::new();
    let progress = |done: u64, total: u64| {
        shown.bar().set_position(done);
        if done >= total {
            checking.call_once(|| progress::to_spinner(shown.bar(), &format!("decoded in {:.1} s; batched subgroup check", t.elapsed().as_secs_f64())));
        }
    };
    let check_on = match args.check_on {
        Some(on) => on,
        None => supraseal_c2::load_check().map_err(|e| anyhow::anyhow!(e.message))?,
    };
    let loaded = Srs::load_with(&args.file, &LoadOptions { threads, check_on: Some(check_on), progress: Some(&progress) });
    let wall = t.elapsed().as_secs_f64();
    drop(shown);
    let (srs, report) = match loaded {
        Ok(v) => v,
        Err(e) => {
            // The message starts with the path.
            println!("refused: {}", supraseal_c2_cli::ffi::with_code_name(&e.message, &e.code_name()));
            return Ok(false);
        }
    };
    println!("{}: valid params file", args.file.display());
    println!("  shape        h {} · l {} · a {} · b_g1 {} · b_g2 {} points (domain 2^{})", srs.h().len(), srs.l().len(), srs.a().len(), srs.b_g1().len(), srs.b_g2().len(), srs.lg_domain_size());
    println!("  size         {} bytes ({}), {} points", report.bytes, units::bytes(report.bytes), report.points);
    println!("  wall         {wall:.2} s ({}) on {} threads", units::per_second(report.bytes, wall), report.threads);
    println!("    decode     {:.2} s (read, canonical encoding, on the curve)", report.decode_s);
    println!("    subgroup   {:.2} s after the decode (batched, at least {} random ternary rounds: a bad point passes with probability < 2^-128)", report.check_s, supraseal_c2::SUBGROUP_ROUNDS);
    match &report.device {
        Some(d) => println!(
            "    on {d}   {:.2} s of bucket sums, beside the decode (the last vector's after it){}",
            report.device_s,
            match report.cpu_fallbacks {
                0 => String::new(),
                k => format!("; {k} vector(s) checked on the CPU instead (see the log)"),
            }
        ),
        None => println!("    on the CPU (no GPU, --check-on cpu, or no vector of 2^16 points or more)"),
    }
    if report.pinned {
        println!("    page-lock  {:.2} s beside the decode: the key is pinned for GPU uploads (the first GPU call does not pin it)", report.pin_s);
    }
    println!("  CPU          {:.1} s", supraseal_c2_cli::bench::cpu_seconds() - cpu0);
    println!("  peak RSS     {} (process high-water mark; the points take {})", units::bytes(supraseal_c2_cli::bench::peak_rss()), units::bytes(report.bytes));
    Ok(true)
}

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["shape", "log_domain"]))]
struct SynthArgs {
    /// A named shape: porep-32g (one 32 GiB sector partition, 47,373,928,632 bytes) or 2^D.
    #[arg(long, value_name = "NAME")]
    shape: Option<String>,
    /// The synthetic shape with a 2^D domain (as `bench --synthetic-log-domain D`).
    #[arg(long = "log-domain", value_name = "D", value_parser = clap::value_parser!(u32).range(10..=27))]
    log_domain: Option<u32>,
    /// Output file (written through a temporary file in the same folder, then renamed).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Seed of the points (give the bench the same --seed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn synth(args: SynthArgs) -> Result<bool> {
    use supraseal_c2_cli::synthetic::Shape;
    let shape = match (args.shape, args.log_domain) {
        (Some(name), _) => Shape::named(&name).ok_or_else(|| anyhow::anyhow!("--shape {name:?}: expected porep-32g or 2^D with D in 10..=27"))?,
        (None, Some(d)) => Shape::new(d),
        (None, None) => bail!("give --shape or --log-domain"),
    };
    supraseal_c2_cli::synthetic::synth(&shape, args.seed, &args.out)?;
    Ok(true)
}

#[derive(clap::Args)]
struct ProveArgs {
    /// Circuit to prove [default: sha256].
    #[arg(long, value_enum)]
    circuit: Option<Kind>,
    /// Target size: about 2^K constraints per circuit [default: 17]. sha256
    /// needs K >= 15 (one 64-byte block is about 26,600 constraints).
    #[arg(long = "log-constraints", value_name = "K",
          value_parser = clap::value_parser!(u32).range(8..=27))]
    log_constraints: Option<u32>,
    /// Circuits per call (one proof each).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    circuits: u64,
    /// Use this params file instead of the cache. A name of the form
    /// `<circuit>-k<K>[-v<N>].params` selects the matching circuit (explicit
    /// --circuit/--log-constraints must then agree); otherwise those flags
    /// must describe it.
    #[arg(long, value_name = "PATH")]
    params: Option<PathBuf>,
    /// Backend; when given it overrides SUPRASEAL_C2_BACKEND for the library
    /// (default: that variable, else cpu when BELLMAN_NO_GPU is set, else auto).
    #[arg(long, value_enum)]
    backend: Option<Backend>,
    /// Seed for witnesses and r, s (random when omitted).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Circuit and size from a file name `<circuit>-k<K>[-v<N>].params`, if it has that form.
fn shape_from_name(path: &std::path::Path) -> Option<(Kind, u32)> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".params")?;
    let stem = match stem.rsplit_once("-v") {
        Some((head, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => stem,
    };
    let (kind, k) = stem.rsplit_once("-k")?;
    let kind = Kind::from_str(kind, true).ok()?;
    Some((kind, k.parse().ok()?))
}

const NO_KERNELS: &str = "this build has no GPU kernels: built without nvcc";

/// What to do about `why` (from [`no_gpu_reason`]) to prove on a GPU.
fn gpu_remedy(why: &str) -> &'static str {
    if why == NO_KERNELS {
        "build with kernels: NVCC=$(scripts/install-cuda-toolchain.sh | tail -n 1) cargo build --release (README, \"The GPU\"); or prove on the CPU with --backend cpu"
    } else if why.contains("not installed") {
        "install the NVIDIA driver (libcuda.so.1); or prove on the CPU with --backend cpu"
    } else {
        "check that a device is visible (nvidia-smi, CUDA_VISIBLE_DEVICES); or prove on the CPU with --backend cpu"
    }
}

/// Why the library cannot prove on GPU 0, or `None` when it can.
fn no_gpu_reason() -> Option<&'static str> {
    if !supraseal_c2::BUILT_WITH_KERNELS {
        return Some(NO_KERNELS);
    }
    if supraseal_c2::gpu_device_count() > 0 {
        return None;
    }
    // device_count is 0 both without libcuda and without a device; whether
    // the driver library loads tells the two apart.
    // SAFETY: only probes for the library (as cudarc does), then unloads it.
    let libcuda = ["libcuda.so.1", "libcuda.so"].into_iter().any(|name| unsafe { libloading::Library::new(name) }.is_ok());
    Some(if libcuda {
        "libcuda reports no CUDA device (check CUDA_VISIBLE_DEVICES)"
    } else {
        "libcuda (the NVIDIA driver library) is not installed"
    })
}

fn prove(args: ProveArgs) -> Result<bool> {
    if let Some(b) = args.backend {
        let name = match b {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::Auto => "auto",
        };
        // Single-threaded here, before any library call.
        std::env::set_var("SUPRASEAL_C2_BACKEND", name);
    }
    let requested = std::env::var("SUPRASEAL_C2_BACKEND").unwrap_or_default().trim().to_ascii_lowercase();
    // The library reads bellperson's switch where SUPRASEAL_C2_BACKEND is unset.
    let bellman_no_gpu = std::env::var("BELLMAN_NO_GPU").is_ok_and(|v| v != "0");
    let backend = match requested.as_str() {
        "" if bellman_no_gpu => "cpu (BELLMAN_NO_GPU is set)".to_string(),
        "cpu" if !supraseal_c2::BUILT_WITH_KERNELS => format!("cpu ({NO_KERNELS})"),
        "cpu" => "cpu".to_string(),
        "gpu" => match no_gpu_reason() {
            // Before the params, which can take minutes to generate or load.
            Some(why) => {
                let asked = if args.backend.is_some() { "--backend gpu" } else { "SUPRASEAL_C2_BACKEND=gpu" };
                bail!("{asked}, but no GPU is usable: {why}. To prove on a GPU, {}", gpu_remedy(why));
            }
            None => "gpu".to_string(),
        },
        "" | "auto" => match no_gpu_reason() {
            Some(why) => format!("cpu (auto: {why})"),
            None => "gpu (auto)".to_string(),
        },
        other => other.to_string(), // the library reports the invalid value
    };
    println!("backend: {backend}");
    let seed = args.seed.unwrap_or_else(|| rand::thread_rng().gen());
    let (kind, k) = match args.params.as_deref().and_then(shape_from_name) {
        Some((kind, k)) => {
            if args.circuit.is_some_and(|c| c != kind) || args.log_constraints.is_some_and(|x| x != k) {
                // Only what was given: a size filled in from the file could
                // name an instance that does not exist (sha256 below 2^15).
                let asked: Vec<String> = args
                    .circuit
                    .map(|c| format!("--circuit {}", c.name()))
                    .into_iter()
                    .chain(args.log_constraints.map(|x| format!("--log-constraints {x}")))
                    .collect();
                bail!(
                    "--params names a {}-k{k} file, which {} does not match: leave that out to prove with this file, \
                     or give a params file of the circuit asked for",
                    kind.name(),
                    asked.join(" ")
                );
            }
            (kind, k)
        }
        None => (args.circuit.unwrap_or(Kind::Sha256), args.log_constraints.unwrap_or(17)),
    };
    supraseal_c2_cli::circuits::check_size(kind, k).map_err(anyhow::Error::msg)?;
    let n = args.circuits as usize;
    println!("circuit: {} (--log-constraints {k}; its constraints and domain on the synthesis line), {n} circuit(s) per call, seed {seed}", kind.name());

    let params_path = match args.params {
        Some(p) => p,
        None => {
            let dir = params::cache_dir();
            let path = params::params_path(&dir, kind, k);
            // Said before the step: generating takes from seconds to hours.
            let pb = if path.exists() {
                None
            } else {
                Some(spinner(&format!("parameters for {}-k{k}: not in the cache ({}), generating them with bellperson", kind.name(), dir.display())))
            };
            let t = Instant::now();
            let (path, generated) = params::ensure(&dir, kind, k, seed)?;
            drop(pb);
            if generated {
                println!("params: generated with bellperson in {} and cached", ms(t.elapsed()));
            } else {
                println!("params: from the cache ({})", dir.display());
            }
            path
        }
    };
    println!("params: {}", params_path.display());

    let pb = spinner("loading params through create_SRS");
    let t = Instant::now();
    let srs = ffi::Params::open(&params_path, true).map_err(|e| anyhow::anyhow!("{e}"))?;
    let vk = params::read_vk(&params_path)?;
    drop(pb);
    println!("load: {}", ms(t.elapsed()));

    // A file of another circuit (its name does not say which) is refused
    // here, before the synthesis (minutes at large K), by its sizes: one L
    // point per aux variable, one ic point per input, the domain in h. The
    // key is the one create_SRS just cached.
    let sizes = supraseal_c2_cli::circuits::Instance::sizes(kind, k).map_err(|e| anyhow::anyhow!("counting the {} circuit: {e}", kind.name()))?;
    let key = supraseal_c2::open_params(&params_path, true).map_err(|e| anyhow::anyhow!(e.message))?;
    let file = (vk.ic.len(), key.l().len(), key.h().len() + 1);
    if file != (sizes.inputs, sizes.aux, sizes.domain()) {
        bail!(
            "{}: params file is for another circuit: it has {} inputs, {} aux variables and a 2^{} domain; {}-k{k} has {}, {} and 2^{}",
            params_path.display(),
            file.0,
            file.1,
            file.2.trailing_zeros(),
            kind.name(),
            sizes.inputs,
            sizes.aux,
            sizes.domain().trailing_zeros()
        );
    }
    drop(key);

    let pb = spinner("synthesizing witnesses");
    let t = Instant::now();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let witnesses = kit::witnesses(kind, k, n, &mut rng)?;
    drop(pb);
    let w0 = &witnesses[0].0;
    println!(
        "synthesis: {} ({} constraints, {} inputs, {} aux, domain 2^{})",
        ms(t.elapsed()),
        w0.num_constraints(),
        w0.inputs.len(),
        w0.aux.len(),
        w0.num_constraints().next_power_of_two().trailing_zeros()
    );
    for (w, inputs) in &witnesses {
        if w.public_inputs() != inputs.as_slice() {
            bail!("synthesized public inputs differ from the natively computed ones");
        }
    }

    let r: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let s: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let ws: Vec<Witness> = witnesses.iter().map(|(w, _)| w.clone()).collect();
    let pb = spinner(&format!("proving {n} circuit(s) through generate_groth16_proofs_c"));
    let t = Instant::now();
    let proofs = ffi::prove(&srs, &ws, &r, &s, std::ptr::null_mut(), -1);
    drop(pb);
    let proofs = proofs.map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("prove: {} for {n} proof(s)", ms(t.elapsed()));

    let t = Instant::now();
    let ok = proofs.iter().zip(&witnesses).filter(|(p, (_, inputs))| ffi::verify(&vk, p, inputs)).count();
    // The proofs stay in memory: `bench --proofs-out FILE` is the command that writes them.
    println!("verify: {} (proofs checked in memory, not written; `bench --proofs-out FILE` writes them)", ms(t.elapsed()));
    println!("verified {ok}/{n} proofs");
    Ok(ok == n)
}

fn main() -> ExitCode {
    // Output piped into `head` and the like: end quietly when the reader
    // goes away, as other command-line tools do, instead of a panic in println!.
    // SAFETY: sets the signal's disposition before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    // One line per proving call at info; the bench makes hundreds, so it
    // prints its table only unless SUPRASEAL_C2_LOG asks for more.
    let quiet = matches!(cli.command, Command::Bench(_));
    let filter = std::env::var("SUPRASEAL_C2_LOG")
        .unwrap_or_else(|_| if quiet { "supraseal_c2=warn" } else { "supraseal_c2=info" }.into());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(progress::LogWriter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let result = match cli.command {
        Command::Prove(args) => prove(args),
        Command::Fixture(args) => fixture::run(args).map(|()| true),
        Command::Bench(args) => supraseal_c2_cli::bench::bench(args),
        Command::Params(ParamsCommand::Synth(args)) => synth(args),
        Command::Params(ParamsCommand::Check(args)) => check(args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
