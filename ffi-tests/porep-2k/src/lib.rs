//! Filecoin PoRep for a 2 KiB sector through filecoin-proofs 19.1's public
//! API, shared by the parameter generator / CPU baseline (`src/main.rs`, built
//! without the `supraseal` feature: bellperson's own prover) and the test
//! (`tests/porep_2k.rs`, built with it: C2 runs in this repository's library).
//!
//! Both builds use the same [`porep_config`], so they read the same Groth16
//! parameter file from the same cache directory ([`cache_dir`]).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use bellperson::util_cs::bench_cs::BenchCS;
use bellperson::Circuit;
use blstrs::Scalar as Fr;
use filecoin_proofs::{
    add_piece, generate_piece_commitment, seal_commit_phase1, seal_commit_phase2, seal_pre_commit_phase1,
    seal_pre_commit_phase2, verify_seal, DefaultPieceHasher, PaddedBytesAmount, PoRepConfig,
    SealCommitPhase1Output, SectorShape2KiB, UnpaddedBytesAmount, SECTOR_SIZE_2_KIB,
};
use rand::{Rng, RngCore};
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::{
    parameter_cache_params_path, parameter_cache_verifying_key_path, CacheableParameters,
};
use storage_proofs_core::sector::SectorId;
use storage_proofs_porep::stacked::{PublicParams, StackedCircuit, StackedCompound, StackedDrg};

/// The merkle tree shape of a 2 KiB sector.
pub type Tree = SectorShape2KiB;
type Compound = StackedCompound<Tree, DefaultPieceHasher>;

/// Size of the `.vk` file: the head of the `.params` file (alpha_g1, beta_g1,
/// beta_g2, gamma_g2, delta_g1, delta_g2 = 864 bytes, then the 40 `ic` points
/// with their u32 count).
pub const VK_LEN: u64 = 4_708;

/// Overrides the parameter cache directory.
pub const CACHE_ENV: &str = "SUPRASEAL_C2_FIL_PARAMS";

/// The parameter (and parent) cache: `$SUPRASEAL_C2_FIL_PARAMS`, else
/// `$XDG_CACHE_HOME/supraseal-c2/filecoin-params`, else
/// `~/.cache/supraseal-c2/filecoin-params`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(CACHE_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache"));
    base.join("supraseal-c2").join("filecoin-params")
}

/// Points `FIL_PROOFS_PARAMETER_CACHE` and `FIL_PROOFS_PARENT_CACHE` at
/// `dir` (creating it). filecoin-proofs reads them once, on first use, so
/// call this before any other function of this crate.
pub fn use_cache_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir);
    Ok(())
}

/// The sealing configuration: 2 KiB, the porep id of
/// `RegisteredSealProof::StackedDrg2KiBV1_1` (id 5, nonce 0), API 1.2.
pub fn porep_config() -> PoRepConfig {
    let mut porep_id = [0u8; 32];
    porep_id[..8].copy_from_slice(&5u64.to_le_bytes());
    PoRepConfig::new_groth16(SECTOR_SIZE_2_KIB, porep_id, ApiVersion::V1_2_0)
}

fn public_params(config: &PoRepConfig) -> Result<PublicParams<Tree>> {
    filecoin_proofs::parameters::public_params::<Tree>(config)
}

/// Paths of the `.params` and `.vk` files for `config` in the current cache.
pub fn param_paths(config: &PoRepConfig) -> Result<(PathBuf, PathBuf)> {
    let pp = public_params(config)?;
    let id = <Compound as CacheableParameters<StackedCircuit<Tree, DefaultPieceHasher>, PublicParams<Tree>>>::cache_identifier(&pp);
    Ok((parameter_cache_params_path(&id), parameter_cache_verifying_key_path(&id)))
}

