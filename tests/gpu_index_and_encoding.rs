//! Regression tests for two review findings: a huge `gpu_index` with a NULL
//! lock handle must not grow the default-handle table (it grew to
//! `gpu_index + 1` handles: i32::MAX would need ~80 GB), and a switch whose
//! value is not UTF-8 is malformed (EINVAL naming it), not "unset".

mod common;

use std::os::unix::ffi::OsStrExt;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

#[test]
fn huge_gpu_index_and_non_utf8_switches() {
    let keys = common::keys(Kind::Mimc, 9);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let w = kit::witnesses(Kind::Mimc, 9, 1, &mut rng).unwrap();
    let rs = common::random_scalars(&mut rng, 2);
    let prove = |gpu_index: i32| ffi::prove(&srs, std::slice::from_ref(&w[0].0), &rs[..1], &rs[1..], std::ptr::null_mut(), gpu_index);

    let gpus = supraseal_c2::gpu::device_count();
    let forced_cpu = std::env::var("SUPRASEAL_C2_BACKEND").is_ok_and(|b| b.trim().eq_ignore_ascii_case("cpu"));
    match prove(i32::MAX) {
        // The CPU backend is one device: any index proves, on device 0's handle.
        Ok(p) if gpus == 0 || forced_cpu => assert!(ffi::verify(&keys.vk, &p[0], &w[0].1)),
        Ok(_) => panic!("gpu_index i32::MAX on a host with {gpus} GPU(s) must be refused"),
        // On a GPU host the index does not exist.
        Err(e) => {
            assert!(gpus > 0 && !forced_cpu, "unexpected error without a GPU: {e}");
            assert_eq!(e.code, libc::ENODEV, "{e}");
            assert!(e.message.contains("2147483647"), "{e}");
        }
    }

    for name in ["SUPRASEAL_C2_LOCKS", "SUPRASEAL_C2_PRESTAGE", "SUPRASEAL_C2_VRAM_LIMIT_MB", "SUPRASEAL_C2_BACKEND"] {
        std::env::set_var(name, std::ffi::OsStr::from_bytes(b"tw\xffo"));
        let e = prove(0).expect_err("a non-UTF-8 value is malformed");
        std::env::remove_var(name);
        assert_eq!(e.code, libc::EINVAL, "{name}: {e}");
        assert!(e.message.contains(name), "{name}: {e}");
    }
    let p = prove(0).expect("switches unset again");
    assert!(ffi::verify(&keys.vk, &p[0], &w[0].1));
}
