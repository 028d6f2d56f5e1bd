//! Backend selection through SUPRASEAL_C2_BACKEND. One test per process
//! state: the variable is process-wide, so these run in one test function.

mod common;

use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

#[test]
fn gpu_without_a_gpu_backend_is_enodev_and_bad_values_are_einval() {
    let keys = common::keys(Kind::Mimc, 8);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Mimc, 8, 1, &mut rng).unwrap();
    let ws = vec![batch[0].0.clone()];
    let r = common::random_scalars(&mut rng, 1);

    std::env::set_var("SUPRASEAL_C2_BACKEND", "gpu");
    let e = ffi::prove(&srs, &ws, &r, &r, std::ptr::null_mut(), 0).unwrap_err();
    assert_eq!(e.code, libc::ENODEV, "{}", e.message);
    assert!(e.message.contains("SUPRASEAL_C2_BACKEND=gpu"), "{}", e.message);

    std::env::set_var("SUPRASEAL_C2_BACKEND", "tpu");
    let e = ffi::prove(&srs, &ws, &r, &r, std::ptr::null_mut(), 0).unwrap_err();
    assert_eq!(e.code, libc::EINVAL);
    assert!(e.message.contains("\"tpu\""), "{}", e.message);

    for choice in ["cpu", "auto", ""] {
        std::env::set_var("SUPRASEAL_C2_BACKEND", choice);
        let p = ffi::prove(&srs, &ws, &r, &r, std::ptr::null_mut(), 0).unwrap();
        assert!(ffi::verify(&keys.vk, &p[0], &batch[0].1), "backend {choice:?}");
    }
}