/// Generates the Groth16 parameters of the 2 KiB circuit with
/// `CompoundProof::groth_params(Some(rng), ..)` and its `.vk` with
/// `CompoundProof::verifying_key`, into the current cache. Only meaningful
/// in the build without `supraseal` (with it, filecoin-proofs refuses to make
/// a verifying key). Checks that the `.vk` is the head of the `.params`.
pub fn generate_params<R: RngCore>(config: &PoRepConfig, rng: &mut R) -> Result<(PathBuf, PathBuf)> {
    let pp = public_params(config)?;
    let _params = <Compound as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::groth_params(Some(&mut *rng), &pp)?;
    let _vk = <Compound as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::verifying_key(Some(rng), &pp)?;
    let (params, vk) = param_paths(config)?;
    let vk_bytes = std::fs::read(&vk).with_context(|| format!("reading {}", vk.display()))?;
    let mut head = vec![0u8; vk_bytes.len()];
    File::open(&params)?.read_exact(&mut head)?;
    ensure!(vk_bytes.len() as u64 == VK_LEN, "{}: {} bytes, expected {VK_LEN}", vk.display(), vk_bytes.len());
    ensure!(head == vk_bytes, "{} is not the head of {}", vk.display(), params.display());
    Ok((params, vk))
}

/// Sizes of the C2 circuit.
#[derive(Debug, Clone)]
pub struct Facts {
    pub partitions: usize,
    /// The circuit's constraints (bellperson's prover adds one `input · 1 = 0`
    /// constraint per input on top of these).
    pub constraints: usize,
    /// Public inputs, the constant one included.
    pub inputs: usize,
    pub aux: usize,
    /// log2 of the evaluation domain (constraints + inputs, rounded up).
    pub domain_log2: u32,
    pub params_bytes: u64,
}

impl std::fmt::Display for Facts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "partitions {}, constraints {} (+ {} input constraints = {} as proved), inputs {}, aux {}, domain 2^{}, params file {} bytes",
            self.partitions,
            self.constraints,
            self.inputs,
            self.constraints + self.inputs,
            self.inputs,
            self.aux,
            self.domain_log2,
            self.params_bytes
        )
    }
}

