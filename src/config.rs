//! Run-time switches of the lock protocol (docs/ARCHITECTURE.md §5), read from the
//! environment at the start of every proving call (and of every params load's
//! device check) so that a benchmark can compare modes in one process: a
//! value changed between two calls applies to the second
//! (`tests/break_switches.rs` checks it). Change them only while no call
//! is in flight: a call reads them once, at its start, but C's `setenv` (from
//! C, or Go's `os.Setenv` through cgo) is not safe against a concurrent
//! `getenv` in glibc, and Rust's own lock around the environment does not
//! cover those writers.
//!
//! | variable | values | default |
//! |---|---|---|
//! | `SUPRASEAL_C2_LOCKS` | `two` (memory lock, then compute lock) or `single` (one lock around phases 1–2) | `two` |
//! | `SUPRASEAL_C2_PRESTAGE` | phase 1: `on` (whole circuits; where not even one fits, one or two of circuit 0's a, b, c), `whole` (whole circuits only) or `off` (always the fallback path) | `on` |
//! | `SUPRASEAL_C2_PRESTAGE_RETRY` | `on` (a call whose phase 1 staged less than circuit 0's a, b, c waits for a busy compute lock taking the memory lock again each time another call's quotient gives its inputs back or its phase 2 ends, and stages more where the room allows by then; after a phase 2 has ended it looks once more, then queues) or `off` (it uploads the rest in its turn) | `on` |
//! | `SUPRASEAL_C2_VRAM_MARGIN_MB` | MiB kept free beyond the computing worker's reserve | 512 |
//! | `SUPRASEAL_C2_VRAM_LIMIT_MB` | pretend the card has this many MiB (unset: the real size) | unset |
//! | `SUPRASEAL_C2_FAULT_ALLOC` | `N@phase1`, `N@phase2` or `N@load`: the N-th device allocation in that phase (or in params loads' subgroup checks) fails once (tests; tails' scalars are then not put ahead); read only in builds with the `tools` feature | unset |
//! | `SUPRASEAL_C2_TAILS_AHEAD_MB` | tests: MiB that the tails' sets put on the device ahead over a streamed key may take together, in place of what the call's peak leaves beside its sums (`gpu::stage::tails_ahead_room`, zero at small shapes); read only in builds with the `tools` feature | unset |
//! | `SUPRASEAL_C2_PRESTAGE_PART` | tests: `1` or `2`: phase 1 stages only that many of circuit 0's a, b, c (as where no whole circuit fits beside a computing call's peak) and phase 2 uploads the rest (or, with `SUPRASEAL_C2_PRESTAGE_RETRY=on`, the call stages it while it waits for a busy compute lock); read only in builds with the `tools` feature | unset |
//! | `SUPRASEAL_C2_SPLIT_ALWAYS` | tests: `1` (or `on`) takes the split-MSM plan (`groth16::split`) whatever its tail, so a random witness's L, A and B sums have tails; `0` (or `off`); read only in builds with the `tools` feature | `0` |
//! | `SUPRASEAL_C2_NTT_RADIX` | `2`, `4` or `8`: the radix of the quotient's NTT passes (`gpu::tuning::NttTuning`: stages a thread runs in registers between two barriers) in place of the one `NttTuning::for_domain` chooses, for comparing them on a card; the proofs are the same | unset (radix 2) |
//! | `SUPRASEAL_C2_MSM_SORT_BESIDE` | `auto` (`gpu::tuning::MsmTuning::for_points`' choice: `first` from 2^24 points, else `off`; MSMs that share one bucket table sort in turn whatever the value), `on` (each window of a GPU MSM sorts its points on a second stream while the previous window accumulates: about 4 more device bytes per point), `first` (as `on`, that stream at the device's greatest priority, so that the sort's blocks take the SMs the accumulation frees before its own waiting blocks do) or `off` (each window sorts, then accumulates, on the call's stream), for comparing them on a card; the proofs are the same | `auto` |
//! | `SUPRASEAL_C2_GPU_CHUNK_MB` | MiB of bases one MSM or batch-addition chunk holds on the device (a call's peak grows with it; see `gpu::stage::compute_peak_bytes`) | 768 |
//! | `SUPRASEAL_C2_VERIFY` | `1` (or `on`): verify every proof against the key's verifying key before writing it; `0` (or `off`) | `0` |
//! | `SUPRASEAL_C2_HOST_STAGING` | how callers' pageable a/b/c reach the device: `ring` (copied through the library's page-locked staging buffers, `gpu::staging`; no host registration during a call) or `register` (each circuit's buffers page-locked with `cuMemHostRegister` while the call needs them). Buffers the caller page-locked itself go up directly either way | `ring` |
//! | `SUPRASEAL_C2_STAGING_THREADS` | CPU threads that copy one vector through the staging ring (1–64) | half the CPU pool's threads, 1–8 |
//! | `SUPRASEAL_C2_BATCH_ADD_BESIDE` | `auto` (a GPU call that streams the key runs its batch additions on a second stream beside the last circuit's H-MSM, where its memory allows: the one step bound by the PCIe link beside the one bound by the device's arithmetic), `on` (also with the key resident, where the call's peak holds the H-MSM in one piece beside them, and on the CPU backend: for comparisons and tests) or `off` (after the H-MSMs, on the call's stream) | `auto` |
//! | `SUPRASEAL_C2_COMPUTE_CACHE` | `resident` (the compute pool keeps its memory mapped between calls only over a key resident on the device) or `busy` (also over a streamed key, from the end of a call's phase 2 while another call on the device is in flight, where this call's inputs were pre-staged; trimmed when the device goes idle): the next call's phase 2 then reuses that memory instead of mapping its buffers again (`gpu::call`, `keeps_compute_cache`) | `resident` |
//! | `SUPRASEAL_C2_STREAMED_MSM` | `table` (the chunks of the H-MSM over a streamed key add into one bucket table of the windows the whole MSM takes, reduced once, where that table fits the step's memory and a chunk holds at least 16 points per bucket: `gpu::msm::SharedTable`; porep-32g's H-MSM on an H100, kernels only: 1,058 ms against 1,194), `table-ramp` (the same, its chunks growing from one to two and four chunks where their buffers and the table fit: the first upload stays one chunk's, unless its larger buffers would leave room for fewer of the next circuit's vectors staged ahead: `gpu::stage::ahead_beside_streamed`), or `chunks` (one Pippenger MSM per chunk, each reducing its own buckets); the proofs are the same | `table-ramp` |
//! | `SUPRASEAL_C2_G2_MSM` | `cpu` (the G2 MSMs of B′ on CPU threads beside the GPU, as the reference), `gpu` (on the device, under the compute lock) or `auto` (whichever [`g2_msm_on_device_auto`] estimates faster for this host and device; the per-call log says which) | `auto` |
//!
//! The backend (`SUPRASEAL_C2_BACKEND`: `cpu`, `gpu` or `auto`) is read at
//! the same time by [`backend_switch`]; where it is unset, bellperson's
//! `BELLMAN_NO_GPU` (any value but `0`) selects the CPU, as it does for
//! bellperson's own GPU code.
//!
//! Two switches are read by `create_SRS` (the params load), not by proving calls:
//!
//! | variable | values | default |
//! |---|---|---|
//! | `SUPRASEAL_C2_LOAD_THREADS` | threads that decode and check a params file (a C2 host also runs synthesis); more than the cores are not used | every core (rayon's pool) |
//! | `SUPRASEAL_C2_LOAD_CHECK` | `auto`, `cpu` or `gpu`: where the batched subgroup check's bucket sums are computed (GPU 0 for vectors of 2^16 points or more, while the next vector decodes; a vector the device cannot check, or that arrives while proving calls use the device, is checked on the CPU) | `auto` |

