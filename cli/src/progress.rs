//! Progress bars and log lines on one stderr: the tracing subscriber writes
//! through [`LogWriter`], which clears the bar shown by [`show`], writes the
//! line and redraws the bar, so a log line never lands on the bar's line.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// The bar on screen, if any (one at a time: the steps run one after another).
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// A bar on screen until dropped: dropping it clears the bar.
pub struct Shown(ProgressBar);

impl Shown {
    /// The bar, to update its position and message.
    pub fn bar(&self) -> &ProgressBar {
        &self.0
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        // Cleared before it leaves the registry, so a log line written
        // meanwhile still goes around it (a finished bar draws nothing).
        self.0.finish_and_clear();
        ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// Shows `pb` with a steady tick and routes log lines around it.
pub fn show(pb: ProgressBar) -> Shown {
    pb.enable_steady_tick(Duration::from_millis(120));
    *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(pb.clone());
    Shown(pb)
}

/// A spinner with `msg` and the elapsed time. indicatif draws nothing when
/// stderr is not a terminal, so then one start line says what is running.
pub fn spinner(msg: &str) -> Shown {
    if !std::io::stderr().is_terminal() {
        eprintln!("{msg} ...");
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("valid template"));
    pb.set_message(msg.to_string());
    show(pb)
}

/// Turns a shown bar into a spinner with `msg` and a clock started now: for
/// the next phase of a step whose first phase the bar measured. Without a
/// terminal, one line says what is running (as [`spinner`]).
pub fn to_spinner(pb: &ProgressBar, msg: &str) {
    if !std::io::stderr().is_terminal() {
        eprintln!("{msg} ...");
    }
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("valid template"));
    pb.set_message(msg.to_string());
    pb.reset_elapsed();
}

/// stderr for the tracing subscriber, writing above the bar on screen.
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The subscriber formats a whole event, then writes it in one call.
        let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match active {
            Some(pb) => pb.suspend(|| std::io::stderr().write_all(buf))?,
            None => std::io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> LogWriter {
        LogWriter
    }
}