fn read_u32_at(f: &mut File, off: u64) -> Result<u32> {
    let mut b = [0u8; 4];
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

/// Counts constraints by synthesizing the blank circuit (bellperson's
/// `BenchCS`) and reads inputs/aux from the params file (`ic` and `l` counts).
pub fn facts(config: &PoRepConfig) -> Result<Facts> {
    let pp = public_params(config)?;
    let circuit = <Compound as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(&pp);
    let mut cs = BenchCS::<Fr>::new();
    circuit.synthesize(&mut cs)?;
    let (params, _) = param_paths(config)?;
    let mut f = File::open(&params).with_context(|| format!("opening {}", params.display()))?;
    let params_bytes = f.metadata()?.len();
    const HEAD: u64 = 96 * 3 + 192 * 3; // alpha, beta, delta (G1); beta, gamma, delta (G2)
    let ic = read_u32_at(&mut f, HEAD)? as u64;
    let h_off = HEAD + 4 + ic * 96;
    let h = read_u32_at(&mut f, h_off)? as u64;
    let l_off = h_off + 4 + h * 96;
    let l = read_u32_at(&mut f, l_off)? as u64;
    ensure!(ic as usize == cs.num_inputs(), "params ic count {ic} != circuit inputs {}", cs.num_inputs());
    let n = (cs.num_constraints() + cs.num_inputs()).next_power_of_two();
    ensure!(h + 1 == n as u64, "params h count {h} != domain {n} - 1");
    Ok(Facts {
        partitions: usize::from(config.partitions),
        constraints: cs.num_constraints(),
        inputs: cs.num_inputs(),
        aux: l as usize,
        domain_log2: n.trailing_zeros(),
        params_bytes,
    })
}

/// A sector sealed up to commit phase 1, with everything C2 and
/// verification need.
pub struct Sealed {
    pub config: PoRepConfig,
    pub prover_id: [u8; 32],
    pub sector_id: SectorId,
    pub ticket: [u8; 32],
    pub seed: [u8; 32],
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    /// The commit-phase-1 output, bincode-serialized (it is not `Clone`;
    /// each C2 run deserializes a fresh copy, as a C2 worker would).
    pub c1: Vec<u8>,
    /// Seconds spent in add_piece + PC1 + PC2 + C1.
    pub seal_secs: f64,
    _dir: tempfile::TempDir,
}

/// Adds one random piece filling the sector, then runs
/// `seal_pre_commit_phase1/2` and `seal_commit_phase1`.
pub fn seal_to_c1<R: Rng>(config: &PoRepConfig, rng: &mut R) -> Result<Sealed> {
    let t = Instant::now();
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache)?;
    let staged = dir.path().join("staged");
    let sealed = dir.path().join("sealed");

    let piece_len = UnpaddedBytesAmount::from(PaddedBytesAmount(SECTOR_SIZE_2_KIB));
    let mut piece = vec![0u8; u64::from(piece_len) as usize];
    rng.fill_bytes(&mut piece);
    let piece_info = generate_piece_commitment(&piece[..], piece_len)?;
    let mut staged_file = File::create(&staged)?;
    let (added, written) = add_piece(&piece[..], &mut staged_file, piece_len, &[])?;
    staged_file.flush()?;
    ensure!(added == piece_info, "add_piece commitment differs from generate_piece_commitment");
    ensure!(written == piece_len, "add_piece wrote {written:?}, expected {piece_len:?}");
    File::create(&sealed)?;
    let pieces = vec![piece_info];

    let prover_id: [u8; 32] = rng.gen();
    let sector_id = SectorId::from(rng.gen::<u64>());
    let ticket: [u8; 32] = rng.gen();
    let seed: [u8; 32] = rng.gen();

    let pc1 = seal_pre_commit_phase1::<_, _, _, Tree>(config, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces)?;
    let pc2 = seal_pre_commit_phase2(config, pc1, &cache, &sealed)?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal_commit_phase1::<_, Tree>(config, &cache, &sealed, prover_id, sector_id, ticket, seed, pc2, &pieces)?;
    let c1 = bincode::serialize(&c1)?;
    Ok(Sealed {
        config: config.clone(),
        prover_id,
        sector_id,
        ticket,
        seed,
        comm_r,
        comm_d,
        c1,
        seal_secs: t.elapsed().as_secs_f64(),
        _dir: dir,
    })
}

impl Sealed {
    /// Runs `seal_commit_phase2` (synthesis, proving with whichever prover
    /// this build has, and filecoin-proofs' own post-seal verification) and
    /// returns the proof bytes and the wall time.
    pub fn c2(&self) -> Result<(Vec<u8>, Duration)> {
        let c1: SealCommitPhase1Output<Tree> = bincode::deserialize(&self.c1)?;
        let t = Instant::now();
        let out = seal_commit_phase2::<Tree>(&self.config, c1, self.prover_id, self.sector_id)?;
        Ok((out.proof, t.elapsed()))
    }

    /// `verify_seal` with this sector's commitments and ticket and the given
    /// seed and proof.
    pub fn verify(&self, seed: [u8; 32], proof: &[u8]) -> Result<bool> {
        verify_seal::<Tree>(&self.config, self.comm_r, self.comm_d, self.prover_id, self.sector_id, self.ticket, seed, proof)
    }
}

/// The proof with its A point negated (sign bit of the compressed encoding
/// flipped): still a well-formed proof, but not a valid one.
pub fn tamper(proof: &[u8]) -> Vec<u8> {
    let mut p = proof.to_vec();
    p[0] ^= 0x20;
    p
}

/// A one-line description of this machine (CPU model, cores, memory).
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|k| k.parse::<u64>().ok()))
        .map(|kib| format!("{:.0} GiB", kib as f64 / (1 << 20) as f64))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    format!("{cpu}, {cores} cores, {mem}")
}

/// Counts of the aux values an MSM of C2 takes as scalars: 0, 1 and
/// anything else (1s go to batch additions, "other" to the tail MSM).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValueCounts {
    pub zero: usize,
    pub one: usize,
    pub other: usize,
}

