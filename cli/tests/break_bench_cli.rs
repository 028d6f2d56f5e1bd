//! Careless command lines for `supraseal-c2 bench` (and malformed switches
//! for `prove`): each must end with a clear message and a non-zero exit,
//! never a panic or a hang. A tiny synthetic run must succeed.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the CLI with `args` (and `env`), killing it after `secs`; returns
/// (exit code, stdout, stderr).
fn cli(args: &[&str], env: &[(&str, &str)], secs: u64) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_supraseal-c2"));
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for k in ["SUPRASEAL_C2_LOCKS", "SUPRASEAL_C2_PRESTAGE", "SUPRASEAL_C2_VRAM_LIMIT_MB", "SUPRASEAL_C2_VRAM_MARGIN_MB", "SUPRASEAL_C2_FAULT_ALLOC", "SUPRASEAL_C2_LOG"] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().expect("spawn the CLI");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().ok();
            let out = child.wait_with_output().unwrap();
            panic!("{args:?} hung for {secs} s; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let code = out.status.code().unwrap_or_else(|| panic!("{args:?} killed by a signal: {:?}", out.status));
    (code, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_clean_failure(args: &[&str], env: &[(&str, &str)], needle: &str) {
    let (code, _out, err) = cli(args, env, 60);
    assert_ne!(code, 0, "{args:?} must fail; stderr: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains(needle), "{args:?}: stderr does not say {needle:?}: {err}");
}

#[test]
fn bad_bench_arguments_fail_with_a_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["bench", "--synthetic-log-domain", "10", "--workers", "0"], "at least 1"),
        (&["bench", "--synthetic-log-domain", "10", "--workers", "1,0,2"], "at least 1"),
        (&["bench", "--synthetic-log-domain", "10", "--partitions", "0"], "at least 1"),
        (&["bench", "--synthetic-log-domain", "10", "--workers="], "--workers"),
        (&["bench", "--synthetic-log-domain", "10", "--workers", "-1"], "-1"),
        (&["bench", "--synthetic-log-domain", "10", "--workers", "99999999999999999999999"], "--workers"),
        (&["bench", "--synthetic-log-domain", "10", "--partitions", "1.5"], "--partitions"),
        (&["bench", "--synthetic-log-domain", "10", "--modes="], "expected single, two, fallback or two-limit"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", ","], "expected single, two, fallback or two-limit"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", "bogus"], "bogus"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", "two,quad"], "quad"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", "two-limit=abc"], "two-limit=abc"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", "two-limit="], "two-limit="),
        (&["bench", "--synthetic-log-domain", "10", "--modes", "two-limit=-5"], "two-limit=-5"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", "two-limit=99999999999999999999999"], "two-limit"),
        (&["bench", "--synthetic-log-domain", "9"], "--synthetic-log-domain"),
        (&["bench", "--synthetic-log-domain", "28"], "--synthetic-log-domain"),
        (&["bench", "--synthetic-log-domain", "-1"], "-1"),
        (&["bench", "--synthetic-log-domain", "x"], "--synthetic-log-domain"),
        (&["bench", "--synthetic-log-domain", "10", "--circuit", "mimc", "--log-constraints", "10"], "excludes"),
        (&["bench", "--synthetic-log-domain", "10", "--circuit", "mimc"], "excludes"),
        (&["bench", "--synthetic-log-domain", "10", "--log-constraints", "10"], "excludes"),
        (&["bench", "--circuit", "mimc"], "--log-constraints"),
        (&["bench", "--log-constraints", "10"], "--circuit"),
        (&["bench"], "--synthetic-log-domain"),
        (&["bench", "--circuit", "nosuch", "--log-constraints", "10"], "nosuch"),
        (&["bench", "--circuit", "mimc", "--log-constraints", "7"], "--log-constraints"),
        (&["bench", "--synthetic-log-domain", "10", "--seed", "-3"], "-3"),
        (&["bench", "--shape", "porep-64g"], "porep-64g"),
        (&["bench", "--shape", "2^9"], "--shape"),
        (&["bench", "--shape", "2^10", "--synthetic-log-domain", "10"], "not both"),
        (&["bench", "--shape", "2^10", "--lib", "upstream"], "--reference"),
        (&["bench", "--shape", "2^10", "--workers", "2", "--batch", "3,0"], "--batch 0"),
        (&["bench", "--shape", "2^10", "--batch", "65"], "--batch 65"),
        (&["params", "synth", "--out", "/tmp/x.params"], "--shape"),
        (&["params", "synth", "--log-domain", "10", "--out", "/tmp"], "is not a regular file"),
        (&["params", "synth", "--log-domain", "10", "--out", "/dev/null"], "is not a regular file"),
        (&["bench", "--shape", "2^10", "--trace", "/nonexistent/dir/t.json"], "creating /nonexistent/dir/t.json"),
        (&["bench", "--shape", "2^10", "--proofs-out", "/nonexistent/dir/p.txt"], "creating /nonexistent/dir/p.txt"),
        (&["params", "synth", "--shape", "nope", "--out", "/tmp/x.params"], "nope"),
        (&["bench", "--synthetic-log-domain", "10", "--witnesses", "-1"], "-1"),
    ];
    for (args, needle) in cases {
        assert_clean_failure(args, &[], needle);
    }
}