use crate::error::{Error, Result};
use crate::gpu::tuning::SortBeside;

pub use crate::locks::LockMode;

/// The phase an injected allocation fault targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPhase {
    /// Pre-staging under the memory lock: the call must fall back and still prove.
    Phase1,
    /// Kernels under the compute lock: the call must fail cleanly.
    Phase2,
    /// The params loader's subgroup check on the device: the load must fall
    /// back to the CPU check and still succeed.
    Load,
}

/// The switches in effect for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `SUPRASEAL_C2_LOCKS`.
    pub locks: LockMode,
    /// `SUPRASEAL_C2_PRESTAGE`: `on` or `whole` (true), `off` (false).
    pub prestage: bool,
    /// `SUPRASEAL_C2_PRESTAGE=on`: where no whole circuit fits beside a
    /// computing call's peak, phase 1 stages the first one or two of circuit
    /// 0's vectors, and phase 2 uploads the rest (`whole`: none of them).
    pub prestage_part: bool,
    /// `SUPRASEAL_C2_PRESTAGE_RETRY=on`: a call whose phase 1 left circuit
    /// 0 short stages more of it while it waits for a busy compute lock,
    /// where the room allows after a memory event (the rule of
    /// `prestage_part`: whole circuit only under `whole`).
    pub prestage_retry: bool,
    /// `SUPRASEAL_C2_VRAM_MARGIN_MB`, in bytes.
    pub vram_margin: usize,
    /// `SUPRASEAL_C2_VRAM_LIMIT_MB`, in bytes.
    pub vram_limit: Option<usize>,
    /// `SUPRASEAL_C2_FAULT_ALLOC`: (N ≥ 1, phase) (read with the `tools` feature only).
    pub fault: Option<(u64, FaultPhase)>,
    /// `SUPRASEAL_C2_TAILS_AHEAD_MB`, in bytes (read with the `tools` feature only).
    pub tails_ahead: Option<usize>,
    /// `SUPRASEAL_C2_SPLIT_ALWAYS` (read with the `tools` feature only).
    pub split_always: bool,
    /// `SUPRASEAL_C2_PRESTAGE_PART`: 1 or 2 (read with the `tools` feature only).
    pub prestage_part_forced: Option<usize>,
    /// `SUPRASEAL_C2_NTT_RADIX` as log2 of the radix, 1 ..= 3.
    pub ntt_radix_lg: Option<u32>,
    /// `SUPRASEAL_C2_MSM_SORT_BESIDE`. Process-wide: a proving call puts it
    /// into `gpu::tuning::set_sort_beside` at its start, which every MSM's
    /// sizing and launch read; a backend opened with these settings does not
    /// read it from them.
    pub msm_sort_beside: SortBeside,
    /// `SUPRASEAL_C2_G2_MSM=gpu`: the GPU backend runs the G2 MSMs of B′ on
    /// the device (phase 2) instead of on the CPU thread.
    pub g2_msm_on_device: bool,
    /// `SUPRASEAL_C2_G2_MSM=auto` (the default): the GPU backend sets
    /// `g2_msm_on_device` from the host's CPU threads and the device
    /// ([`g2_msm_on_device_auto`]).
    pub g2_msm_auto: bool,
    /// `SUPRASEAL_C2_GPU_CHUNK_MB`, in bytes: bases one MSM or batch-addition
    /// chunk holds on the device.
    pub gpu_chunk: usize,
    /// `SUPRASEAL_C2_KEY_RESIDENT=auto` (the default): the GPU backend keeps
    /// the key's bases on the device between calls where the card has room
    /// for them beside two calls ([`crate::gpu::resident`]); `off` streams
    /// them to the device in every call.
    pub key_resident: bool,
    /// `SUPRASEAL_C2_VERIFY=1`: every proof is verified against the key's
    /// verifying key before it is written; one that fails is an error
    /// (`EBADMSG`) naming the circuit, and no proof of the call is written.
    pub verify: bool,
    /// `SUPRASEAL_C2_HOST_STAGING=register`: each circuit's pageable a/b/c
    /// are page-locked (`cuMemHostRegister`) for the call instead of copied
    /// through the device's staging buffers.
    pub register_inputs: bool,
    /// `SUPRASEAL_C2_STAGING_THREADS`: threads per copy through the staging
    /// ring (`None`: the ring's default).
    pub staging_threads: Option<usize>,
    /// `SUPRASEAL_C2_BATCH_ADD_BESIDE`.
    pub batch_add_beside: Beside,
    /// `SUPRASEAL_C2_COMPUTE_CACHE=busy`: the GPU backend also keeps the
    /// compute pool's memory mapped past a call over a streamed key while
    /// another call is in flight on the device (`resident`, the default:
    /// only over a resident key).
    pub compute_cache_busy: bool,
    /// `SUPRASEAL_C2_STREAMED_MSM=table-ramp` (the default) or `table`: an
    /// MSM over streamed bases adds every chunk into one bucket table
    /// (`chunks`: one MSM per chunk).
    pub streamed_msm_table: bool,
    /// `SUPRASEAL_C2_STREAMED_MSM=table-ramp` (the default): the table's
    /// chunks grow (`gpu::msm::ramp_spans`) where staging ahead does not
    /// need their bytes (`table`: chunks of one size).
    pub streamed_msm_ramp: bool,
}

