//! Helpers shared by the tool, its tests and benches: parameters plus a batch
//! of freshly synthesized random witnesses for one circuit shape.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, Scalar};
use rand::Rng;
use rayon::prelude::*;

use crate::circuits::{Instance, Kind};
use crate::collector::Witness;
use crate::params;

/// A params file and its verifying key.
pub struct Keys {
    pub path: PathBuf,
    pub vk: VerifyingKey<Bls12>,
}

/// Parameters for (`kind`, `k`) in `dir`, generated with bellperson if missing.
pub fn keys(dir: &Path, kind: Kind, k: u32) -> Result<Keys> {
    let (path, _) = params::ensure(dir, kind, k, 0x5eed)?;
    let vk = params::read_vk(&path)?;
    Ok(Keys { path, vk })
}

/// `n` random witnesses of shape (`kind`, `k`) with their public inputs.
pub fn witnesses(kind: Kind, k: u32, n: usize, rng: &mut impl Rng) -> Result<Vec<(Witness, Vec<Scalar>)>> {
    let shape = Instance::shape(kind, k);
    let instances: Vec<_> = (0..n).map(|_| shape.with_random_witness(rng)).collect();
    instances
        .into_par_iter()
        .map(|(inst, inputs)| Witness::synthesize(inst).map(|w| (w, inputs)))
        .collect::<std::result::Result<_, _>>()
        .context("synthesizing the circuit")
}
