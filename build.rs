//! Compiles the CUDA kernels in `cuda/` into one fatbin embedded in the
//! library (loaded at run time through cudarc, so one binary runs with or
//! without a GPU).
//!
//! nvcc is found through `NVCC` (a path or a name; `off` disables the GPU
//! build), `CUDA_PATH`/`CUDA_HOME`, or `PATH`. Without it the library builds
//! CPU-only and says so on the build script's stderr (`cargo build -vv`), not
//! in a cargo warning: cargo replays warnings on every later command, and a
//! CPU-only build is a normal choice (the CLI says so at run time). A GPU
//! build that was asked for (nvcc found) but cannot be made is a warning.
//! `cargo:kernels=0|1` tells dependents (`DEP_SUPRASEAL_C2_KERNELS`) whether
//! the kernels are built. Architectures: SASS for sm_75,
//! sm_80, sm_86, sm_89, sm_90, sm_100 and sm_120 where `nvcc --list-gpu-code`
//! lists them (nvcc 12.8 and newer list sm_100 and sm_120; older ones build
//! the rest), plus PTX for the newest; `SUPRASEAL_C2_CUDA_ARCHS` (e.g. `90`
//! or `80,90`) narrows the list. The sppark crate's device headers (a build
//! dependency) come from `SPPARK_ROOT` or the cargo registry.
//!
//! On Linux the shared library gets the SONAME `libsupraseal_c2.so.0`
//! (`scripts/install.sh` installs it with that name and the linker name).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// SASS targets. A cubin runs on its own major compute capability at the
/// same or a higher minor: sm_75 covers T4/RTX 20, sm_80 A100, sm_86
/// A10/A40/RTX 30, sm_89 L4/L40/RTX 40, sm_90 H100/H200, sm_100
/// B100/B200/GB200 (and B300 at 10.3), sm_120 RTX 50 and RTX PRO 6000
/// Blackwell (and GB10 at 12.1), which sm_100's cubin does not run on. Each
/// one adds one nvcc job (about two minutes of CPU).
const WANTED_ARCHS: [u32; 7] = [75, 80, 86, 89, 90, 100, 120];
const SPPARK_VERSION: &str = "0.1.16";
/// The shared library's SONAME. Its number is the C ABI's version, not the
/// crate's: the ten functions and struct layouts (docs/ARCHITECTURE.md §2)
/// are supraseal's, and it changes only if they change incompatibly.
const SONAME: &str = "libsupraseal_c2.so.0";

fn main() {
    println!("cargo:rustc-check-cfg=cfg(supraseal_gpu)");
    for var in ["NVCC", "CUDA_PATH", "CUDA_HOME", "PATH", "SUPRASEAL_C2_CUDA_ARCHS", "SPPARK_ROOT", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=cuda");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{SONAME}");
    }
    let built = build_kernels();
    println!("cargo:kernels={}", u8::from(built));
}