/// `SUPRASEAL_C2_BATCH_ADD_BESIDE`: where a call's batch additions run
/// (`pipeline::phases`, [`crate::backend::Backend::beside_h_msm`]). `Auto`
/// by default (as a 16 GiB card on the H200, 0.355 → 0.366 partitions/s at
/// W = 2 with 8 staging threads; BENCHMARKS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beside {
    /// On a second stream beside the last circuit's H-MSM where the GPU
    /// backend streams the key and the memory allows; else after it.
    Auto,
    /// Also where the key is resident (the memory allowing), and on the CPU
    /// backend.
    On,
    /// After the H-MSMs, on the call's stream.
    Off,
}

/// Default of `SUPRASEAL_C2_GPU_CHUNK_MB` (768 MiB): a porep-32g partition
/// then fits a 16 GiB card beside its a, b, c.
pub const GPU_CHUNK_DEFAULT: usize = 768 * MIB;

const MIB: usize = 1 << 20;

/// A test-only switch's value (`SUPRASEAL_C2_FAULT_ALLOC`,
/// `SUPRASEAL_C2_TAILS_AHEAD_MB`, `SUPRASEAL_C2_SPLIT_ALWAYS`) in builds
/// that read them (the `tools` feature, and unit tests); elsewhere `None`,
/// with one warning per process and switch, so that a shipped library never
/// acts on one nor fails a call on a malformed one.
fn test_only(value: Option<String>, name: &str) -> Option<String> {
    if cfg!(any(test, feature = "tools")) || value.is_none() {
        return value;
    }
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if !warned.iter().any(|w| w == name) {
        warned.push(name.to_string());
        tracing::warn!("{name} is set but this build reads it only with the tools feature (tests): ignored");
    }
    None
}

/// `var(name)` read as MiB, in bytes; a malformed value is `refused`.
fn mib(var: &impl Fn(&str) -> Option<String>, refused: &impl Fn(&str, &str) -> Error, name: &str) -> Result<Option<usize>> {
    var(name)
        .map(|v| {
            v.parse::<usize>()
                .ok()
                .and_then(|m| m.checked_mul(MIB))
                .ok_or_else(|| refused(name, &format!("a whole number of MiB, at most {}", usize::MAX / MIB)))
        })
        .transpose()
}

/// `SUPRASEAL_C2_LOAD_THREADS`: `None` when unset (the load uses rayon's
/// global pool). Errors: `EINVAL` naming the variable when it is not a whole
/// number from 1 to 4096.
pub fn load_threads() -> Result<Option<usize>> {
    load_threads_from(std::env::var_os("SUPRASEAL_C2_LOAD_THREADS").map(|v| v.to_string_lossy().into_owned()))
}

/// The backend a call asks for (`SUPRASEAL_C2_BACKEND`, `BELLMAN_NO_GPU`):
/// [`backend_switch`] resolves it once, `pipeline::select` acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when one is usable, else the CPU (the default).
    Auto,
    Cpu,
    /// The GPU, an error (`ENODEV`) when none is usable.
    Gpu,
}

/// The backend requested: `SUPRASEAL_C2_BACKEND` trimmed and in lower case
/// (a value that is not UTF-8 is kept lossily, so it is malformed rather than
/// absent); where that is unset or empty, `cpu` when bellperson's
/// `BELLMAN_NO_GPU` is set, else auto. Errors: `EINVAL` for a value other
/// than cpu, gpu or auto.
pub(crate) fn backend_switch() -> Result<BackendChoice> {
    backend_from(
        std::env::var_os("SUPRASEAL_C2_BACKEND").map(|v| v.to_string_lossy().into_owned()),
        std::env::var("BELLMAN_NO_GPU").ok().as_deref(),
    )
}

/// [`backend_switch`] from the two variables' values. `BELLMAN_NO_GPU` is
/// read as bellperson reads it: set (as UTF-8) to anything but `0`, the
/// empty value included, it turns the GPU off. An explicit
/// `SUPRASEAL_C2_BACKEND` wins: it names this library and is the narrower choice.
fn backend_from(backend: Option<String>, bellman_no_gpu: Option<&str>) -> Result<BackendChoice> {
    match backend.as_deref().map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty()).as_deref() {
        Some("cpu") => Ok(BackendChoice::Cpu),
        Some("gpu") => Ok(BackendChoice::Gpu),
        Some("auto") => Ok(BackendChoice::Auto),
        Some(_) => Err(Error::invalid(format!("SUPRASEAL_C2_BACKEND is {:?} but must be cpu, gpu or auto", backend.unwrap_or_default()))),
        None if bellman_no_gpu.is_some_and(|v| v != "0") => Ok(BackendChoice::Cpu),
        None => Ok(BackendChoice::Auto),
    }
}

