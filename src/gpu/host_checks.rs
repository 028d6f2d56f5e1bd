//! Kernel sources run on the host: cuda/host/*.cpp compile a kernel's own
//! source (a template over the field type) for the host over a small prime
//! field and check it against textbook arithmetic. What they cannot check is
//! the device's field arithmetic and the launches; the GPU tests do. A host
//! C++ compiler is there wherever nvcc built the kernels (`CXX`, else
//! `c++`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A host program built from cuda/host/`source` with `defines` (`-DNAME=V`),
/// removed when dropped.
pub struct HostCheck {
    exe: PathBuf,
    source: &'static str,
}

impl HostCheck {
    pub fn build(source: &'static str, defines: &[String]) -> HostCheck {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/host").join(source);
        let stem = source.trim_end_matches(".cpp");
        let exe = std::env::temp_dir().join(format!("supraseal-c2-{stem}-{}", std::process::id()));
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let built = Command::new(&cxx)
            .args(["-std=c++17", "-O2"])
            .args(defines)
            .arg(&path)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
        assert!(built.status.success(), "{cxx} failed on cuda/host/{source}:\n{}", String::from_utf8_lossy(&built.stderr));
        HostCheck { exe, source }
    }

    /// Runs the program with `args`; its standard output, after asserting
    /// that it exited 0.
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> String {
        let out = Command::new(&self.exe).args(args).output().unwrap_or_else(|e| panic!("running cuda/host/{}: {e}", self.source));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let args: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
        assert!(out.status.success(), "cuda/host/{} {args:?}:\n{text}{}", self.source, String::from_utf8_lossy(&out.stderr));
        text
    }
}

impl Drop for HostCheck {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.exe);
    }
}

/// cuda/xyzz_add.cuh (the G1 and G2 kernels' mixed addition) on y² = x³ + 4 over
/// the field of 2^31 − 1, against affine addition: 200,000 additions and
/// subtractions of random points, of the accumulator's own point (doubling),
/// of its negation (infinity), of infinity and of (0, ±2), from three seeds.
/// Every branch is taken, with and without subtraction, and the addition,
/// doubling and cancelling ones also with the record `one` set (ZZ = ZZZ =
/// 1, the products by them skipped). Then 200,000 additions of two
/// accumulators (`xyzz_add`: distinct, equal, opposite, either at infinity),
/// each in its own random scale.
#[test]
fn xyzz_add_source_on_the_host() {
    let check = HostCheck::build("xyzz_add_host.cpp", &[]);
    for seed in ["1", "2", "3"] {
        let text = check.run(&["200000", seed]);
        assert!(text.lines().any(|l| l == "200000 steps: equal"), "seed {seed}: {text}");
        let branches: Vec<&str> = text.lines().filter(|l| l.contains(" subtracted")).collect();
        assert_eq!(branches.len(), 5, "seed {seed}: the five branches' counts: {text}");
        for line in branches {
            let counts: Vec<u64> = line.rsplit(": ").next().unwrap().replace(" subtracted", "").split(", ").map(|c| c.parse().unwrap()).collect();
            assert!(counts.iter().all(|&c| c >= 1000), "seed {seed}: a branch taken too rarely: {line}");
        }
        let with_one: Vec<u64> = text.lines().filter(|l| l.contains(" with one: ")).map(|l| l.rsplit(": ").next().unwrap().parse().unwrap()).collect();
        assert_eq!(with_one.len(), 3, "seed {seed}: the counts with `one` set: {text}");
        assert!(with_one.iter().all(|&c| c >= 1000), "seed {seed}: a branch with `one` taken too rarely: {text}");
        assert!(text.lines().any(|l| l == "200000 xyzz steps: equal"), "seed {seed}: xyzz_add: {text}");
        let xyzz: Vec<u64> = text.lines().filter(|l| l.starts_with("xyzz ") && !l.contains("steps")).map(|l| l.rsplit(": ").next().unwrap().parse().unwrap()).collect();
        assert_eq!(xyzz.len(), 5, "seed {seed}: xyzz_add's five branches' counts: {text}");
        assert!(xyzz.iter().all(|&c| c >= 1000), "seed {seed}: an xyzz_add branch taken too rarely: {text}");
    }
}
