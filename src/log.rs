//! Logging for callers that did not install a `tracing` subscriber (C, Go):
//! `SUPRASEAL_C2_LOG` (a `RUST_LOG`-style filter, e.g. `info` or
//! `supraseal_c2=debug`) turns on one structured line per proving call on
//! stderr. A subscriber the caller installed first is left alone.

use std::sync::Once;

static INIT: Once = Once::new();

/// Installs a stderr subscriber with `SUPRASEAL_C2_LOG`'s filter, once per
/// process, if the variable is set and no global subscriber exists yet.
pub fn init_from_env() {
    INIT.call_once(|| {
        if let Ok(filter) = std::env::var("SUPRASEAL_C2_LOG") {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .try_init();
        }
    });
}

/// A duration in milliseconds rounded to 0.1 ms, for log fields: full f64
/// precision (`1.3721759999999998`) is noise at the scale of a proving call.
/// Adding 0.0 turns a rounded `-0.0` (a tiny negative difference) into `0.0`.
pub(crate) fn round1(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0 + 0.0
}

/// A value in seconds (or GB/s) rounded to 0.01, for log fields, as [`round1`].
pub(crate) fn round2(s: f64) -> f64 {
    (s * 100.0).round() / 100.0 + 0.0
}