/// Where the params loader runs its batched subgroup check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOn {
    /// On GPU 0 when this build has kernels and a device is usable, else on
    /// the CPU; a vector whose device check cannot run (no memory, a CUDA
    /// error) is checked on the CPU instead.
    Auto,
    /// On the CPU threads of the load.
    Cpu,
    /// On GPU 0, an error when no GPU is usable (a vector whose device check
    /// fails to run is still checked on the CPU).
    Gpu,
}

impl std::str::FromStr for CheckOn {
    type Err = String;
    fn from_str(v: &str) -> std::result::Result<Self, String> {
        match v.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(CheckOn::Auto),
            "cpu" => Ok(CheckOn::Cpu),
            "gpu" => Ok(CheckOn::Gpu),
            _ => Err(format!("{v:?} is not one of auto, cpu, gpu")),
        }
    }
}

/// `SUPRASEAL_C2_LOAD_CHECK` (`auto`, `cpu` or `gpu`; unset or empty: auto).
/// Errors: `EINVAL` naming the variable for any other value.
pub fn load_check() -> Result<CheckOn> {
    std::env::var_os("SUPRASEAL_C2_LOAD_CHECK")
        .map_or(Ok(CheckOn::Auto), |v| v.to_string_lossy().parse())
        .map_err(|why| Error::invalid(format!("SUPRASEAL_C2_LOAD_CHECK is {why}")))
}

/// How the params loader reads the file: reader threads, bytes per read,
/// and whether each reader bypasses the page cache (`O_DIRECT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadIo {
    /// Reader threads (`SUPRASEAL_C2_LOAD_READERS`, 0–256; 0: each decode
    /// thread reads its own chunks). They sleep in `pread`, so the load's
    /// thread cap does not count them.
    pub readers: usize,
    /// Bytes per read (`SUPRASEAL_C2_LOAD_READ_KB`, 64 KiB to 64 MiB).
    pub read_bytes: usize,
    /// `O_DIRECT` readers where the file system takes them
    /// (`SUPRASEAL_C2_LOAD_DIRECT`, `on` or `off`).
    pub direct: bool,
}

impl Default for LoadIo {
    /// 16 readers of 1.5 MiB with `O_DIRECT`: the fastest of the settings
    /// measured on the H200 host (BENCHMARKS.md, "Params load").
    fn default() -> Self {
        LoadIo { readers: 16, read_bytes: 1536 << 10, direct: true }
    }
}

/// The loader's read settings from `SUPRASEAL_C2_LOAD_READERS`,
/// `SUPRASEAL_C2_LOAD_READ_KB` and `SUPRASEAL_C2_LOAD_DIRECT` (each unset or
/// empty: its default). Errors: `EINVAL` naming the variable and its range.
pub fn load_io() -> Result<LoadIo> {
    let var = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()).filter(|v| !v.is_empty());
    load_io_from(var("SUPRASEAL_C2_LOAD_READERS"), var("SUPRASEAL_C2_LOAD_READ_KB"), var("SUPRASEAL_C2_LOAD_DIRECT"))
}

fn load_io_from(readers: Option<String>, read_kb: Option<String>, direct: Option<String>) -> Result<LoadIo> {
    let d = LoadIo::default();
    let number = |name: &str, v: Option<String>, lo: usize, hi: usize, unit: &str| -> Result<Option<usize>> {
        v.map(|v| {
            v.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| Error::invalid(format!("{name} is {v:?} but must be a whole number of {unit} from {lo} to {hi}")))
        })
        .transpose()
    };
    let readers = number("SUPRASEAL_C2_LOAD_READERS", readers, 0, 256, "threads")?.unwrap_or(d.readers);
    let read_bytes = number("SUPRASEAL_C2_LOAD_READ_KB", read_kb, 64, 65536, "KiB")?.map_or(d.read_bytes, |k| k << 10);
    let direct = match direct.as_deref().map(|v| v.trim().to_ascii_lowercase()) {
        None => d.direct,
        Some(v) if v == "on" || v == "1" => true,
        Some(v) if v == "off" || v == "0" => false,
        Some(_) => return Err(Error::invalid(format!("SUPRASEAL_C2_LOAD_DIRECT is {:?} but must be on or off", direct.unwrap_or_default()))),
    };
    // Each reader holds a buffer of this size in flight, and an O_DIRECT one
    // of its own: the product bounds the readers' share of the load's memory
    // beside the points (the decode threads hold one buffer each on top).
    if readers.saturating_mul(read_bytes) > MAX_READ_AHEAD {
        return Err(Error::invalid(format!(
            "SUPRASEAL_C2_LOAD_READERS ({readers}) × SUPRASEAL_C2_LOAD_READ_KB ({} KiB) is {} MiB of reads in flight; at most {} MiB",
            read_bytes >> 10,
            (readers * read_bytes) >> 20,
            MAX_READ_AHEAD >> 20
        )));
    }
    Ok(LoadIo { readers, read_bytes, direct })
}

/// The most bytes of reads the loader's reader threads may have in flight.
const MAX_READ_AHEAD: usize = 1 << 30;

/// Empty is unset, as for the other switches; anything else must parse.
fn load_threads_from(v: Option<String>) -> Result<Option<usize>> {
    v.filter(|v| !v.is_empty()).map(|v| {
        v.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=4096).contains(n))
            .ok_or_else(|| Error::invalid(format!("SUPRASEAL_C2_LOAD_THREADS is {v:?} but must be a whole number of threads from 1 to 4096")))
    })
    .transpose()
}

