//! The circuits the tool proves: real bellperson circuits with public inputs,
//! sized by a target log2 constraint count.
//!
//! - `sha256`: knowledge of a SHA-256 preimage (bellperson's sha256 gadget);
//!   the digest, multipacked, is the public input. Almost every aux value is a
//!   bit, so the split-MSM path is taken. About 26,600 constraints per
//!   64-byte block; the smallest instance (one block) has about 2^14.7.
//! - `mimc`: a MiMC-style permutation chain over Fr (x ← (x + cᵢ)³ + y); the
//!   output is the public input. Aux values are uniformly random, so the
//!   plain MSM path is taken. Two constraints per round.

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::{multipack, sha256};
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use sha2::Digest;

/// Which circuit to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    Sha256,
    Mimc,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sha256 => "sha256",
            Kind::Mimc => "mimc",
        }
    }
}

/// The sizes every command accepts: `--log-constraints` K (about 2^K
/// constraints per circuit).
pub const LOG_CONSTRAINTS: std::ops::RangeInclusive<u32> = 8..=27;

/// The smallest K of the sha256 circuit: its smallest instance (one
/// 64-byte block) has about 2^14.7 constraints, so a smaller K would give
/// that same circuit under a smaller name.
pub const SHA256_MIN_LOG_CONSTRAINTS: u32 = 15;

/// The one rule for a circuit's size, for `prove`, `bench` and `fixture`:
/// K in [`LOG_CONSTRAINTS`], and at least [`SHA256_MIN_LOG_CONSTRAINTS`]
/// for sha256.
pub fn check_size(kind: Kind, k: u32) -> Result<(), String> {
    if !LOG_CONSTRAINTS.contains(&k) {
        return Err(format!(
            "--log-constraints {k}: expected {} to {}",
            LOG_CONSTRAINTS.start(),
            LOG_CONSTRAINTS.end()
        ));
    }
    if kind == Kind::Sha256 && k < SHA256_MIN_LOG_CONSTRAINTS {
        return Err(format!(
            "--log-constraints {k}: the sha256 circuit's smallest instance (one block) has about 2^15 constraints: \
             use --log-constraints {SHA256_MIN_LOG_CONSTRAINTS} or more, or --circuit mimc"
        ));
    }
    Ok(())
}

/// The sizes of a circuit (what its params file must match): inputs (the
/// constant one included), aux variables, and constraints including the
/// per-input ones, as bellperson's generator and prover count them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    pub inputs: usize,
    pub aux: usize,
    pub constraints: usize,
}

impl Sizes {
    /// The evaluation domain: constraints rounded up to a power of two.
    pub fn domain(&self) -> usize {
        self.constraints.next_power_of_two()
    }
}

/// Counts variables and constraints without evaluating anything (the
/// witness closures are never called), as bellperson's parameter generator does.
#[derive(Default)]
struct Counter(Sizes);

