//! `SUPRASEAL_C2_BATCH_ADD_BESIDE`: the batch additions of every circuit run
//! beside the last circuit's H-MSM (a second stream of the call's arithmetic)
//! and give the same proofs, byte for byte, as after it. SHA-256 circuits
//! (split plans: batch additions in L, A′, B′) through the C ABI, three to a
//! call, each proof verified. On the CPU backend `on` runs them beside in
//! every call and `off` and `auto` never do. On a GPU (where there is one),
//! with the key streamed (`SUPRASEAL_C2_KEY_RESIDENT=off`) and 1 MiB chunks,
//! a 2^18 domain is large enough for the H step and the batch additions to
//! fit the call's peak together, so `auto` and `on` run them beside there;
//! with the key resident only `on` does (the H-MSM in one piece beside them).

mod common;
use common::bytes;

use supraseal_c2::pipeline;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

const SWITCHES: [&str; 4] = ["SUPRASEAL_C2_BACKEND", "SUPRASEAL_C2_BATCH_ADD_BESIDE", "SUPRASEAL_C2_KEY_RESIDENT", "SUPRASEAL_C2_GPU_CHUNK_MB"];

/// Proves three SHA-256 circuits of 2^`k` with `vars` for each mode (off,
/// on, auto): the same proofs in every mode, each verified; where the
/// report says the batch additions ran, as `beside(mode)` says.
fn check(k: u32, vars: &[(&str, &str)], beside: impl Fn(&str) -> bool) {
    let keys = common::keys(Kind::Sha256, k);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Sha256, k, 3, &mut rng).unwrap();
    let ws: Vec<_> = batch.iter().map(|(w, _)| w.clone()).collect();
    // Split plans, so that there are batch additions to run (split_msm.rs).
    let aux: Vec<&[blstrs::Scalar]> = ws.iter().map(|w| w.aux.as_slice()).collect();
    let l = supraseal_c2::groth16::split::prepare(supraseal_c2::groth16::split::Query::Full { vars: ws[0].aux.len() }, &aux);
    assert!(matches!(l, supraseal_c2::groth16::split::MsmPlan::Split { .. }), "L's plan is not split");
    let rs = common::random_scalars(&mut rng, 6);
    let (r, s) = rs.split_at(3);
    let mut first: Option<Vec<Vec<u8>>> = None;
    pipeline::record_reports(true);
    for mode in ["off", "on", "auto"] {
        for k in SWITCHES {
            std::env::remove_var(k);
        }
        for (k, v) in vars.iter().chain(&[("SUPRASEAL_C2_BATCH_ADD_BESIDE", mode)]) {
            std::env::set_var(k, v);
        }
        let proofs = ffi::prove(&srs, &ws, r, s, std::ptr::null_mut(), 0).unwrap_or_else(|e| panic!("{vars:?}, {mode}: {e}"));
        let reports = pipeline::take_reports();
        assert_eq!(reports.len(), 1, "{vars:?}, {mode}: one call");
        assert_eq!(reports[0].batch_add_beside, beside(mode), "{vars:?}, {mode}: where the batch additions ran");
        for (p, (_, inputs)) in proofs.iter().zip(&batch) {
            assert!(ffi::verify(&keys.vk, p, inputs), "{vars:?}, {mode}: a proof that does not verify");
        }
        let got: Vec<Vec<u8>> = proofs.iter().map(bytes).collect();
        match &first {
            None => first = Some(got),
            Some(want) => assert_eq!(&got, want, "{vars:?}, {mode}: other proofs for the same witnesses, r, s"),
        }
    }
    pipeline::record_reports(false);
    for k in SWITCHES {
        std::env::remove_var(k);
    }
}

#[test]
fn batch_additions_beside_the_last_h_msm_give_the_same_proofs() {
    check(15, &[("SUPRASEAL_C2_BACKEND", "cpu")], |mode| mode == "on");
    if supraseal_c2::gpu::device_count() > 0 {
        let gpu = [("SUPRASEAL_C2_BACKEND", "gpu"), ("SUPRASEAL_C2_KEY_RESIDENT", "off"), ("SUPRASEAL_C2_GPU_CHUNK_MB", "1")];
        check(18, &gpu, |mode| mode != "off");
        eprintln!("GPU: the batch additions ran beside the last H-MSM with auto and on, the same proofs as off");
        // The key resident (from the first call on): only `on` runs them
        // beside, the H-MSM in one piece.
        let resident = [("SUPRASEAL_C2_BACKEND", "gpu"), ("SUPRASEAL_C2_KEY_RESIDENT", "auto"), ("SUPRASEAL_C2_GPU_CHUNK_MB", "1")];
        check(18, &resident, |mode| mode == "on");
        eprintln!("GPU, key resident: the batch additions ran beside the last H-MSM with on, the same proofs as off and auto");
    } else {
        eprintln!("GPU half skipped: no usable GPU");
    }
}
