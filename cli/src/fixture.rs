//! `supraseal-c2 fixture --out DIR`: test fixtures for foreign (C, Go)
//! callers of the ABI. Generated at test time into a build folder, never
//! committed. `ffi-tests/FIXTURES.md` documents the same layout.
//!
//! For each set (`mimc-k10`, and `sha256-k15` with `--sha256`) the folder gets:
//!
//! | file | contents |
//! |---|---|
//! | `fixtures.txt` | one line per set: `<set> <params file> <circuits>` (ASCII, space-separated, relative names) |
//! | `<set>.params` | the bellperson params file (`params::ensure`; reused when present) |
//! | `<set>.witness` | the `Assignment` data of `<circuits>` circuits (layout below) |
//! | `<set>.r`, `<set>.s` | `<circuits>` × `fr_t` (32 bytes each): the r and s of each circuit |
//! | `<set>.proofs` | `<circuits>` × 384-byte `groth16_proof` records: the expected proofs |
//!
//! Every number is little-endian; every `fr_t` is 4 u64 limbs in Montgomery
//! form (the in-memory layout of the header's `fr_t`), so the files can be
//! used in place. `<set>.witness`, all u64 words, so every field is 8-byte aligned:
//!
//! ```text
//! magic   8 bytes "SC2WIT01"
//! count   u64                      number of circuits
//! per circuit:
//!   9 × u64: a_aux_bit_len, a_aux_popcount, b_inp_bit_len, b_inp_popcount,
//!            b_aux_bit_len, b_aux_popcount, abc_size, inp_size, aux_size
//!   a_aux_density   ceil(a_aux_bit_len / 64) u64 words
//!   b_inp_density   ceil(b_inp_bit_len / 64) u64 words
//!   b_aux_density   ceil(b_aux_bit_len / 64) u64 words
//!   a, b, c         abc_size fr_t each
//!   inp             inp_size fr_t (index 0 is the constant one)
//!   aux             aux_size fr_t
//! ```
//!
//! The expected proofs come from bellperson's own prover (`create_proof`
//! with the same circuit, r and s), not from this library, and each is
//! checked with bellperson's verifier ([`ffi::verify`]) before it is written.
//! Witnesses, r and s are fixed by `--seed` (default 1).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use bellperson::groth16::{create_proof, Parameters};
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand::SeedableRng;

use supraseal_c2::groth16_proof;
use supraseal_c2_cli::circuits::{Instance, Kind};
use supraseal_c2_cli::collector::{BitVec, Witness};
use supraseal_c2_cli::{ffi, params};

/// Magic bytes at the start of a `.witness` file.
pub const WITNESS_MAGIC: &[u8; 8] = b"SC2WIT01";

#[derive(clap::Args)]
pub struct FixtureArgs {
    /// Output folder (created if missing; params files already in it are reused).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Circuits per set.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub circuits: u64,
    /// Also write the sha256-k15 set (mostly boolean witness: the split-MSM path).
    #[arg(long)]
    pub sha256: bool,
    /// Seed for the witnesses and r, s.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
}

/// Appends the header's `fr_t` of each scalar: its Montgomery form x·R mod r
/// (R = 2^256) as 32 little-endian bytes, i.e. the canonical encoding of x·R.
fn scalar_bytes(out: &mut Vec<u8>, v: &[Scalar]) {
    let r_mont = Scalar::from(2u64).pow_vartime([256]);
    for x in v {
        out.extend_from_slice(&(*x * r_mont).to_bytes_le());
    }
}

