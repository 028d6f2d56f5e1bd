//! The library's events where the host looks for them. A host that logs
//! through the `log` crate and installs no `tracing` subscriber (lotus and
//! filecoin-ffi: fil_logger, i.e. env_logger under `RUST_LOG`) shows them
//! under `RUST_LOG=supraseal_c2=info`, fields readable; with the library's
//! own `SUPRASEAL_C2_LOG` subscriber, or a host's `tracing` subscriber, each
//! event is printed once, there and not through `log`. A build with GPU
//! kernels that proves on the CPU because no GPU is usable warns once per
//! process; a CPU chosen by `SUPRASEAL_C2_BACKEND=cpu` or bellperson's
//! `BELLMAN_NO_GPU` does not warn, and an explicit `SUPRASEAL_C2_BACKEND`
//! wins over `BELLMAN_NO_GPU`.
//!
//! `log` takes one logger per process, so each case runs in a child process
//! (this binary again, running one `#[ignore]`d body with `LOG_HOST_CHILD`
//! set). The children's env_logger writes to stdout, the `tracing`
//! subscribers to stderr, so the parent sees which path printed each line.

mod common;

use std::process::Command;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

const CHILD: &str = "LOG_HOST_CHILD";
/// The CPU-fallback warning's words (src/pipeline/select.rs).
const FALLBACK: &str = "this build has GPU kernels but no GPU is usable";

/// Runs the body `name` in a child with `env` set (and the variables this
/// file is about removed first); returns (stdout, stderr) once it passed.
fn run_child(name: &str, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([name, "--exact", "--include-ignored", "--nocapture", "--test-threads=1"]).env(CHILD, "1");
    for var in ["RUST_LOG", "SUPRASEAL_C2_LOG", "SUPRASEAL_C2_BACKEND", "BELLMAN_NO_GPU"] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "child {name} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains(&format!("child {name}: done")), "child {name} did not run its body:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// The lines of `text` that contain every one of `words`.
fn lines_with<'a>(text: &'a str, words: &[&str]) -> Vec<&'a str> {
    text.lines().filter(|l| words.iter().all(|w| l.contains(w))).collect()
}

/// A lotus-like host: env_logger from `RUST_LOG`, writing to stdout; no
/// `tracing` subscriber of its own.
fn env_logger_host() {
    env_logger::Builder::from_default_env().target(env_logger::Target::Stdout).init();
}

/// One MiMC proof through the C ABI, checked with bellperson.
fn prove_one() -> Result<(), ffi::AbiError> {
    let keys = common::keys(Kind::Mimc, 8);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let r = common::random_scalars(&mut rng, 2);
    let p = ffi::prove(&srs, &[batch[0].0.clone()], &r[..1], &r[1..], std::ptr::null_mut(), 0)?;
    assert!(ffi::verify(&keys.vk, &p[0], &batch[0].1));
    Ok(())
}

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

#[test]
#[ignore = "the body of a parent test, run in its child process"]
fn child_proves_once() {
    if !is_child() {
        return;
    }
    match std::env::var("CHILD_SUBSCRIBER").as_deref() {
        // A Rust host with its own tracing subscriber (beside a `log` logger).
        Ok("host") => {
            env_logger_host();
            let subscriber = tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter("supraseal_c2=info").finish();
            tracing::subscriber::set_global_default(subscriber).unwrap();
        }
        _ => env_logger_host(),
    }
    prove_one().unwrap();
    println!("child child_proves_once: done");
}

#[test]
fn a_log_host_shows_the_events_under_rust_log_with_readable_fields() {
    let (stdout, stderr) = run_child("child_proves_once", &[("RUST_LOG", "supraseal_c2=info"), ("SUPRASEAL_C2_BACKEND", "cpu")]);
    let call = lines_with(&stdout, &["INFO", "supraseal_c2::pipeline::report", "proving call"]);
    assert_eq!(call.len(), 1, "one per-call report through `log`:\n{stdout}");
    for field in ["backend=\"cpu\"", "circuits=1", "domain=256", "g2_msm=\"cpu\"", "validate_ms="] {
        assert!(call[0].contains(field), "field {field} rendered in the record: {}", call[0]);
    }
    let epilogue = lines_with(&stdout, &["INFO", "supraseal_c2::pipeline", "epilogue done circuits=1 epilogue_ms="]);
    assert_eq!(epilogue.len(), 1, "{stdout}");
    assert!(!stderr.contains("proving call"), "nothing printed by another path:\n{stderr}");

    // The filter, not something else, lets them through: another crate's
    // filter shows none of them.
    let (stdout, _) = run_child("child_proves_once", &[("RUST_LOG", "bellperson=info"), ("SUPRASEAL_C2_BACKEND", "cpu")]);
    assert!(lines_with(&stdout, &["supraseal_c2"]).is_empty(), "RUST_LOG=bellperson=info shows no library event:\n{stdout}");
}

