//! The entry point lotus reaches through filecoin-ffi: a 2 KiB sector sealed
//! and proved with filecoin-proofs-api 19.1 (the crate and version that
//! filecoin-ffi's rust/Cargo.toml pins) built with its `cuda-supraseal`
//! feature, called the way filecoin-ffi's rust/src/proofs/api.rs calls it
//! (the phase outputs cross the C ABI as JSON). C2 runs in this repository's
//! library: `seal::seal_commit_phase2` -> filecoin-proofs ->
//! bellperson's supraseal prover -> `supraseal_c2::generate_groth16_proofs`,
//! which the library's call reports confirm. `seal::verify_seal` accepts the
//! proof and rejects a tampered proof and a wrong seed.
//! Needs the params made by `porep-2k params` (ffi-tests/run-rust.sh does it).
#![cfg(feature = "supraseal")]

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use filecoin_proofs_api::seal::{self, SealCommitPhase1Output, SealPreCommitPhase1Output};
use filecoin_proofs_api::{PaddedBytesAmount, PieceInfo, RegisteredSealProof, SectorId, UnpaddedBytesAmount};
use porep_2k::{cache_dir, machine, param_paths, porep_config, tamper, use_cache_dir};
use rand::Rng;

/// lotus' 2 KiB seal proof (go-state-types `RegisteredSealProof_StackedDrg2KiBV1_1`).
const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

/// A sector sealed through commit phase 1, as filecoin-ffi's caller keeps it.
struct Sector {
    prover_id: [u8; 32],
    sector_id: SectorId,
    ticket: [u8; 32],
    seed: [u8; 32],
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    /// `seal_commit_phase1`'s output as filecoin-ffi returns it: JSON.
    c1_json: Vec<u8>,
    _dir: tempfile::TempDir,
}

/// One random piece filling the sector (`add_piece`, filecoin-ffi's
/// `write_with_alignment`), then PC1, PC2 and C1, each output passed on
/// through JSON where filecoin-ffi passes it through JSON.
fn seal_to_c1<R: Rng>(rng: &mut R) -> Sector {
    let dir = tempfile::tempdir().unwrap();
    let cache: PathBuf = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let staged: PathBuf = dir.path().join("staged");
    let sealed: PathBuf = dir.path().join("sealed");

    let piece_len = UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(PROOF.sector_size())));
    let mut piece = vec![0u8; u64::from(piece_len) as usize];
    rng.fill_bytes(&mut piece);
    let commitment = seal::generate_piece_commitment(PROOF, &piece[..], piece_len).unwrap();
    let mut staged_file = OpenOptions::new().read(true).write(true).create_new(true).open(&staged).unwrap();
    let (added, written) = seal::add_piece(PROOF, &piece[..], &mut staged_file, piece_len, &[]).unwrap();
    staged_file.flush().unwrap();
    assert_eq!(added, commitment, "add_piece's commitment differs from generate_piece_commitment's");
    assert_eq!(written, piece_len);
    File::create(&sealed).unwrap();
    let pieces: Vec<PieceInfo> = vec![added];

    let prover_id: [u8; 32] = rng.gen();
    let sector_id = SectorId::from(rng.gen::<u64>());
    let ticket: [u8; 32] = rng.gen();
    let seed: [u8; 32] = rng.gen();

    let pc1 = seal::seal_pre_commit_phase1(PROOF, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces).unwrap();
    let pc1: SealPreCommitPhase1Output = serde_json::from_slice(&serde_json::to_vec(&pc1).unwrap()).unwrap();
    let pc2 = seal::seal_pre_commit_phase2(pc1, &cache, &sealed).unwrap();
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    assert_eq!(pc2.registered_proof, PROOF);
    let c1 = seal::seal_commit_phase1(&cache, &sealed, prover_id, sector_id, ticket, seed, pc2, &pieces).unwrap();
    Sector { prover_id, sector_id, ticket, seed, comm_r, comm_d, c1_json: serde_json::to_vec(&c1).unwrap(), _dir: dir }
}

impl Sector {
    /// filecoin-ffi's `seal_commit_phase2`: C1's JSON in, proof bytes out.
    /// Returns the proof and the call reports our library recorded meanwhile.
    fn c2(&self) -> (Vec<u8>, Vec<supraseal_c2::CallReport>) {
        let c1: SealCommitPhase1Output = serde_json::from_slice(&self.c1_json).unwrap();
        supraseal_c2::record_reports(true);
        let out = seal::seal_commit_phase2(c1, self.prover_id, self.sector_id);
        let reports = supraseal_c2::take_reports();
        supraseal_c2::record_reports(false);
        (out.unwrap().proof, reports)
    }

    fn verify(&self, seed: [u8; 32], proof: &[u8]) -> bool {
        seal::verify_seal(PROOF, self.comm_r, self.comm_d, self.prover_id, self.sector_id, self.ticket, seed, proof).unwrap()
    }
}

#[test]
fn filecoin_proofs_api_2k_c2_through_supraseal_c2() {
    use_cache_dir(&cache_dir()).unwrap();
    // The params porep-2k generated are the ones filecoin-proofs-api looks up
    // for this proof type (same circuit identifier, same cache).
    let (params, vk) = param_paths(&porep_config()).unwrap();
    assert_eq!(PROOF.cache_params_path().unwrap(), params, "filecoin-proofs-api's params path");
    assert_eq!(PROOF.cache_verifying_key_path().unwrap(), vk, "filecoin-proofs-api's .vk path");
    assert!(
        params.exists() && vk.exists(),
        "{} or its .vk is missing: run `cargo run --release -- params` (without --features supraseal) first, \
         or ffi-tests/run-rust.sh",
        params.display()
    );
    println!("machine: {}", machine());
    println!("proof type: {PROOF:?}, partitions {}, params {}", PROOF.partitions(), params.display());

    let t = Instant::now();
    let sector = seal_to_c1(&mut rand::thread_rng());
    println!("add_piece + PC1 + PC2 + C1 (filecoin-proofs-api): {:.3} s", t.elapsed().as_secs_f64());

    // seal_commit_phase2 proves (our library) and then runs filecoin-proofs'
    // own post-seal verify_seal, an error if false. One run: tests/porep_2k.rs
    // already checks that two runs differ (fresh r, s), and each run here
    // costs a params load (this is a process of its own).
    let t = Instant::now();
    let (proof, reports) = sector.c2();
    let c2_secs = t.elapsed().as_secs_f64();

    assert_eq!(reports.len(), 1, "one proving call of supraseal-c2 expected, got {reports:?}");
    let r = &reports[0];
    assert_eq!(r.circuits, usize::from(PROOF.partitions()), "circuits in the call");
    assert!(r.error.is_none(), "supraseal-c2 reported an error: {:?}", r.error);
    println!("supraseal-c2 proving call: backend {}, circuits {}, domain {}", r.backend, r.circuits, r.domain);
    assert_eq!(proof.len(), PROOF.single_partition_proof_len() * usize::from(PROOF.partitions()));

    assert!(sector.verify(sector.seed, &proof), "verify_seal of our proof");
    println!("verify_seal(proof) = true");

    assert!(!sector.verify(sector.seed, &tamper(&proof)), "tampered proof must not verify");
    println!("verify_seal(tampered proof) = false");

    let mut wrong_seed = sector.seed;
    wrong_seed[0] ^= 1;
    assert!(!sector.verify(wrong_seed, &proof), "wrong seed must not verify");
    println!("verify_seal(wrong seed) = false");

    println!("RESULT fpapi_c2_cold_secs={c2_secs:.1} (includes loading params)");
}