impl Default for Settings {
    /// Every switch at its default (two locks, pre-staging on, 512 MiB margin,
    /// the G2 MSMs' placement chosen per host, 768 MiB chunks).
    fn default() -> Self {
        Settings {
            locks: LockMode::Two,
            prestage: true,
            prestage_part: true,
            prestage_retry: true,
            vram_margin: 512 * MIB,
            vram_limit: None,
            fault: None,
            tails_ahead: None,
            split_always: false,
            prestage_part_forced: None,
            ntt_radix_lg: None,
            msm_sort_beside: SortBeside::Auto,
            g2_msm_on_device: false,
            g2_msm_auto: true,
            gpu_chunk: GPU_CHUNK_DEFAULT,
            key_resident: true,
            verify: false,
            register_inputs: false,
            staging_threads: None,
            batch_add_beside: Beside::Auto,
            compute_cache_busy: false,
            streamed_msm_table: true,
            streamed_msm_ramp: true,
        }
    }
}

impl Settings {
    /// Reads the variables above. Errors: `EINVAL` naming the variable and
    /// the accepted values when one is malformed.
    pub fn from_env() -> Result<Settings> {
        // var_os: a value that is not UTF-8 is malformed, not absent.
        Self::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// [`Settings::from_env`] with the variables looked up through `get`.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Settings> {
        let var = |name: &str| get(name).map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty());
        // Messages quote a value as it was set, not as `var` compares it.
        let typed = |name: &str| get(name).unwrap_or_default();
        let refused = |name: &str, must: &str| Error::invalid(format!("{name} is {:?} but must be {must}", typed(name)));
        let one_or_zero = |name: &str, v: Option<String>| match v.as_deref() {
            None | Some("0") | Some("off") => Ok(false),
            Some("1") | Some("on") => Ok(true),
            Some(_) => Err(refused(name, "1 (on) or 0 (off)")),
        };
        let locks = match var("SUPRASEAL_C2_LOCKS").as_deref() {
            None | Some("two") => LockMode::Two,
            Some("single") => LockMode::Single,
            Some(_) => return Err(refused("SUPRASEAL_C2_LOCKS", "two or single")),
        };
        let (prestage, prestage_part) = match var("SUPRASEAL_C2_PRESTAGE").as_deref() {
            None | Some("on") => (true, true),
            Some("whole") => (true, false),
            Some("off") => (false, false),
            Some(_) => return Err(refused("SUPRASEAL_C2_PRESTAGE", "on, whole or off")),
        };
        let prestage_retry = match var("SUPRASEAL_C2_PRESTAGE_RETRY").as_deref() {
            None | Some("on") => true,
            Some("off") => false,
            Some(_) => return Err(refused("SUPRASEAL_C2_PRESTAGE_RETRY", "on or off")),
        };
        let (g2_msm_on_device, g2_msm_auto) = match var("SUPRASEAL_C2_G2_MSM").as_deref() {
            None | Some("auto") => (false, true),
            Some("cpu") => (false, false),
            Some("gpu") => (true, false),
            Some(_) => return Err(refused("SUPRASEAL_C2_G2_MSM", "auto, cpu or gpu")),
        };
        let key_resident = match var("SUPRASEAL_C2_KEY_RESIDENT").as_deref() {
            None | Some("auto") => true,
            Some("off") => false,
            Some(_) => return Err(refused("SUPRASEAL_C2_KEY_RESIDENT", "auto or off")),
        };
        let verify = one_or_zero("SUPRASEAL_C2_VERIFY", var("SUPRASEAL_C2_VERIFY"))?;
        // The test-only switches, through `test_only`.
        let test_var = |name: &str| test_only(var(name), name);
        let split_always = one_or_zero("SUPRASEAL_C2_SPLIT_ALWAYS", test_var("SUPRASEAL_C2_SPLIT_ALWAYS"))?;
        let prestage_part_forced = match test_var("SUPRASEAL_C2_PRESTAGE_PART").as_deref() {
            None => None,
            Some("1") => Some(1),
            Some("2") => Some(2),
            Some(_) => return Err(refused("SUPRASEAL_C2_PRESTAGE_PART", "1 or 2")),
        };
        let ntt_radix_lg = match var("SUPRASEAL_C2_NTT_RADIX").as_deref() {
            None => None,
            Some("2") => Some(1),
            Some("4") => Some(2),
            Some("8") => Some(3),
            Some(_) => return Err(refused("SUPRASEAL_C2_NTT_RADIX", "2, 4 or 8")),
        };
        let msm_sort_beside = match var("SUPRASEAL_C2_MSM_SORT_BESIDE").as_deref() {
            None | Some("auto") => SortBeside::Auto,
            Some("on") => SortBeside::On,
            Some("first") => SortBeside::First,
            Some("off") => SortBeside::Off,
            Some(_) => return Err(refused("SUPRASEAL_C2_MSM_SORT_BESIDE", "auto, on, first or off")),
        };
        let register_inputs = match var("SUPRASEAL_C2_HOST_STAGING").as_deref() {
            None | Some("ring") => false,
            Some("register") => true,
            Some(_) => return Err(refused("SUPRASEAL_C2_HOST_STAGING", "ring or register")),
        };
        let staging_threads = var("SUPRASEAL_C2_STAGING_THREADS")
            .map(|v| {
                v.parse::<usize>()
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| refused("SUPRASEAL_C2_STAGING_THREADS", "a whole number of threads from 1 to 64"))
            })
            .transpose()?;
        let batch_add_beside = match var("SUPRASEAL_C2_BATCH_ADD_BESIDE").as_deref() {
            None | Some("auto") => Beside::Auto,
            Some("on") => Beside::On,
            Some("off") => Beside::Off,
            Some(_) => return Err(refused("SUPRASEAL_C2_BATCH_ADD_BESIDE", "auto, on or off")),
        };
        let compute_cache_busy = match var("SUPRASEAL_C2_COMPUTE_CACHE").as_deref() {
            None | Some("resident") => false,
            Some("busy") => true,
            Some(_) => return Err(refused("SUPRASEAL_C2_COMPUTE_CACHE", "resident or busy")),
        };
        let (streamed_msm_table, streamed_msm_ramp) = match var("SUPRASEAL_C2_STREAMED_MSM").as_deref() {
            Some("table") => (true, false),
            None | Some("table-ramp") => (true, true),
            Some("chunks") => (false, false),
            Some(_) => return Err(refused("SUPRASEAL_C2_STREAMED_MSM", "table, table-ramp or chunks")),
        };
        let fault = test_var("SUPRASEAL_C2_FAULT_ALLOC")
            .map(|v| {
                let bad = || refused("SUPRASEAL_C2_FAULT_ALLOC", "N@phase1, N@phase2 or N@load (N ≥ 1)");
                let (n, phase) = v.split_once('@').ok_or_else(bad)?;
                let n = n.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(bad)?;
                let phase = match phase {
                    "phase1" => FaultPhase::Phase1,
                    "phase2" => FaultPhase::Phase2,
                    "load" => FaultPhase::Load,
                    _ => return Err(bad()),
                };
                Ok((n, phase))
            })
            .transpose()?;
        Ok(Settings {
            locks,
            prestage,
            prestage_part,
            prestage_retry,
            vram_margin: mib(&var, &refused, "SUPRASEAL_C2_VRAM_MARGIN_MB")?.unwrap_or(512 * MIB),
            vram_limit: mib(&var, &refused, "SUPRASEAL_C2_VRAM_LIMIT_MB")?,
            fault,
            tails_ahead: mib(&test_var, &refused, "SUPRASEAL_C2_TAILS_AHEAD_MB")?,
            split_always,
            prestage_part_forced,
            ntt_radix_lg,
            msm_sort_beside,
            g2_msm_on_device,
            g2_msm_auto,
            gpu_chunk: match mib(&var, &refused, "SUPRASEAL_C2_GPU_CHUNK_MB")? {
                None => GPU_CHUNK_DEFAULT,
                Some(0) => return Err(refused("SUPRASEAL_C2_GPU_CHUNK_MB", "at least 1 MiB")),
                Some(b) => b,
            },
            key_resident,
            verify,
            register_inputs,
            staging_threads,
            batch_add_beside,
            compute_cache_busy,
            streamed_msm_table,
            streamed_msm_ramp,
        })
    }

    /// Free device memory as admission sees it: the measured `free` bytes, or
    /// with a limit L, `min(free, L − (total − free))` — a card of L bytes
    /// with the same amount in use.
    pub fn effective_free(&self, free: usize, total: usize) -> usize {
        match self.vram_limit {
            Some(limit) => free.min(limit.saturating_sub(total.saturating_sub(free))),
            None => free,
        }
    }
}

