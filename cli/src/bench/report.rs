//! The bench's tables: one row per run (throughput, compute-lock busy
//! fraction, pre-staging, lock wait/hold percentiles) with its detail lines,
//! and the per-phase times of single-worker calls.

use std::time::Duration;

use supraseal_c2::CallReport;

use super::host::{epoch_ms, gib};
use super::run::Run;

/// What the bench says below its tables, on stderr: per-row notes
/// (failures, the longest memory-lock hold, fallback reasons) and each
/// row's wall-clock window as a `ROW …` line, and each call's compute-lock
/// hold as a `HOLD …` line, for scripts/gpu-samples.py.
/// Kept until the tables are printed, so that on a terminal (stdout and
/// stderr on one screen) no line lands between the table's rows.
#[derive(Default)]
pub(super) struct Notes {
    details: Vec<String>,
    windows: Vec<String>,
}

impl Notes {
    /// Adds a line to the notes printed after the tables.
    pub(super) fn add(&mut self, line: String) {
        self.details.push(line);
    }

    /// Prints the notes, then the windows, on stderr.
    pub(super) fn print(&self) {
        if !self.details.is_empty() {
            eprintln!();
            eprintln!("Notes:");
            for d in &self.details {
                eprintln!("{d}");
            }
        }
        if !self.windows.is_empty() {
            eprintln!();
            eprintln!("Row windows and compute-lock holds (wall clock, ms since the Unix epoch, and the row's peak RSS; read by scripts/gpu-samples.py):");
            for w in &self.windows {
                eprintln!("{w}");
            }
        }
    }
}

