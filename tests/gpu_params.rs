//! The params loader's subgroup check on the GPU, through `Srs::load_with`
//! on a synthetic 2^19 file whose every vector is long enough to go to the
//! device: a valid file loads with every vector checked there; a point with
//! torsion of a random prime order of the cofactor in each vector is refused
//! (EINVAL) naming its section, index and byte offset; with the device's
//! allocations failing (`SUPRASEAL_C2_FAULT_ALLOC=1@load`) the vectors are
//! checked on the CPU and the verdicts stay the same. The valid file's
//! vectors come back page-locked for the GPU calls, unless those run on the
//! CPU (`SUPRASEAL_C2_BACKEND=cpu`). Ignored in a build
//! without kernels; skipped without a usable GPU.

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use supraseal_c2::config::CheckOn;
use supraseal_c2::srs::subgroup::testing::{g1_with_torsion, g2_with_torsion, G1_PRIMES, G2_PRIMES};
use supraseal_c2::srs::{LoadOptions, LoadReport, Srs};

/// (name, offset of the first point, count, point bytes) of each vector.
fn vectors(bytes: &[u8]) -> Vec<(&'static str, usize, usize, usize)> {
    let mut pos = 3 * 96 + 3 * 192;
    let mut out = vec![];
    for (name, len) in [("ic", 96), ("h", 96), ("l", 96), ("a", 96), ("b_g1", 96), ("b_g2", 192)] {
        let count = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        out.push((name, pos + 4, count, len));
        pos += 4 + count * len;
    }
    assert_eq!(pos, bytes.len());
    out
}

fn load(path: &Path) -> supraseal_c2::Result<(Srs, LoadReport)> {
    Srs::load_with(path, &LoadOptions { check_on: Some(CheckOn::Gpu), ..Default::default() })
}

#[test]
#[cfg_attr(not(supraseal_gpu), ignore = "built without GPU kernels (nvcc not found at build time)")]
fn the_gpu_check_passes_valid_vectors_and_names_every_bad_point() {
    if supraseal_c2::gpu::subgroup_device().unwrap().is_none() {
        eprintln!("skipped: no usable GPU");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gpu-params");
    std::fs::create_dir_all(&dir).unwrap();
    let valid = dir.join("s19.params");
    supraseal_c2_cli::synthetic::synth(&supraseal_c2_cli::synthetic::Shape::new(19), 3, &valid).unwrap();
    let bytes = std::fs::read(&valid).unwrap();
    let seed: u64 = rand::thread_rng().gen();
    eprintln!("seed {seed}");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut tampered = vec![];
    for (name, first, count, len) in vectors(&bytes).into_iter().filter(|v| v.0 != "ic") {
        assert!(count >= 1 << 16, "{name}: {count} points would be checked on the CPU");
        let k = rng.gen_range(0..count);
        let enc = if len == 192 {
            g2_with_torsion(rng.gen_range(0..G2_PRIMES), &mut rng).0.to_uncompressed().to_vec()
        } else {
            g1_with_torsion(rng.gen_range(0..G1_PRIMES), &mut rng).0.to_uncompressed().to_vec()
        };
        let mut b = bytes.clone();
        let at = first + k * len;
        b[at..at + len].copy_from_slice(&enc);
        let p = dir.join(format!("torsion-{name}.params"));
        std::fs::write(&p, &b).unwrap();
        tampered.push((p, format!("section {name} at byte offset {at}"), format!("point {k}:")));
    }
    for fault in [false, true] {
        if fault {
            std::env::set_var("SUPRASEAL_C2_FAULT_ALLOC", "1@load");
            supraseal_c2::gpu::reset_fault_counters();
        }
        let (srs, report) = load(&valid).unwrap();
        eprintln!("valid file, fault {fault}: {report:?}");
        assert_eq!(report.device.as_deref(), Some("GPU 0"));
        assert_eq!(report.cpu_fallbacks, usize::from(fault), "the first device allocation fails, then the device checks again");
        assert_eq!(srs.h().len(), (1 << 19) - 1);
        assert!(report.pinned, "every vector went to the device, which page-locks it for the GPU calls");
        for (p, section, point) in &tampered {
            supraseal_c2::gpu::reset_fault_counters();
            let e = load(p).err().unwrap_or_else(|| panic!("{} should be refused", p.display()));
            eprintln!("fault {fault}: {}", e.message);
            assert_eq!(e.code, libc::EINVAL, "{}", e.message);
            for needle in [section.as_str(), point.as_str(), "not in the prime-order subgroup"] {
                assert!(e.message.contains(needle), "{:?} should contain {needle:?}", e.message);
            }
        }
    }
    std::env::remove_var("SUPRASEAL_C2_FAULT_ALLOC");
    // Proving calls on the CPU: the device still checks, nothing is pinned.
    std::env::set_var("SUPRASEAL_C2_BACKEND", "cpu");
    let (_, report) = load(&valid).unwrap();
    std::env::remove_var("SUPRASEAL_C2_BACKEND");
    assert_eq!(report.device.as_deref(), Some("GPU 0"));
    assert!(!report.pinned, "SUPRASEAL_C2_BACKEND=cpu: the key needs no page-locking");
    let _ = std::fs::remove_dir_all(&dir);
}