fn u64s(out: &mut Vec<u8>, v: &[u64]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn density(out: &mut Vec<u8>, d: &BitVec) {
    debug_assert_eq!(d.words.len(), d.len.div_ceil(64));
    u64s(out, &d.words);
}

/// The `.witness` encoding of `ws` (layout in the module doc).
pub fn encode_witnesses(ws: &[Witness]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(WITNESS_MAGIC);
    u64s(&mut out, &[ws.len() as u64]);
    for w in ws {
        let header = [
            w.a_aux_density.len,
            w.a_aux_density.popcount(),
            w.b_inp_density.len,
            w.b_inp_density.popcount(),
            w.b_aux_density.len,
            w.b_aux_density.popcount(),
            w.a.len(),
            w.inputs.len(),
            w.aux.len(),
        ];
        u64s(&mut out, &header.map(|x| x as u64));
        density(&mut out, &w.a_aux_density);
        density(&mut out, &w.b_inp_density);
        density(&mut out, &w.b_aux_density);
        for v in [&w.a, &w.b, &w.c, &w.inputs, &w.aux] {
            scalar_bytes(&mut out, v);
        }
    }
    out
}

fn proof_bytes(p: &groth16_proof) -> Vec<u8> {
    let mut out = Vec::with_capacity(384);
    let fp = |out: &mut Vec<u8>, f: &supraseal_c2::abi::types::fp_t| u64s(out, &f.limbs);
    fp(&mut out, &p.a.x);
    fp(&mut out, &p.a.y);
    for c in [&p.b.x, &p.b.y] {
        fp(&mut out, &c.c0);
        fp(&mut out, &c.c1);
    }
    fp(&mut out, &p.c.x);
    fp(&mut out, &p.c.y);
    debug_assert_eq!(out.len(), std::mem::size_of::<groth16_proof>());
    out
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = BufWriter::new(File::create(path).with_context(|| format!("creating {}", path.display()))?);
    f.write_all(bytes).and_then(|_| f.flush()).with_context(|| format!("writing {}", path.display()))
}

/// Writes one set; returns its `fixtures.txt` line.
fn write_set(dir: &Path, kind: Kind, k: u32, n: usize, seed: u64) -> Result<String> {
    let set = format!("{}-k{k}", kind.name());
    let (params_path, generated) = params::ensure(dir, kind, k, seed)?;
    println!("{set}: params {} ({})", params_path.display(), if generated { "generated" } else { "reused" });
    let params: Parameters<Bls12> =
        Parameters::read(BufReader::new(File::open(&params_path)?), false).context("reading the params back")?;

    // Per-set stream so adding a set never changes another set's bytes.
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed ^ ((k as u64) << 32) ^ (kind as u64));
    let shape = Instance::shape(kind, k);
    let (mut ws, mut rs, mut ss, mut proofs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let (inst, inputs) = shape.with_random_witness(&mut rng);
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let w = Witness::synthesize(inst.clone()).context("synthesizing")?;
        ensure!(w.public_inputs() == inputs.as_slice(), "{set}[{i}]: synthesized public inputs differ");
        let theirs = create_proof::<Bls12, _, _>(inst, &params, r, s).context("bellperson create_proof")?;
        let expected = groth16_proof { a: (&theirs.a).into(), b: (&theirs.b).into(), c: (&theirs.c).into() };
        if !ffi::verify(&params.vk, &expected, &inputs) {
            bail!("{set}[{i}]: bellperson's proof does not verify");
        }
        // A wrong public input must not verify (the check above can fail).
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        ensure!(!ffi::verify(&params.vk, &expected, &wrong), "{set}[{i}]: verifier accepted a wrong input");
        ws.push(w);
        rs.push(r);
        ss.push(s);
        proofs.extend(proof_bytes(&expected));
    }
    let (mut r_bytes, mut s_bytes) = (Vec::new(), Vec::new());
    scalar_bytes(&mut r_bytes, &rs);
    scalar_bytes(&mut s_bytes, &ss);
    write(&dir.join(format!("{set}.witness")), &encode_witnesses(&ws))?;
    write(&dir.join(format!("{set}.r")), &r_bytes)?;
    write(&dir.join(format!("{set}.s")), &s_bytes)?;
    write(&dir.join(format!("{set}.proofs")), &proofs)?;
    let w0 = &ws[0];
    println!(
        "{set}: {n} circuit(s), {} constraints, {} inputs, {} aux; expected proofs from bellperson, verified",
        w0.num_constraints(),
        w0.inputs.len(),
        w0.aux.len()
    );
    let name = params_path.file_name().context("params file name")?.to_string_lossy().into_owned();
    Ok(format!("{set} {name} {n}\n"))
}

/// The `fixture` command.
pub fn run(args: FixtureArgs) -> Result<()> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let n = args.circuits as usize;
    let mut sets = vec![(Kind::Mimc, 10)];
    if args.sha256 {
        sets.push((Kind::Sha256, 15));
    }
    let mut index = String::new();
    for (kind, k) in sets {
        index += &write_set(&args.out, kind, k, n, args.seed)?;
    }
    // Written last: its presence means every set is complete.
    write(&args.out.join("fixtures.txt"), index.as_bytes())?;
    println!("fixtures: {}", args.out.join("fixtures.txt").display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The `.witness` bytes are the header's in-memory layout: each array
    /// equals the bytes behind the `Assignment` pointers the collector hands
    /// to the library, at the offsets FIXTURES.md gives.
    #[test]
    fn witness_encoding_is_the_abi_layout() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(rand::random());
        let ws: Vec<Witness> = (0..2)
            .map(|_| Witness::synthesize(Instance::shape(Kind::Mimc, 8).with_random_witness(&mut rng).0).unwrap())
            .collect();
        let bytes = encode_witnesses(&ws);
        assert_eq!(&bytes[..8], WITNESS_MAGIC);
        assert_eq!(u64::from_le_bytes(bytes[8..16].try_into().unwrap()), 2);
        let mut off = 16;
        let mut next = |len: usize| {
            let s = &bytes[off..off + len];
            off += len;
            s
        };
        for w in &ws {
            let a = w.assignment();
            let raw = |p: *const u8, len: usize| unsafe { std::slice::from_raw_parts(p, len) }.to_vec();
            let header: Vec<u64> = next(72).chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
            assert_eq!(
                header,
                [
                    a.a_aux_bit_len,
                    a.a_aux_popcount,
                    a.b_inp_bit_len,
                    a.b_inp_popcount,
                    a.b_aux_bit_len,
                    a.b_aux_popcount,
                    a.abc_size,
                    a.inp_assignment_size,
                    a.aux_assignment_size
                ]
                .map(|x| x as u64)
            );
            for (p, bits) in [
                (a.a_aux_density, a.a_aux_bit_len),
                (a.b_inp_density, a.b_inp_bit_len),
                (a.b_aux_density, a.b_aux_bit_len),
            ] {
                let len = bits.div_ceil(64) * 8;
                assert_eq!(next(len), raw(p as *const u8, len));
            }
            for (p, n) in [
                (a.a, a.abc_size),
                (a.b, a.abc_size),
                (a.c, a.abc_size),
                (a.inp_assignment_data, a.inp_assignment_size),
                (a.aux_assignment_data, a.aux_assignment_size),
            ] {
                assert_eq!(next(n * 32), raw(p as *const u8, n * 32));
            }
        }
        assert_eq!(off, bytes.len());
    }

    #[test]
    fn proof_bytes_follow_the_struct() {
        let mut p = groth16_proof::default();
        // SAFETY: groth16_proof is repr(C) plain data (u64 limbs), 384 bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(&mut p as *mut _ as *mut u8, 384) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = i as u8 ^ (i >> 8) as u8;
        }
        // SAFETY: as above.
        let mem = unsafe { std::slice::from_raw_parts(&p as *const _ as *const u8, 384) };
        assert_eq!(proof_bytes(&p), mem);
    }
}
