//! Where the library's events go. They are `tracing` events (targets under
//! `supraseal_c2`), and reach the host in one of three ways:
//!
//! - a `tracing` subscriber the host installed (a Rust host using `tracing`)
//!   gets them, and nothing else does;
//! - `SUPRASEAL_C2_LOG` (a `RUST_LOG`-style filter, e.g. `info` or
//!   `supraseal_c2=debug`) installs a subscriber of ours that writes them to
//!   stderr, one structured line per proving call (C and Go callers), unless
//!   the host installed one first;
//! - while no `tracing` subscriber has been set in the process, each event
//!   is also a `log` record (`tracing`'s `log` feature: same target and
//!   level, the fields rendered into the message as `name=value`), so a host
//!   that logs through the `log` crate (lotus and filecoin-ffi with
//!   fil_logger, env_logger) shows them under `RUST_LOG=supraseal_c2=info`.
//!   Once any subscriber has been set — global, or scoped to a thread
//!   (`tracing::subscriber::with_default`), even briefly and on another
//!   thread — `tracing` makes no `log` record for the rest of the process, so
//!   no event is printed twice; a host that mixes the two sees only what its
//!   subscribers see (`tracing`'s rule, not ours).
//!
//! `SUPRASEAL_C2_LOG` empty, blank or not a valid filter installs nothing
//! (the last with a one-line note on stderr), so it never silences the `log`
//! route.

use std::sync::Once;

static INIT: Once = Once::new();

/// Installs a stderr subscriber with `SUPRASEAL_C2_LOG`'s filter, once per
/// process, if the variable is set and no global subscriber exists yet.
pub fn init_from_env() {
    INIT.call_once(|| {
        let Ok(filter) = std::env::var("SUPRASEAL_C2_LOG") else { return };
        let filter = filter.trim();
        if filter.is_empty() {
            return;
        }
        match tracing_subscriber::EnvFilter::try_new(filter) {
            Ok(f) => {
                let _ = tracing_subscriber::fmt()
                    .with_env_filter(f)
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                    .try_init();
            }
            Err(e) => eprintln!("supraseal-c2: SUPRASEAL_C2_LOG={filter:?} is not a log filter ({e}): ignored"),
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