#[test]
fn with_a_tracing_subscriber_each_event_is_printed_once() {
    // The library's own subscriber (SUPRASEAL_C2_LOG) beside a log host.
    let (stdout, stderr) = run_child(
        "child_proves_once",
        &[("RUST_LOG", "supraseal_c2=info"), ("SUPRASEAL_C2_LOG", "info"), ("SUPRASEAL_C2_BACKEND", "cpu")],
    );
    assert_eq!(lines_with(&stderr, &["supraseal_c2::pipeline::report", "proving call"]).len(), 1, "SUPRASEAL_C2_LOG's line:\n{stderr}");
    assert!(lines_with(&stdout, &["proving call"]).is_empty(), "not again through `log`:\n{stdout}");

    // A Rust host's own tracing subscriber gets the events, `log` does not.
    let (stdout, stderr) =
        run_child("child_proves_once", &[("RUST_LOG", "supraseal_c2=info"), ("CHILD_SUBSCRIBER", "host"), ("SUPRASEAL_C2_BACKEND", "cpu")]);
    assert_eq!(lines_with(&stderr, &["supraseal_c2::pipeline::report", "proving call"]).len(), 1, "the host's subscriber:\n{stderr}");
    assert!(lines_with(&stdout, &["proving call"]).is_empty(), "not again through `log`:\n{stdout}");
}

#[test]
fn an_empty_or_invalid_supraseal_c2_log_leaves_the_log_route_open() {
    for (value, noted) in [("", false), ("   ", false), ("supraseal_c2=notalevel", true), ("[{", true)] {
        let (stdout, stderr) =
            run_child("child_proves_once", &[("RUST_LOG", "supraseal_c2=info"), ("SUPRASEAL_C2_LOG", value), ("SUPRASEAL_C2_BACKEND", "cpu")]);
        assert_eq!(
            lines_with(&stdout, &["INFO", "supraseal_c2::pipeline::report", "proving call"]).len(),
            1,
            "SUPRASEAL_C2_LOG={value:?} installs no subscriber, so `log` still gets the call:\n{stdout}\n{stderr}"
        );
        assert_eq!(stderr.contains("is not a log filter"), noted, "SUPRASEAL_C2_LOG={value:?}: a note only for a bad filter:\n{stderr}");
    }
}

#[test]
#[ignore = "the body of a parent test, run in its child process"]
fn child_backend_choices() {
    if !is_child() {
        return;
    }
    env_logger_host();
    supraseal_c2::record_reports(true);
    let gpus = supraseal_c2::gpu_device_count();
    let auto = if gpus > 0 { "gpu" } else { "cpu" };
    let step = |name: &str, backend: Option<&str>, no_gpu: Option<&str>| {
        match backend {
            Some(b) => std::env::set_var("SUPRASEAL_C2_BACKEND", b),
            None => std::env::remove_var("SUPRASEAL_C2_BACKEND"),
        }
        match no_gpu {
            Some(v) => std::env::set_var("BELLMAN_NO_GPU", v),
            None => std::env::remove_var("BELLMAN_NO_GPU"),
        }
        println!("STEP {name}");
        let result = prove_one();
        (result, supraseal_c2::take_reports().iter().map(|r| r.backend.as_str()).collect::<Vec<_>>())
    };
    let (result, backends) = step("cpu", Some("cpu"), None);
    assert!(result.is_ok() && backends == ["cpu"], "{result:?} {backends:?}");
    let (result, backends) = step("bellman", None, Some("1"));
    assert!(result.is_ok() && backends == ["cpu"], "BELLMAN_NO_GPU=1 proves on the CPU: {result:?} {backends:?}");
    // An explicit SUPRASEAL_C2_BACKEND wins over BELLMAN_NO_GPU.
    let (result, backends) = step("bellman-and-gpu", Some("gpu"), Some("1"));
    if gpus > 0 {
        assert!(result.is_ok() && backends == ["gpu"], "{result:?} {backends:?}");
    } else {
        let e = result.unwrap_err();
        assert!(e.code == libc::ENODEV && e.message.contains("SUPRASEAL_C2_BACKEND=gpu"), "{e}");
    }
    let (result, backends) = step("auto", None, Some("0"));
    assert!(result.is_ok() && backends == [auto], "BELLMAN_NO_GPU=0 is off: {result:?} {backends:?}");
    let (result, backends) = step("auto-again", Some("auto"), Some("1"));
    assert!(result.is_ok() && backends == [auto], "explicit auto wins: {result:?} {backends:?}");
    println!("STEP end");
    println!("child child_backend_choices: done");
}

#[test]
fn a_gpu_build_without_a_gpu_warns_once_and_a_chosen_cpu_does_not() {
    let (stdout, _) = run_child("child_backend_choices", &[("RUST_LOG", "supraseal_c2=info")]);
    // Kernels compiled (CI builds with nvcc) and no device: the fallback
    // warns. A CPU-only build, or a host with a GPU, does not.
    let expected = usize::from(supraseal_c2::BUILT_WITH_KERNELS && supraseal_c2::gpu_device_count() == 0);
    let mut warnings = Vec::new();
    let mut step = "";
    for line in stdout.lines() {
        if let Some(s) = line.strip_prefix("STEP ") {
            step = s;
        } else if line.contains(FALLBACK) {
            assert!(line.contains("WARN") && line.contains(" supraseal_c2::pipeline::select]"), "level and target: {line}");
            warnings.push((step, line));
        }
    }
    let expected_steps: Vec<&str> = if expected == 1 { vec!["auto"] } else { vec![] };
    assert_eq!(
        warnings.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        expected_steps,
        "warnings per step (kernels: {}, GPUs: {}):\n{stdout}",
        supraseal_c2::BUILT_WITH_KERNELS,
        supraseal_c2::gpu_device_count()
    );
    if let Some((_, line)) = warnings.first() {
        // The reason is given: this machine has no libcuda or no device.
        assert!(line.contains("libcuda") || line.contains("CUDA driver"), "says why: {line}");
    }
}
