//! Careless command lines for `supraseal-c2 bench` (and malformed switches
//! for `prove`): each must end with a clear message and a non-zero exit,
//! never a panic or a hang. A tiny synthetic run must succeed.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[path = "../../tests/common/mod.rs"]
mod common;

/// Runs the CLI with `args` (and `env`), killing it after `secs`; returns
/// (exit code, stdout, stderr). Its parameter cache is the tests' own
/// ([`common::cli_command`]), never the user's.
fn cli(args: &[&str], env: &[(&str, &str)], secs: u64) -> (i32, String, String) {
    let mut cmd = common::cli_command(env!("CARGO_BIN_EXE_supraseal-c2"));
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
        (&["bench", "--synthetic-log-domain", "10", "--modes="], "expected single, two, two-whole, two-noretry, two-beside, fallback or two-limit"),
        (&["bench", "--synthetic-log-domain", "10", "--modes", ","], "expected single, two, two-whole, two-noretry, two-beside, fallback or two-limit"),
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
        // One size rule for prove and bench (circuits::check_size).
        (&["bench", "--circuit", "sha256", "--log-constraints", "10"], "use --log-constraints 15 or more"),
        (&["prove", "--circuit", "sha256", "--log-constraints", "10"], "use --log-constraints 15 or more"),
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
            // | library | mode | W | P | wall | P/s | s/P | busy | pre-staged k/N[ (+j in part)] | ... | failed | unverified |
            let staged = cells[9].split(' ').next().unwrap_or_default();
            assert!(staged.ends_with(&format!("/{parts}")), "one report per call: {row}");
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
    assert!(err.contains("SUPRASEAL_C2_VRAM_LIMIT_MB") && err.contains("(EINVAL)"), "{err}");
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
        assert!(err.contains(k) && err.contains("(EINVAL)"), "{k}={v}: {err}");
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

/// A folder of its own under the build's temp dir, empty.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("break-bench-cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_shape_larger_than_the_host_memory_is_refused_before_anything_is_built() {
    // 64 x 64 porep-32g witnesses: about 1 PiB, more than any host has.
    let (code, _out, err) = cli(&["bench", "--shape", "porep-32g", "--workers", "64", "--witnesses", "64", "--partitions", "64"], &[], 60);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs at least") && err.contains("of host memory") && err.contains("are available ("), "{err}");
    assert!(err.contains("4096 witnesses x 15.56 GiB"), "the message says what the memory is for: {err}");
    assert!(!err.contains("building the synthetic"), "refused before the witnesses: {err}");
}

#[test]
fn help_and_readme_state_the_memory_each_shape_needs() {
    use supraseal_c2_cli::synthetic::Shape;
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
    let (code, help, err) = cli(&["bench", "--help"], &[], 30);
    assert_eq!(code, 0, "{err}");
    let (porep, s24) = (Shape::porep_32g(), Shape::new(24));
    let porep_line = format!("porep-32g  key {}, {} per witness", gib(porep.key_bytes()), gib(porep.witness_bytes()));
    let s24_line = format!("(2^24: {} + {} each)", gib(s24.key_bytes()), gib(s24.witness_bytes()));
    assert!(help.contains(&porep_line) && help.contains(&s24_line), "bench --help: {help}");
    let with = |n: u64| gib(porep.key_bytes() + n * porep.witness_bytes());
    assert!(help.contains(&format!("(1 witness: {}; 3: {}; defaults: {})", with(1), with(3), with(6))), "{help}");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let row = format!(
        "| `porep-32g` | {} | {} | {} | {} | {} | {} |",
        gib(porep.key_bytes()),
        gib(porep.witness_bytes()),
        with(1),
        with(3),
        with(6),
        gib(porep.cpu_quotient_bytes())
    );
    assert!(readme.contains(&row), "README.md has no row {row}");
}

#[test]
fn version_names_the_program_and_the_library() {
    let (code, out, _) = cli(&["--version"], &[], 30);
    assert_eq!(code, 0);
    assert!(out.starts_with(&format!("supraseal-c2 {} (library supraseal-c2 {},", env!("CARGO_PKG_VERSION"), supraseal_c2::VERSION)), "{out}");
}

#[test]
fn params_check_names_error_codes_says_the_path_once_and_its_phases() {
    let dir = fresh_dir("check");
    let missing = dir.join("missing.params");
    let (code, out, _) = cli(&["params", "check", missing.to_str().unwrap()], &[], 30);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(ENOENT)") && !out.contains("error 2") && !out.contains("os error"), "{out}");
    assert_eq!(out.matches(missing.to_str().unwrap()).count(), 1, "the path once: {out}");

    let text = dir.join("passwd");
    std::fs::write(&text, "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n".repeat(20)).unwrap();
    let (code, out, _) = cli(&["params", "check", text.to_str().unwrap()], &[], 30);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not a params file") && out.contains("(EINVAL)"), "{out}");
    assert_eq!(out.matches(text.to_str().unwrap()).count(), 1, "the path once: {out}");

    let file = dir.join("s10.params");
    let (code, _, err) = cli(&["params", "synth", "--log-domain", "10", "--out", file.to_str().unwrap()], &[], 60);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = cli(&["params", "check", file.to_str().unwrap()], &[], 60);
    assert_eq!(code, 0, "{out}{err}");
    // Without a terminal each phase says itself once, the check after the decode.
    let (decode, check) = (err.find("reading and decoding").expect(&err), err.find("; batched subgroup check").expect(&err));
    assert!(decode < check, "{err}");
    assert!(out.contains("valid params file") && (out.contains("MiB/s") || out.contains("KiB/s") || out.contains("GiB/s")), "{out}");
    assert!(!out.contains("GB/s"), "binary units only: {out}");
}

#[test]
fn prove_uses_the_cache_it_is_given_and_says_whether_it_generates() {
    let cache = fresh_dir("cache");
    let home = fresh_dir("home");
    let xdg = home.join(".cache");
    let env = [("SUPRASEAL_C2_CACHE", cache.to_str().unwrap()), ("HOME", home.to_str().unwrap()), ("XDG_CACHE_HOME", xdg.to_str().unwrap())];
    let args = ["prove", "--circuit", "mimc", "--log-constraints", "8", "--circuits", "1", "--seed", "7"];
    let (code, out, err) = cli(&args, &env, 120);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("not in the cache") && err.contains("generating them with bellperson"), "{err}");
    assert!(out.contains("params: generated with bellperson"), "{out}");
    assert!(cache.join("mimc-k8-v2.params").is_file(), "written into SUPRASEAL_C2_CACHE");
    assert!(!home.join(".cache").exists(), "nothing written under HOME");
    // The per-call INFO line leaves out what does not apply.
    let line = err.lines().find(|l| l.contains("proving call")).unwrap_or_else(|| panic!("no per-call line: {err}"));
    assert!(!line.contains("=\"\"") && !line.contains("n/a") && !line.contains("reason=") && !line.contains("error="), "{line}");

    let (code, out, err) = cli(&args, &env, 120);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("params: from the cache ({})", cache.display())) && !err.contains("generating"), "{out}{err}");

    // The same file under a name that does not say its circuit, given for
    // another circuit: refused by its sizes, before any witness is synthesized.
    let other = cache.join("other.params");
    std::fs::copy(cache.join("mimc-k8-v2.params"), &other).unwrap();
    let (code, out, err) = cli(&["prove", "--circuit", "mimc", "--log-constraints", "9", "--params", other.to_str().unwrap()], &env, 120);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("params file is for another circuit") && err.contains("mimc-k9 has"), "{err}");
    assert!(!err.contains("synthesizing witnesses"), "refused before the synthesis: {err}");
}