/// Prints the header of the table [`report_row`] fills.
pub(super) fn table_header() {
    println!(
        "| library | mode | W | partitions | wall s | partitions/s | s per partition (wall × W / P) | compute-lock busy | pre-staged | mem hold p50/p99 ms | mem wait p50/p99 ms | compute wait p50/p99 ms | compute hold p50/p99 ms | peak RSS GiB | failed | unverified |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
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

/// One row of the table (stdout), its notes and window kept in `notes`.
#[allow(clippy::too_many_arguments)]
pub(super) fn report_row(label: &str, mode: &str, w: usize, total: usize, r: &Run, verified: bool, t0: u128, t1: u128, rss: u64, notes: &mut Notes) -> bool {
    let proved = total - r.failures.len();
    let compute: Vec<Duration> = r.reports.iter().filter_map(|c| c.compute.map(|s| s.hold())).collect();
    let busy = compute.iter().sum::<Duration>().as_secs_f64() / r.wall.as_secs_f64();
    let staged = r.reports.iter().filter(|c| c.prestaged == Some(true)).count();
    // Calls that staged one or two of circuit 0's a, b, c, the rest in turn.
    let part = r.reports.iter().filter(|c| c.prestaged_part.is_some()).count();
    // Calls that staged more of circuit 0 while they waited for the compute lock.
    let restaged = r.reports.iter().filter(|c| c.restaged.is_some()).count();
    let part = match (part, restaged) {
        (0, 0) => String::new(),
        (p, 0) => format!(" (+{p} in part)"),
        (0, q) => format!(" ({q} restaged)"),
        (p, q) => format!(" (+{p} in part, {q} restaged)"),
    };
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
        or_dash(format!("{staged}/{}{part}", r.reports.len())),
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
    notes.windows.push(format!("ROW lib={label} mode={mode} W={w} t0_ms={t0} t1_ms={t1} peak_rss_bytes={rss}"));
    // Each call's compute-lock hold on the same clock, so that the GPU's
    // utilisation can be read within the holds (issue 31: the GPU busy
    // ≥ 90 % of the hold); an `Instant` has no epoch, so the hold is placed
    // back from now.
    let (now, now_ms) = (std::time::Instant::now(), epoch_ms());
    let at = |i: std::time::Instant| now_ms.saturating_sub(now.saturating_duration_since(i).as_millis());
    for s in r.reports.iter().filter_map(|c| c.compute) {
        notes.windows.push(format!("HOLD lib={label} mode={mode} W={w} t0_ms={} t1_ms={}", at(s.acquired), at(s.released)));
    }
    let details = &mut notes.details;
    for f in &r.failures {
        details.push(format!("  failure ({mode}, W={w}): {f}"));
    }
    // The memory lock guards the pre-stage, which only the GPU backend has:
    // on the CPU its holds are empty.
    let gpu_calls = || r.reports.iter().filter(|c| c.backend.as_str() == "gpu");
    if let Some(c) = gpu_calls().filter(|c| c.mem.is_some()).max_by_key(|c| c.mem.map(|s| s.hold())) {
        details.push(format!(
            "  longest memory-lock hold ({mode}, W={w}): {:.1} ms, of which pre-stage {:.1} ms{}",
            c.mem.map_or(0.0, |s| s.hold().as_secs_f64() * 1e3),
            c.times.stage.as_secs_f64() * 1e3,
            c.stage_detail.as_deref().map_or(String::new(), |d| format!(": {d}"))
        ));
    }
    // Memory-lock holds that overlapped another call's compute-lock hold
    // (kernels running), from the spans.
    let during: Vec<&CallReport> = gpu_calls().filter(|c| c.mem.is_some_and(|m| overlaps_compute(&r.reports, c, m))).collect();
    let dp = pct(during.iter().filter_map(|c| c.mem.map(|s| s.hold())).collect());
    if !during.is_empty() {
        details.push(format!(
            "  memory-lock hold while another call held the compute lock ({mode}, W={w}): p50/p99 {:.1}/{:.1} ms over {} of {} calls",
            dp.0,
            dp.1,
            during.len(),
            r.reports.len()
        ));
    }
    for c in r.reports.iter().filter(|c| c.prestaged == Some(false) && c.prestaged_part.is_none()).take(1) {
        details.push(format!("  fallback reason ({mode}, W={w}): {}", c.reason.as_deref().unwrap_or("not recorded")));
    }
    for c in r.reports.iter().filter(|c| c.prestaged_part.is_some()).take(1) {
        details.push(format!("  part of circuit 0 pre-staged ({mode}, W={w}): {}", c.reason.as_deref().unwrap_or("not recorded")));
    }
    r.failures.is_empty() && r.unverified == 0 && (!ours || r.reports.len() == r.calls.len())
}

/// Prints the per-phase times per partition (each call's times over its
/// circuits, averaged over the row's partitions): the single-worker rows and
/// the N-circuit calls, one row per (label, reports).
pub(super) fn phase_table(phase_rows: Vec<(String, Vec<CallReport>)>) {
    println!();
    println!("Per partition, in ms (pin: phase 0 and the pinning thread beside phase 2; join: waiting for the CPU and pinning threads after phase 2):");
    println!("| mode | backend | pin ms | stage ms | NTT ms | H-MSM ms | batch add ms | tails ms | prep (CPU) ms | G2 (CPU) ms | join ms | unpin ms | compute hold ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (mode, reports) in phase_rows {
        let k = reports.iter().map(|c| c.circuits).sum::<usize>().max(1) as f64;
        let mean = |f: &dyn Fn(&CallReport) -> Duration| reports.iter().map(f).sum::<Duration>().as_secs_f64() * 1e3 / k;
        println!(
            "| {mode} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            reports.first().map_or("?", |c| c.backend.as_str()),
            mean(&|c| c.times.pin),
            mean(&|c| c.times.stage),
            mean(&|c| c.times.ntt),
            mean(&|c| c.times.h_msm),
            mean(&|c| c.times.batch_add),
            mean(&|c| c.times.tails),
            mean(&|c| c.times.prep),
            mean(&|c| c.times.g2),
            mean(&|c| c.times.join),
            mean(&|c| c.times.unpin),
            mean(&|c| c.compute.map_or(Duration::ZERO, |s| s.hold())),
        );
    }
}