impl ValueCounts {
    fn add(&mut self, v: &Fr) {
        use ff::Field;
        if bool::from(v.is_zero()) {
            self.zero += 1;
        } else if *v == Fr::ONE {
            self.one += 1;
        } else {
            self.other += 1;
        }
    }

    pub fn total(&self) -> usize {
        self.zero + self.one + self.other
    }
}

impl std::fmt::Display for ValueCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.total().max(1) as f64;
        write!(
            f,
            "{} values: 0 {} ({:.2} %), 1 {} ({:.2} %), other {} ({:.2} %)",
            self.total(),
            self.zero,
            100.0 * self.zero as f64 / t,
            self.one,
            100.0 * self.one as f64 / t,
            self.other,
            100.0 * self.other as f64 / t
        )
    }
}

/// The value mix of one partition's circuit: the aux values of the L MSM
/// (all aux variables), of the A MSM's aux part (A-density bits) and of the
/// B MSMs' aux part (B-density bits), with the circuit's sizes.
#[derive(Debug, Clone)]
pub struct PartitionMix {
    pub constraints: usize,
    pub inputs: usize,
    pub aux: usize,
    pub a_aux_popcount: usize,
    pub b_inp_popcount: usize,
    pub b_aux_popcount: usize,
    pub l: ValueCounts,
    pub a_aux: ValueCounts,
    pub b_aux: ValueCounts,
}

/// Seals a random 2 KiB sector to commit phase 1, then builds each
/// partition's circuit exactly as `seal_commit_phase2` does (filecoin-proofs'
/// `StackedCompound::circuit` on the C1 vanilla proofs) and synthesizes it
/// with the witness-only constraint system of this repository's CLI (the
/// collector whose output the prover receives), counting the aux values.
pub fn value_mix<R: Rng>(config: &PoRepConfig, rng: &mut R) -> Result<Vec<PartitionMix>> {
    use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain};
    use filecoin_hashers::Domain;
    use storage_proofs_core::compound_proof::SetupParams;
    use storage_proofs_porep::stacked::{PublicInputs, Tau};

    let sealed = seal_to_c1(config, rng)?;
    let c1: SealCommitPhase1Output<Tree> = bincode::deserialize(&sealed.c1)?;
    let comm_r_safe = as_safe_commitment(&c1.comm_r, "comm_r")?;
    let comm_d_safe = DefaultPieceDomain::try_from_bytes(&c1.comm_d)?;
    let public_inputs = PublicInputs {
        replica_id: c1.replica_id,
        tau: Some(Tau { comm_d: comm_d_safe, comm_r: comm_r_safe }),
        k: None,
        seed: Some(c1.seed),
    };
    let setup = SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(config)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let pp = <Compound as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(&setup)?;
    let mut out = Vec::new();
    for (k, vanilla) in c1.vanilla_proofs.iter().enumerate() {
        let circuit = <Compound as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::circuit(
            &public_inputs,
            Default::default(),
            vanilla,
            &pp.vanilla_params,
            Some(k),
        )?;
        let w = supraseal_c2_cli::collector::Witness::synthesize(circuit)?;
        let bit = |words: &[u64], i: usize| words[i / 64] >> (i % 64) & 1 == 1;
        let mut m = PartitionMix {
            constraints: w.num_constraints(),
            inputs: w.inputs.len(),
            aux: w.aux.len(),
            a_aux_popcount: w.a_aux_density.popcount(),
            b_inp_popcount: w.b_inp_density.popcount(),
            b_aux_popcount: w.b_aux_density.popcount(),
            l: ValueCounts::default(),
            a_aux: ValueCounts::default(),
            b_aux: ValueCounts::default(),
        };
        for (j, v) in w.aux.iter().enumerate() {
            m.l.add(v);
            if bit(&w.a_aux_density.words, j) {
                m.a_aux.add(v);
            }
            if bit(&w.b_aux_density.words, j) {
                m.b_aux.add(v);
            }
        }
        out.push(m);
    }
    Ok(out)
}