/// Compiles and embeds the kernels; false when the build is CPU-only.
fn build_kernels() -> bool {
    let Some(nvcc) = find_nvcc() else {
        match env::var("NVCC") {
            Ok(v) if v == "off" => eprintln!("supraseal-c2: NVCC=off: building CPU-only"),
            // Asked for by name and not there: said where cargo shows it
            // (a warning), since the build still succeeds, CPU-only.
            Ok(v) => println!(
                "cargo:warning=supraseal-c2: NVCC={v} does not run (`{v} --version` failed): building CPU-only, without GPU kernels"
            ),
            Err(_) => eprintln!(
                "supraseal-c2: nvcc not found (NVCC, CUDA_PATH, CUDA_HOME, PATH): building CPU-only; set NVCC=/path/to/nvcc \
                 (scripts/install-cuda-toolchain.sh installs one) for the GPU backend"
            ),
        }
        return false;
    };
    let Some(sppark) = find_sppark() else {
        println!("cargo:warning=supraseal-c2: sppark {SPPARK_VERSION} headers not found (set SPPARK_ROOT): building CPU-only");
        return false;
    };
    let archs = select_archs(&nvcc);
    if archs.is_empty() {
        println!("cargo:warning=supraseal-c2: {} supports none of the wanted GPU architectures: building CPU-only", nvcc.display());
        return false;
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let out = out_dir.join("kernels.fatbin");
    let mut cmd = Command::new(&nvcc);
    // --threads 0: one nvcc job per architecture in parallel (the SASS
    // targets are independent; a 2-core CI machine halves the kernel build).
    cmd.args(["-fatbin", "-std=c++17", "-O3", "-diag-suppress", "20054", "--threads", "0"]).arg("-I").arg(&sppark);
    for a in &archs {
        cmd.arg("-gencode").arg(format!("arch=compute_{a},code=sm_{a}"));
    }
    let newest = archs.iter().max().unwrap();
    cmd.arg("-gencode").arg(format!("arch=compute_{newest},code=compute_{newest}"));
    // Each feature set of this package runs this script in its own OUT_DIR
    // (`cargo test` enables `tools`, `cargo build` does not): the fatbin is
    // kept beside them in the profile's build directory, under a hash of the
    // sources, the headers' path, the command and nvcc's version, so that
    // the kernels compile once per change, not once per feature set.
    let cached = out_dir
        .parent()
        .and_then(Path::parent)
        .map(|build| build.join(format!("supraseal-c2-kernels-{:016x}.fatbin", kernels_hash(&nvcc, &cmd, &sppark))));
    // A cached fatbin that cannot be copied is compiled again.
    let reused = cached.as_deref().is_some_and(|c| c.is_file() && std::fs::copy(c, &out).is_ok());
    if !reused {
        cmd.arg("-o").arg(&out).arg("cuda/kernels.cu");
        let status = cmd.status().unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
        if !status.success() {
            panic!("nvcc failed compiling cuda/kernels.cu ({status}); set NVCC=off to build CPU-only");
        }
        if let Some(c) = cached {
            // Written whole under another name, then renamed: a concurrent
            // build never reads half a file.
            let tmp = c.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::copy(&out, &tmp).is_ok() {
                let _ = std::fs::rename(&tmp, &c);
            }
        }
    }
    println!("cargo:rustc-cfg=supraseal_gpu");
    println!("cargo:rustc-env=SUPRASEAL_C2_FATBIN={}", out.display());
    println!("cargo:rustc-env=SUPRASEAL_C2_ARCHS={}", archs.iter().map(|a| format!("sm_{a}")).collect::<Vec<_>>().join(","));
    true
}

/// A hash of what the fatbin is made from: every file under `cuda/` and
/// under the sppark headers' directory, the nvcc command (architectures,
/// flags, the headers' path), nvcc's own flag variables and its `--version`
/// output.
fn kernels_hash(nvcc: &Path, cmd: &Command, sppark: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                files_under(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut files = Vec::new();
    files_under(Path::new("cuda"), &mut files);
    files_under(sppark, &mut files);
    files.sort();
    for f in &files {
        f.hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    for a in cmd.get_args() {
        a.hash(&mut h);
    }
    for var in ["NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"] {
        env::var_os(var).hash(&mut h);
    }
    Command::new(nvcc).arg("--version").output().map(|o| o.stdout).unwrap_or_default().hash(&mut h);
    h.finish()
}

fn runs(p: &Path) -> bool {
    Command::new(p).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

fn find_nvcc() -> Option<PathBuf> {
    if let Ok(v) = env::var("NVCC") {
        if v == "off" {
            return None;
        }
        let p = PathBuf::from(&v);
        if p.components().count() > 1 {
            return runs(&p).then_some(p);
        }
        return which(&v);
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = env::var_os(var) {
            let p = PathBuf::from(root).join("bin/nvcc");
            if runs(&p) {
                return Some(p);
            }
        }
    }
    which("nvcc")
}

fn which(name: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file() && runs(p))
}

fn find_sppark() -> Option<PathBuf> {
    if let Some(root) = env::var_os("SPPARK_ROOT") {
        return Some(PathBuf::from(root));
    }
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let registries = std::fs::read_dir(cargo_home.join("registry/src")).ok()?;
    registries
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(format!("sppark-{SPPARK_VERSION}/sppark")))
        .find(|p| p.join("ff/bls12-381.hpp").is_file())
}

fn select_archs(nvcc: &Path) -> Vec<u32> {
    let listed: Vec<u32> = Command::new(nvcc)
        .arg("--list-gpu-code")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| l.trim().strip_prefix("sm_")?.parse().ok()).collect())
        .unwrap_or_default();
    let wanted: Vec<u32> = match env::var("SUPRASEAL_C2_CUDA_ARCHS") {
        Ok(v) if !v.trim().is_empty() => v
            .split(',')
            .filter_map(|s| s.trim().trim_start_matches("sm_").parse().ok())
            .collect(),
        _ => WANTED_ARCHS.to_vec(),
    };
    wanted.into_iter().filter(|a| listed.contains(a)).collect()
}
