//! The epilogue (docs/ARCHITECTURE.md §4 step 5): blinding with r and s.
//!
//! `A = α₁ + A′ + r·δ₁`, `B = β₂ + B′₂ + s·δ₂`,
//! `C = s·A′ + r·B′₁ + rs·δ₁ + s·α₁ + r·β₁ + H + L` — bellperson's prover, so
//! proofs are byte-identical to bellperson's for the same r and s.

use blstrs::{G1Projective, G2Projective, Scalar};
use group::Curve;

use super::Intermediates;
use crate::abi::types::groth16_proof;
use crate::srs::Srs;

/// Assembles the proof of one circuit.
pub fn proof(srs: &Srs, m: &Intermediates, r: Scalar, s: Scalar) -> groth16_proof {
    let a = G1Projective::from(srs.alpha_g1) + m.a + srs.delta_g1 * r;
    let b = G2Projective::from(srs.beta_g2) + m.b_g2 + srs.delta_g2 * s;
    let c = m.a * s + m.b_g1 * r + srs.delta_g1 * (r * s) + srs.alpha_g1 * s + srs.beta_g1 * r + m.h + m.l;
    groth16_proof { a: (&a.to_affine()).into(), b: (&b.to_affine()).into(), c: (&c.to_affine()).into() }
}