#[test]
fn a_tiny_synthetic_bench_runs_every_mode_and_reports_every_call() {
    let (code, out, err) = cli(
        &["bench", "--synthetic-log-domain", "10", "--workers", "1,3", "--partitions", "2", "--modes", "single,two,fallback,two-limit=1024", "--witnesses", "1"],
        &[],
        120,
    );
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(!err.contains("panicked") && !err.contains("failure"), "{err}");
    for mode in ["single", "two", "fallback", "two-limit=1024"] {
        for (w, parts) in [(1, 2), (3, 6)] {
            let row = out
                .lines()
                .find(|l| l.starts_with(&format!("| ours | {mode} | {w} | {parts} |")))
                .unwrap_or_else(|| panic!("no row for {mode} W={w}: {out}"));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            // | library | mode | W | P | wall | P/s | s/P | busy | pre-staged k/N | ... | failed | unverified |
            assert!(cells[9].ends_with(&format!("/{parts}")), "one report per call: {row}");
            assert_eq!(cells[cells.len() - 3], "0", "failed: {row}");
            assert_eq!(cells[cells.len() - 2], "not verifiable", "synthetic proofs: {row}");
        }
    }
}

#[test]
fn a_mode_the_library_refuses_fails_the_bench_without_a_panic() {
    // 2^64 − 1 MiB parses as a mode but overflows the library's byte count:
    // every call is refused with EINVAL naming the variable; exit status 1.
    let (code, _out, err) = cli(
        &["bench", "--synthetic-log-domain", "10", "--workers", "1", "--partitions", "1", "--modes", "two-limit=18446744073709551615"],
        &[],
        60,
    );
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("SUPRASEAL_C2_VRAM_LIMIT_MB") && err.contains("code 22"), "{err}");
}

#[test]
fn prove_with_malformed_switches_names_the_variable() {
    for (k, v) in [
        ("SUPRASEAL_C2_VRAM_MARGIN_MB", "18446744073709551615"),
        ("SUPRASEAL_C2_VRAM_LIMIT_MB", "-1"),
        ("SUPRASEAL_C2_LOCKS", "both"),
        ("SUPRASEAL_C2_PRESTAGE", "yes"),
        ("SUPRASEAL_C2_FAULT_ALLOC", "1@phase9"),
        ("SUPRASEAL_C2_BACKEND", "tpu"),
    ] {
        let (code, out, err) = cli(&["prove", "--circuit", "mimc", "--log-constraints", "8", "--circuits", "1", "--seed", "7"], &[(k, v)], 120);
        assert_eq!(code, 2, "{k}={v}: stdout {out}\nstderr {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains(k) && err.contains("code 22"), "{k}={v}: {err}");
    }
}

#[test]
fn garbage_log_filters_do_not_break_proving() {
    for f in ["[", "{", "=", "a=b=c", "[{x=/(/}]", "💥=trace", ",,,", "supraseal_c2[{a=\"\\\"}]=info", "[=info"] {
        let (code, out, err) = cli(&["prove", "--circuit", "mimc", "--log-constraints", "8", "--circuits", "1", "--seed", "7"], &[("SUPRASEAL_C2_LOG", f)], 120);
        assert_eq!(code, 0, "SUPRASEAL_C2_LOG={f:?}: {err}");
        assert!(out.contains("verified 1/1 proofs"), "{out}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