impl ConstraintSystem<Scalar> for Counter {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<bellperson::Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.aux += 1;
        Ok(bellperson::Variable::new_unchecked(bellperson::Index::Aux(self.0.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<bellperson::Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.inputs += 1;
        Ok(bellperson::Variable::new_unchecked(bellperson::Index::Input(self.0.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(bellperson::LinearCombination<Scalar>) -> bellperson::LinearCombination<Scalar>,
        LB: FnOnce(bellperson::LinearCombination<Scalar>) -> bellperson::LinearCombination<Scalar>,
        LC: FnOnce(bellperson::LinearCombination<Scalar>) -> bellperson::LinearCombination<Scalar>,
    {
        self.0.constraints += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// Constraints per SHA-256 compression in bellperson's gadget (measured).
const SHA_CONSTRAINTS_PER_BLOCK: usize = 26_100;

/// A circuit instance: its shape (from `kind` and `log_constraints`) and an
/// optional witness (`None` for parameter generation).
#[derive(Clone, Debug)]
pub enum Instance {
    Sha256 { preimage_len: usize, preimage: Option<Vec<u8>> },
    Mimc { rounds: usize, constants: Vec<Scalar>, xl: Option<Scalar>, xr: Option<Scalar> },
}

/// Number of SHA-256 preimage bytes for a target of about 2^k constraints
/// (staying at or below 2^k where possible so the domain is 2^k).
fn sha_preimage_len(k: u32) -> usize {
    let blocks = ((1usize << k) * 97 / 100 / (SHA_CONSTRAINTS_PER_BLOCK + 512)).max(1);
    64 * blocks - 9 // the padding (0x80 + 8 length bytes) fits in the last block
}

fn mimc_rounds(k: u32) -> usize {
    ((1usize << k) - 64).max(2) / 2
}

impl Instance {
    /// The circuit's shape with no witness (for parameter generation).
    pub fn shape(kind: Kind, log_constraints: u32) -> Instance {
        match kind {
            Kind::Sha256 => Instance::Sha256 { preimage_len: sha_preimage_len(log_constraints), preimage: None },
            Kind::Mimc => {
                let rounds = mimc_rounds(log_constraints);
                // Fixed constants: the circuit (and so its parameters) depends only on k.
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x6d696d63);
                let constants = (0..rounds).map(|_| Scalar::random(&mut rng)).collect();
                Instance::Mimc { rounds, constants, xl: None, xr: None }
            }
        }
    }

    /// The sizes of the circuit of (`kind`, `log_constraints`), counted
    /// without a witness (fast: no field arithmetic).
    pub fn sizes(kind: Kind, log_constraints: u32) -> Result<Sizes, SynthesisError> {
        let mut cs = Counter::default();
        // The constant one, then the circuit, then one constraint per input
        // (as `Witness::synthesize` and bellperson's generator do).
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        Instance::shape(kind, log_constraints).synthesize(&mut cs)?;
        cs.0.constraints += cs.0.inputs;
        Ok(cs.0)
    }

    /// A random witness for this shape; returns the instance and its public inputs.
    pub fn with_random_witness(&self, rng: &mut impl Rng) -> (Instance, Vec<Scalar>) {
        match self {
            Instance::Sha256 { preimage_len, .. } => {
                let data: Vec<u8> = (0..*preimage_len).map(|_| rng.gen()).collect();
                let digest = sha2::Sha256::digest(&data);
                let inputs = multipack::compute_multipacking(&multipack::bytes_to_bits(&digest));
                (Instance::Sha256 { preimage_len: *preimage_len, preimage: Some(data) }, inputs)
            }
            Instance::Mimc { rounds, constants, .. } => {
                let (xl, xr) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
                let image = mimc_native(xl, xr, constants);
                (Instance::Mimc { rounds: *rounds, constants: constants.clone(), xl: Some(xl), xr: Some(xr) }, vec![image])
            }
        }
    }
}

/// The MiMC-style chain computed natively.
pub fn mimc_native(mut xl: Scalar, mut xr: Scalar, constants: &[Scalar]) -> Scalar {
    for c in constants {
        let t = xl + c;
        let next = t.square() * t + xr;
        xr = xl;
        xl = next;
    }
    xl
}

impl Circuit<Scalar> for Instance {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            Instance::Sha256 { preimage_len, preimage } => {
                let mut bits = Vec::with_capacity(preimage_len * 8);
                for i in 0..preimage_len {
                    let byte = preimage.as_ref().map(|p| p[i]);
                    for b in (0..8).rev() {
                        let v = byte.map(|x| (x >> b) & 1 == 1);
                        let bit = AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i} {b}")), v)?;
                        bits.push(Boolean::from(bit));
                    }
                }
                let digest = sha256::sha256(cs.namespace(|| "sha256"), &bits)?;
                multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
            }
            Instance::Mimc { constants, xl, xr, .. } => {
                let (mut xl_v, mut xr_v) = (xl, xr);
                let mut xl_var = cs.alloc(|| "xl", || xl_v.ok_or(SynthesisError::AssignmentMissing))?;
                let mut xr_var = cs.alloc(|| "xr", || xr_v.ok_or(SynthesisError::AssignmentMissing))?;
                let last = constants.len() - 1;
                for (i, c) in constants.iter().enumerate() {
                    let t_v = xl_v.map(|x| x + c);
                    let sq_v = t_v.map(|t| t.square());
                    let sq = cs.alloc(|| format!("sq {i}"), || sq_v.ok_or(SynthesisError::AssignmentMissing))?;
                    let one = CS::one();
                    cs.enforce(|| format!("sq {i}"), |lc| lc + xl_var + (*c, one), |lc| lc + xl_var + (*c, one), |lc| lc + sq);
                    let next_v = match (sq_v, t_v, xr_v) {
                        (Some(s), Some(t), Some(r)) => Some(s * t + r),
                        _ => None,
                    };
                    let next_val = || next_v.ok_or(SynthesisError::AssignmentMissing);
                    let next = if i == last { cs.alloc_input(|| "image", next_val)? } else { cs.alloc(|| format!("x {i}"), next_val)? };
                    cs.enforce(|| format!("cube {i}"), |lc| lc + sq, |lc| lc + xl_var + (*c, one), |lc| lc + next - xr_var);
                    xr_var = xl_var;
                    xr_v = xl_v;
                    xl_var = next;
                    xl_v = next_v;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collector::Witness;

    #[test]
    fn counted_sizes_equal_the_synthesized_witness() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for (kind, k) in [(Kind::Mimc, 8), (Kind::Mimc, 11), (Kind::Sha256, 15)] {
            let sizes = Instance::sizes(kind, k).unwrap();
            let (inst, _) = Instance::shape(kind, k).with_random_witness(&mut rng);
            let w = Witness::synthesize(inst).unwrap();
            assert_eq!(sizes, Sizes { inputs: w.inputs.len(), aux: w.aux.len(), constraints: w.num_constraints() }, "{kind:?} k={k}");
        }
    }

    #[test]
    fn one_size_rule_for_every_command() {
        assert!(check_size(Kind::Mimc, 8).is_ok() && check_size(Kind::Sha256, 15).is_ok() && check_size(Kind::Sha256, 27).is_ok());
        let e = check_size(Kind::Sha256, 14).unwrap_err();
        assert!(e.contains("--log-constraints 14") && e.contains("--log-constraints 15 or more"), "{e}");
        assert!(check_size(Kind::Mimc, 7).is_err() && check_size(Kind::Mimc, 28).is_err());
    }
}