/// Where the G2 MSMs of B′ go by default: on the device when the CPU
/// threads would take longer for them than the device takes for the rest of
/// phase 2 (they run beside it, so only the excess costs). From the H200
/// host at 2^24 (16 threads, 132 SMs at 1,980 MHz): 2.29 s of CPU G2 MSMs
/// against 0.74 s of compute-lock hold per partition. Both are scaled, the
/// CPU by its thread count and the device by SMs × clock, and both grow
/// alike with the partition's size, so the choice does not depend on it:
/// the device wins below about 50 threads with an H200, about 36 with a
/// 76-SM card at 2.5 GHz.
pub fn g2_msm_on_device_auto(cpu_threads: usize, sms: usize, clock_mhz: usize) -> bool {
    let cpu_s = 2.29 * 16.0 / cpu_threads.max(1) as f64;
    let device_s = 0.74 * (132.0 * 1980.0) / (sms.max(1) * clock_mhz.max(1)) as f64;
    cpu_s > device_s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g2_placement_follows_the_threads_and_the_device() {
        // The measured host: the device.
        assert!(g2_msm_on_device_auto(16, 132, 1980));
        // Many threads beside the same card: the CPU.
        assert!(!g2_msm_on_device_auto(64, 132, 1980));
        // A smaller card moves the break-even down (76 SMs at 2.5 GHz: ~36 threads).
        assert!(g2_msm_on_device_auto(32, 76, 2505));
        assert!(!g2_msm_on_device_auto(40, 76, 2505));
        // Unknown attributes (0) do not divide by zero.
        let _ = g2_msm_on_device_auto(0, 0, 0);
    }

    #[test]
    fn effective_free_models_a_smaller_card() {
        let s = Settings { vram_margin: 0, vram_limit: Some(16 << 30), ..Settings::default() };
        // 141 GiB card with 10 GiB in use behaves like a 16 GiB card with 10 GiB in use.
        assert_eq!(s.effective_free(131 << 30, 141 << 30), 6 << 30);
        // Limit above what is in use but real free smaller: the real value wins.
        assert_eq!(s.effective_free(1 << 30, 2 << 30), 1 << 30);
        // More in use than the limit: nothing is free.
        assert_eq!(s.effective_free(100 << 30, 141 << 30), 0);
        let unlimited = Settings { vram_limit: None, ..s };
        assert_eq!(unlimited.effective_free(5, 10), 5);
    }

    fn parse(pairs: &[(&str, &str)]) -> Result<Settings> {
        Settings::from_lookup(|k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn defaults_and_every_switch_parse() {
        let d = parse(&[]).unwrap();
        assert_eq!(
            (d.locks, d.prestage, d.vram_margin, d.vram_limit, d.fault, d.g2_msm_on_device, d.key_resident),
            (LockMode::Two, true, 512 << 20, None, None, false, true)
        );
        let s = parse(&[
            ("SUPRASEAL_C2_LOCKS", "Single"),
            ("SUPRASEAL_C2_PRESTAGE", "off"),
            ("SUPRASEAL_C2_VRAM_MARGIN_MB", "0"),
            ("SUPRASEAL_C2_VRAM_LIMIT_MB", "16384"),
            ("SUPRASEAL_C2_FAULT_ALLOC", "3@phase2"),
            ("SUPRASEAL_C2_G2_MSM", "GPU"),
            ("SUPRASEAL_C2_KEY_RESIDENT", "Off"),
            ("SUPRASEAL_C2_VERIFY", "1"),
        ])
        .unwrap();
        assert_eq!(
            (s.locks, s.prestage, s.vram_margin, s.vram_limit, s.fault, s.g2_msm_on_device, s.key_resident, s.verify),
            (LockMode::Single, false, 0, Some(16 << 30), Some((3, FaultPhase::Phase2)), true, false, true)
        );
        assert!(!d.verify, "off by default");
        assert!(d.prestage_part && !s.prestage_part, "part of circuit 0 with `on` only");
        assert_eq!(d.prestage_part_forced, None);
        assert_eq!(parse(&[("SUPRASEAL_C2_PRESTAGE_PART", " 2 ")]).unwrap().prestage_part_forced, Some(2));
        assert!(parse(&[("SUPRASEAL_C2_PRESTAGE_PART", "3")]).unwrap_err().message.contains("SUPRASEAL_C2_PRESTAGE_PART"));
        let whole = parse(&[("SUPRASEAL_C2_PRESTAGE", "Whole")]).unwrap();
        assert!(whole.prestage && !whole.prestage_part);
        assert!(d.prestage_retry && !parse(&[("SUPRASEAL_C2_PRESTAGE_RETRY", " Off ")]).unwrap().prestage_retry);
        for (v, on) in [("on", true), (" ON ", true), ("0", false), ("off", false), ("", false)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_VERIFY", v)]).unwrap().verify, on, "SUPRASEAL_C2_VERIFY={v:?}");
        }
        assert!(parse(&[("SUPRASEAL_C2_KEY_RESIDENT", "yes")]).unwrap_err().message.contains("auto or off"));
        assert!(!d.register_inputs, "the staging ring by default");
        assert_eq!(d.staging_threads, None);
        assert_eq!(parse(&[("SUPRASEAL_C2_STAGING_THREADS", " 8 ")]).unwrap().staging_threads, Some(8));
        assert_eq!(d.batch_add_beside, Beside::Auto);
        assert!(!d.split_always);
        for (v, on) in [("1", true), ("on", true), ("0", false)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_SPLIT_ALWAYS", v)]).unwrap().split_always, on, "SUPRASEAL_C2_SPLIT_ALWAYS={v:?}");
        }
        assert!(parse(&[("SUPRASEAL_C2_SPLIT_ALWAYS", "yes")]).unwrap_err().message.contains("SUPRASEAL_C2_SPLIT_ALWAYS is \"yes\""));
        assert_eq!(d.ntt_radix_lg, None, "NttTuning::for_domain's choice by default");
        for (v, lg) in [("2", 1), (" 4", 2), ("8", 3)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_NTT_RADIX", v)]).unwrap().ntt_radix_lg, Some(lg), "SUPRASEAL_C2_NTT_RADIX={v:?}");
        }
        for v in ["16", "1", "radix4"] {
            assert!(parse(&[("SUPRASEAL_C2_NTT_RADIX", v)]).unwrap_err().message.contains("2, 4 or 8"), "SUPRASEAL_C2_NTT_RADIX={v:?}");
        }
        assert_eq!(d.msm_sort_beside, SortBeside::Auto, "MsmTuning::for_points' choice by default");
        for (v, b) in [("auto", SortBeside::Auto), ("", SortBeside::Auto), (" On", SortBeside::On), ("FIRST", SortBeside::First), ("off", SortBeside::Off)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_MSM_SORT_BESIDE", v)]).unwrap().msm_sort_beside, b, "SUPRASEAL_C2_MSM_SORT_BESIDE={v:?}");
        }
        assert!(parse(&[("SUPRASEAL_C2_MSM_SORT_BESIDE", "1")]).unwrap_err().message.contains("auto, on, first or off"));
        for (v, b) in [("auto", Beside::Auto), (" ON", Beside::On), ("off", Beside::Off)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_BATCH_ADD_BESIDE", v)]).unwrap().batch_add_beside, b, "SUPRASEAL_C2_BATCH_ADD_BESIDE={v:?}");
        }
        assert!(!d.compute_cache_busy, "kept over a resident key only, by default");
        for (v, busy) in [("resident", false), (" Busy ", true)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_COMPUTE_CACHE", v)]).unwrap().compute_cache_busy, busy, "SUPRASEAL_C2_COMPUTE_CACHE={v:?}");
        }
        assert!(parse(&[("SUPRASEAL_C2_COMPUTE_CACHE", "on")]).unwrap_err().message.contains("resident or busy"));
        assert!(d.streamed_msm_table, "one shared bucket table, by default");
        assert!(d.streamed_msm_ramp, "its chunks ramped, by default");
        for (v, table, ramp) in [("chunks", false, false), (" TABLE", true, false), ("table-ramp", true, true)] {
            let s = parse(&[("SUPRASEAL_C2_STREAMED_MSM", v)]).unwrap();
            assert_eq!((s.streamed_msm_table, s.streamed_msm_ramp), (table, ramp), "SUPRASEAL_C2_STREAMED_MSM={v:?}");
        }
        assert!(parse(&[("SUPRASEAL_C2_STREAMED_MSM", "shared")]).unwrap_err().message.contains("table, table-ramp or chunks"));
        for (v, register) in [("ring", false), ("Register", true)] {
            assert_eq!(parse(&[("SUPRASEAL_C2_HOST_STAGING", v)]).unwrap().register_inputs, register, "SUPRASEAL_C2_HOST_STAGING={v:?}");
        }
        // A refused value is quoted as it was set, case and blanks kept.
        for (name, v) in [("SUPRASEAL_C2_LOCKS", " Double"), ("SUPRASEAL_C2_VRAM_LIMIT_MB", "16G"), ("SUPRASEAL_C2_FAULT_ALLOC", "2@Phase9")] {
            let e = parse(&[(name, v)]).unwrap_err();
            assert!(e.message.starts_with(&format!("{name} is {v:?} but must be")), "{}", e.message);
        }
    }

    #[test]
    fn an_explicit_backend_wins_over_bellman_no_gpu() {
        use BackendChoice::{Auto, Cpu, Gpu};
        let b = |backend: Option<&str>, no_gpu: Option<&str>| backend_from(backend.map(String::from), no_gpu).unwrap();
        // BELLMAN_NO_GPU alone: as bellperson reads it, anything but "0" turns the GPU off.
        assert_eq!(b(None, None), Auto);
        assert_eq!(b(None, Some("1")), Cpu);
        assert_eq!(b(None, Some("yes")), Cpu);
        assert_eq!(b(None, Some("")), Cpu);
        assert_eq!(b(None, Some("0")), Auto);
        // An empty or blank SUPRASEAL_C2_BACKEND is unset.
        assert_eq!(b(Some(" "), Some("1")), Cpu);
        // An explicit SUPRASEAL_C2_BACKEND wins, whatever its value.
        assert_eq!(b(Some("GPU"), Some("1")), Gpu);
        assert_eq!(b(Some("auto"), Some("1")), Auto);
        assert_eq!(b(Some(" cpu "), None), Cpu);
        // Even over BELLMAN_NO_GPU, an unknown value is refused.
        let e = backend_from(Some("TPU ".into()), Some("1")).unwrap_err();
        assert_eq!(e.message, "SUPRASEAL_C2_BACKEND is \"TPU \" but must be cpu, gpu or auto");
    }

    #[test]
    fn load_threads_parse_and_refuse_bad_values() {
        assert_eq!(load_threads_from(None).unwrap(), None);
        assert_eq!(load_threads_from(Some("3".into())).unwrap(), Some(3));
        assert_eq!(load_threads_from(Some(String::new())).unwrap(), None, "empty is unset");
        for bad in ["0", "-1", "many", " ", "5000", "\u{fffd}"] {
            let e = load_threads_from(Some(bad.into())).unwrap_err();
            assert!(e.message.contains("SUPRASEAL_C2_LOAD_THREADS"), "{}", e.message);
        }
    }

    #[test]
    fn load_io_parses_and_refuses_bad_values() {
        assert_eq!(load_io_from(None, None, None).unwrap(), LoadIo::default());
        let io = load_io_from(Some("32".into()), Some("4096".into()), Some("off".into())).unwrap();
        assert_eq!(io, LoadIo { readers: 32, read_bytes: 4 << 20, direct: false });
        assert_eq!(load_io_from(Some("0".into()), None, Some("ON".into())).unwrap().readers, 0);
        // 256 × 4 MiB is the largest product allowed; one more KiB is refused.
        assert!(load_io_from(Some("256".into()), Some("4096".into()), None).is_ok());
        let e = load_io_from(Some("256".into()), Some("4097".into()), None).unwrap_err();
        assert!(e.message.contains("SUPRASEAL_C2_LOAD_READERS (256) × SUPRASEAL_C2_LOAD_READ_KB (4097 KiB)"), "{}", e.message);
        for (readers, kb, direct, name) in [
            (Some("257"), None, None, "SUPRASEAL_C2_LOAD_READERS"),
            (Some("x"), None, None, "SUPRASEAL_C2_LOAD_READERS"),
            (None, Some("32"), None, "SUPRASEAL_C2_LOAD_READ_KB"),
            (None, Some("1M"), None, "SUPRASEAL_C2_LOAD_READ_KB"),
            (None, None, Some("yes"), "SUPRASEAL_C2_LOAD_DIRECT"),
        ] {
            let e = load_io_from(readers.map(Into::into), kb.map(Into::into), direct.map(Into::into)).unwrap_err();
            assert!(e.message.contains(name), "{}", e.message);
        }
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (k, v) in [
            ("SUPRASEAL_C2_LOCKS", "three"),
            ("SUPRASEAL_C2_PRESTAGE", "maybe"),
            ("SUPRASEAL_C2_PRESTAGE_RETRY", "1"),
            ("SUPRASEAL_C2_VRAM_MARGIN_MB", "-1"),
            ("SUPRASEAL_C2_VRAM_LIMIT_MB", "16G"),
            ("SUPRASEAL_C2_FAULT_ALLOC", "0@phase1"),
            ("SUPRASEAL_C2_FAULT_ALLOC", "2@phase3"),
            ("SUPRASEAL_C2_FAULT_ALLOC", "2"),
            ("SUPRASEAL_C2_TAILS_AHEAD_MB", "lots"),
            ("SUPRASEAL_C2_G2_MSM", "fpga"),
            ("SUPRASEAL_C2_VERIFY", "yes"),
            ("SUPRASEAL_C2_VERIFY", "2"),
            ("SUPRASEAL_C2_HOST_STAGING", "pin"),
            ("SUPRASEAL_C2_STAGING_THREADS", "0"),
            ("SUPRASEAL_C2_STAGING_THREADS", "65"),
            ("SUPRASEAL_C2_BATCH_ADD_BESIDE", "yes"),
            ("SUPRASEAL_C2_COMPUTE_CACHE", "always"),
        ] {
            let e = parse(&[(k, v)]).unwrap_err();
            assert_eq!(e.code, crate::error::code::EINVAL);
            assert!(e.message.contains(k), "{e}");
        }
    }
}
