//! `bench --trace FILE`: the run as a Chrome / Perfetto trace (the JSON
//! "trace event" format: open it in ui.perfetto.dev or chrome://tracing).
//!
//! One process per bench row (library, mode, W), one track per worker. Each
//! proving call is a `call` slice holding, in order: `phase 0` (validation,
//! pinning, CPU thread start), `memory-lock wait`, `phase 1 (memory lock)`,
//! `compute-lock wait`, `phase 2 (compute lock)` (args: pre-staged or
//! fallback), `phase 3` (unpin, join, epilogue). A counter track `free VRAM`
//! carries the free device memory each call saw before phase 1 and after
//! phase 2. [`check`] verifies a trace's structure (the test of a CPU run
//! calls it).

use std::collections::HashMap;
use std::thread::ThreadId;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use serde_json::{json, Value};

use supraseal_c2::CallReport;

/// One proving call as the bench saw it.
#[derive(Clone, Debug)]
pub struct Call {
    pub worker: usize,
    pub thread: ThreadId,
    pub start: Instant,
    pub end: Instant,
}

/// Where a slice goes: the row (process), the worker (thread) and the call.
#[derive(Clone, Copy)]
struct Lane {
    pid: usize,
    tid: usize,
    call: usize,
}

/// Collects the events of a run.
pub struct Trace {
    origin: Instant,
    events: Vec<Value>,
    calls: usize,
}

impl Trace {
    pub fn new(origin: Instant) -> Trace {
        Trace { origin, events: Vec::new(), calls: 0 }
    }

    fn us(&self, t: Instant) -> f64 {
        (t.saturating_duration_since(self.origin).as_secs_f64() * 1e6 * 1000.0).round() / 1000.0
    }

    fn slice(&mut self, lane: Lane, name: &str, from: Instant, to: Instant, args: Value) {
        let (ts, end) = (self.us(from), self.us(to));
        let mut a = args;
        a["call"] = json!(lane.call);
        self.events.push(json!({"name": name, "ph": "X", "pid": lane.pid, "tid": lane.tid, "ts": ts, "dur": (end - ts).max(0.0), "args": a}));
    }

    /// Adds one bench row: its calls and the library's reports of them
    /// (matched per thread, in call order; the library records a report per
    /// call). Reports are absent for the reference library.
    pub fn row(&mut self, label: &str, calls: &[Call], reports: &[CallReport]) {
        let pid = self.events.iter().filter(|e| e["name"] == "process_name").count() + 1;
        self.events.push(json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": label}}));
        let mut by_thread: HashMap<ThreadId, std::collections::VecDeque<&CallReport>> = HashMap::new();
        for r in reports {
            by_thread.entry(r.thread).or_default().push_back(r);
        }
        let mut ordered: Vec<&Call> = calls.iter().collect();
        ordered.sort_by_key(|c| c.start);
        for c in ordered {
            let id = self.calls;
            self.calls += 1;
            let tid = c.worker + 1;
            let report = by_thread.get_mut(&c.thread).and_then(|q| q.pop_front());
            let lane = Lane { pid, tid, call: id };
            self.slice(lane, "call", c.start, c.end, json!({"worker": c.worker}));
            let Some(r) = report else { continue };
            let first = r.mem.or(r.compute).map_or(c.end, |s| s.requested);
            self.slice(lane, "phase 0", c.start, first, json!({}));
            if let Some(m) = r.mem {
                self.slice(lane, "memory-lock wait", m.requested, m.acquired, json!({}));
                self.slice(lane, "phase 1 (memory lock)", m.acquired, m.released, json!({}));
                if let Some(free) = r.free_before {
                    let ts = self.us(m.requested);
                    self.events.push(json!({"name": "free VRAM", "ph": "C", "pid": pid, "ts": ts, "args": {"GiB": free as f64 / (1u64 << 30) as f64}}));
                }
            }
            if let Some(k) = r.compute {
                let path = match (r.prestaged, r.prestaged_part) {
                    (Some(true), _) => "pre-staged",
                    (Some(false), Some(_)) => "pre-staged in part",
                    (Some(false), None) => "fallback",
                    (None, _) => "nothing to stage",
                };
                self.slice(lane, "compute-lock wait", k.requested, k.acquired, json!({}));
                self.slice(lane, "phase 2 (compute lock)", k.acquired, k.released, json!({"path": path, "backend": r.backend.as_str()}));
                self.slice(lane, "phase 3", k.released, c.end, json!({}));
                if let Some(free) = r.free_after {
                    let ts = self.us(k.released);
                    self.events.push(json!({"name": "free VRAM", "ph": "C", "pid": pid, "ts": ts, "args": {"GiB": free as f64 / (1u64 << 30) as f64}}));
                }
            }
        }
    }

    /// Writes the trace as JSON.
    pub fn write(&self, mut out: impl std::io::Write) -> Result<()> {
        let doc = json!({"traceEvents": self.events, "displayTimeUnit": "ms"});
        out.write_all(&serde_json::to_vec(&doc)?)?;
        Ok(out.flush()?)
    }
}

/// Checks a trace document: every slice of a call lies inside that call's
/// `call` slice, on the same track; the slices of one call follow each other
/// in time without overlap; no call holds the memory lock and the compute
/// lock at once. Returns the number of calls.
pub fn check(doc: &Value) -> Result<usize> {
    let events = doc["traceEvents"].as_array().context("traceEvents is not an array")?;
    let mut calls: HashMap<u64, Vec<&Value>> = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let id = e["args"]["call"].as_u64().context("a slice without args.call")?;
        calls.entry(id).or_default().push(e);
    }
    ensure!(!calls.is_empty(), "the trace holds no call");
    let span = |e: &Value| -> Result<(f64, f64)> {
        let ts = e["ts"].as_f64().context("ts")?;
        Ok((ts, ts + e["dur"].as_f64().context("dur")?))
    };
    const EPS: f64 = 0.01; // µs: rounding of the timestamps
    for (id, slices) in &calls {
        let outer = slices.iter().find(|e| e["name"] == "call").with_context(|| format!("call {id}: no call slice"))?;
        let (lo, hi) = span(outer)?;
        let mut inner: Vec<(f64, f64, &str)> = Vec::new();
        for e in slices.iter().filter(|e| e["name"] != "call") {
            ensure!(e["tid"] == outer["tid"] && e["pid"] == outer["pid"], "call {id}: {} is on another track", e["name"]);
            let (a, b) = span(e)?;
            ensure!(a + EPS >= lo && b <= hi + EPS, "call {id}: {} [{a}, {b}] outside the call [{lo}, {hi}]", e["name"]);
            inner.push((a, b, e["name"].as_str().unwrap_or("?")));
        }
        inner.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
        for w in inner.windows(2) {
            if w[1].0 + EPS < w[0].1 {
                bail!("call {id}: {} overlaps {} (both locks held, or phases out of order)", w[0].2, w[1].2);
            }
        }
    }
    Ok(calls.len())
}
