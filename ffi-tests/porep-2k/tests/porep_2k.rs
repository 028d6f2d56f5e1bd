//! Filecoin PoRep C2 for a 2 KiB sector through filecoin-proofs 19.1,
//! unchanged, with C2 proved by this repository's library (bellperson's
//! `cuda-supraseal` prover -> `supraseal_c2::generate_groth16_proofs`).
//! Needs the params made by `porep-2k params` (ffi-tests/run-rust.sh does it).
#![cfg(feature = "supraseal")]

use porep_2k::*;

#[test]
fn porep_2k_c2_through_supraseal_c2() {
    let dir = cache_dir();
    use_cache_dir(&dir).unwrap();
    let config = porep_config();
    let (params, vk) = param_paths(&config).unwrap();
    assert!(
        params.exists() && vk.exists(),
        "{} or its .vk is missing: run `cargo run --release -- params` (without --features supraseal) first, \
         or ffi-tests/run-rust.sh",
        params.display()
    );
    println!("machine: {}", machine());
    let facts = facts(&config).unwrap();
    println!("facts: {facts}");
    assert_eq!(facts.partitions, 1);

    let sealed = seal_to_c1(&config, &mut rand::thread_rng()).unwrap();
    println!("add_piece + PC1 + PC2 + C1: {:.3} s", sealed.seal_secs);

    // seal_commit_phase2 proves through our library and then runs
    // filecoin-proofs' own post-seal verify_seal (an error if false).
    let (proof, cold) = sealed.c2().unwrap();
    let (proof2, warm) = sealed.c2().unwrap();
    assert_ne!(proof, proof2, "two C2 runs must use fresh r, s");

    assert!(sealed.verify(sealed.seed, &proof).unwrap(), "verify_seal of our proof");
    assert!(sealed.verify(sealed.seed, &proof2).unwrap(), "verify_seal of our second proof");
    println!("verify_seal(proof) = true");

    let bad = tamper(&proof);
    assert!(!sealed.verify(sealed.seed, &bad).unwrap(), "tampered proof must not verify");
    println!("verify_seal(tampered proof) = false");

    let mut wrong_seed = sealed.seed;
    wrong_seed[0] ^= 1;
    assert!(!sealed.verify(wrong_seed, &proof).unwrap(), "wrong seed must not verify");
    println!("verify_seal(wrong seed) = false");

    println!(
        "C2 supraseal-c2 (this repo): cold {:.1} s (includes loading params), warm {:.1} s",
        cold.as_secs_f64(),
        warm.as_secs_f64()
    );
    println!("RESULT c2_ours_cold_secs={:.1} c2_ours_warm_secs={:.1}", cold.as_secs_f64(), warm.as_secs_f64());
}
