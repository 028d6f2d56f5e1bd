//! Host-side measurements for the bench: peak resident memory, CPU time and
//! wall-clock timestamps.

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

pub(super) fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

pub(super) fn epoch_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

/// Host memory this process may still take, in bytes, and where the figure
/// comes from: `MemAvailable` of /proc/meminfo, lowered to the room left
/// under the process's cgroup limit where one is set (cgroup v2
/// `memory.max`, v1 `memory.limit_in_bytes`). `None` where neither is readable.
pub fn memory_available() -> Option<(u64, &'static str)> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let available = meminfo.as_deref().and_then(|m| {
        m.lines().find_map(|l| l.strip_prefix("MemAvailable:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()).map(|kib| kib * 1024)
    });
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|s| s.trim().parse::<u64>().ok());
    // "max" (v2) does not parse: no limit. v1 writes a huge number instead.
    let cgroup = [("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"), ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes")]
        .into_iter()
        .find_map(|(max, cur)| Some(read(max)?.saturating_sub(read(cur)?)));
    match (available, cgroup) {
        (Some(a), Some(c)) if c < a => Some((c, "room under the cgroup's memory limit")),
        (Some(a), _) => Some((a, "MemAvailable in /proc/meminfo")),
        (None, Some(c)) => Some((c, "room under the cgroup's memory limit")),
        (None, None) => None,
    }
}
