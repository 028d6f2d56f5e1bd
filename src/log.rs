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
