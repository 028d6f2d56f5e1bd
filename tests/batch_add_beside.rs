//! `SUPRASEAL_C2_BATCH_ADD_BESIDE`: the batch additions of every circuit run
//! beside the last circuit's H-MSM (a second stream of the call's arithmetic)
//! and give the same proofs, byte for byte, as after it. SHA-256 circuits
//! (split plans: batch additions in L, A′, B′) through the C ABI, three to a
//! call. On the CPU backend `on` runs them beside in every call and `off` and
//! `auto` never do; on a GPU, `auto` and `on` run them beside only where the
//! memory allows (a streamed key at porep-32g's size), so there only the
//! proofs are compared.

mod common;
use common::bytes;

use supraseal_c2::pipeline;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::kit;

#[test]
fn batch_additions_beside_the_last_h_msm_give_the_same_proofs() {
    let keys = common::keys(Kind::Sha256, 15);
    let srs = Params::open(&keys.path, true).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(Kind::Sha256, 15, 3, &mut rng).unwrap();
    let ws: Vec<_> = batch.iter().map(|(w, _)| w.clone()).collect();
    // Split plans, so that there are batch additions to run (split_msm.rs).
    let aux: Vec<&[blstrs::Scalar]> = ws.iter().map(|w| w.aux.as_slice()).collect();
    let l = supraseal_c2::groth16::split::prepare(supraseal_c2::groth16::split::Query::Full { vars: ws[0].aux.len() }, &aux);
    assert!(matches!(l, supraseal_c2::groth16::split::MsmPlan::Split { .. }), "L's plan is not split");
    let rs = common::random_scalars(&mut rng, 6);
    let (r, s) = rs.split_at(3);
    let mut backends = vec!["cpu"];
    if supraseal_c2::gpu::device_count() > 0 {
        backends.push("gpu");
    }
    let mut first: Option<Vec<Vec<u8>>> = None;
    pipeline::record_reports(true);
    for backend in backends {
        for mode in ["off", "on", "auto"] {
            std::env::set_var("SUPRASEAL_C2_BACKEND", backend);
            std::env::set_var("SUPRASEAL_C2_BATCH_ADD_BESIDE", mode);
            let proofs = ffi::prove(&srs, &ws, r, s, std::ptr::null_mut(), 0).unwrap_or_else(|e| panic!("{backend}, {mode}: {e}"));
            let reports = pipeline::take_reports();
            assert_eq!(reports.len(), 1, "{backend}, {mode}: one call");
            if backend == "cpu" {
                assert_eq!(reports[0].batch_add_beside, mode == "on", "{backend}, {mode}: where the batch additions ran");
            }
            for (p, (_, inputs)) in proofs.iter().zip(&batch) {
                assert!(ffi::verify(&keys.vk, p, inputs), "{backend}, {mode}: a proof that does not verify");
            }
            let got: Vec<Vec<u8>> = proofs.iter().map(bytes).collect();
            match &first {
                None => first = Some(got),
                Some(want) => assert_eq!(&got, want, "{backend}, {mode}: other proofs for the same witnesses, r, s"),
            }
        }
    }
    pipeline::record_reports(false);
    std::env::remove_var("SUPRASEAL_C2_BATCH_ADD_BESIDE");
    std::env::remove_var("SUPRASEAL_C2_BACKEND");
}