#[test]
fn the_no_gpu_error_says_how_to_get_a_gpu_build_or_use_the_cpu() {
    let (code, out, err) = cli(&["prove", "--backend", "gpu", "--circuit", "mimc", "--log-constraints", "8", "--circuits", "1"], &[], 300);
    if !supraseal_c2::BUILT_WITH_KERNELS {
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("NVCC=$(scripts/install-cuda-toolchain.sh | tail -n 1) cargo build --release"), "{err}");
    }
    if code != 0 {
        assert!(err.contains("no GPU is usable") && err.contains("--backend cpu"), "{err}");
    }
}

#[test]
fn bench_tables_stay_whole_on_one_screen_and_row_windows_follow_them() {
    // stdout and stderr into one file, as on a terminal or with 2>&1.
    let dir = fresh_dir("screen");
    let log = dir.join("bench.log");
    let f = std::fs::File::create(&log).unwrap();
    let status = common::cli_command(env!("CARGO_BIN_EXE_supraseal-c2"))
        .args(["bench", "--shape", "2^10", "--workers", "1,2", "--partitions", "2", "--modes", "two,fallback", "--witnesses", "1", "--batch", "2"])
        .env_remove("SUPRASEAL_C2_LOG")
        .stdin(Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f)
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    // Each table's lines are consecutive: nothing lands between its rows.
    let tables: Vec<(usize, usize)> = {
        let mut v = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            if lines[i].starts_with('|') {
                let start = i;
                while i < lines.len() && lines[i].starts_with('|') {
                    i += 1;
                }
                v.push((start, i));
            } else {
                i += 1;
            }
        }
        v
    };
    assert_eq!(tables.len(), 2, "the row table and the phase table, each in one piece:\n{text}");
    assert_eq!(tables[0].1 - tables[0].0, 2 + 6, "header, rule, 2 modes x (W = 1, 2, one batch):\n{text}");
    // Units in the phase table's header.
    assert!(lines[tables[1].0].contains("| NTT ms |") && lines[tables[1].0].contains("| compute hold ms |"), "{}", lines[tables[1].0]);
    // The windows come after both tables, one per row, in the form
    // scripts/gpu-samples.py reads (`ROW lib=.. mode=.. W=.. t0_ms=.. t1_ms=.. peak_rss_bytes=..`).
    let rows: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("ROW ")).collect();
    assert_eq!(rows.len(), 6, "{text}");
    assert!(rows[0] > tables[1].1, "ROW lines after the tables:\n{text}");
    // One warm-up per mode: the first mode's before the table, the second's
    // in the notes after both tables.
    let warm = |mode: &str| lines.iter().position(|l| l.trim_start().starts_with(&format!("warm-up partition, {mode} (not counted): ")));
    assert!(warm("two").is_some_and(|i| i < tables[0].0), "{text}");
    assert!(warm("fallback").is_some_and(|i| i > tables[1].1), "{text}");
    for &i in &rows {
        let l = lines[i];
        assert!(l.starts_with("ROW lib=ours mode="), "{l}");
        for field in [" W=", " t0_ms=", " t1_ms=", " peak_rss_bytes="] {
            assert!(l.contains(field), "{l}");
        }
        let t0: u128 = l.split(" t0_ms=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let t1: u128 = l.split(" t1_ms=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(t0 <= t1, "{l}");
    }
}
