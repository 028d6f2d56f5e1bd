//! The epilogue (docs/ARCHITECTURE.md §4 step 5): blinding with r and s.
//!
//! `A = α₁ + A′ + r·δ₁`, `B = β₂ + B′₂ + s·δ₂`,
//! `C = s·A′ + r·B′₁ + rs·δ₁ + s·α₁ + r·β₁ + H + L` — bellperson's prover, so
//! proofs are byte-identical to bellperson's for the same r and s.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Curve;

use super::Intermediates;
use crate::abi::types::groth16_proof;
use crate::srs::Srs;

/// Assembles the proof of one circuit.
#[cfg(any(test, feature = "tools"))]
pub fn proof(srs: &Srs, m: &Intermediates, r: Scalar, s: Scalar) -> groth16_proof {
    points(srs, m, r, s).into()
}

/// The proof of one circuit as points (A, B, C), before it is written.
pub fn points(srs: &Srs, m: &Intermediates, r: Scalar, s: Scalar) -> ProofPoints {
    let a = G1Projective::from(srs.alpha_g1) + m.a + srs.delta_g1 * r;
    let b = G2Projective::from(srs.beta_g2) + m.b_g2 + srs.delta_g2 * s;
    let c = m.a * s + m.b_g1 * r + srs.delta_g1 * (r * s) + srs.alpha_g1 * s + srs.beta_g1 * r + m.h + m.l;
    ProofPoints { a: a.to_affine(), b: b.to_affine(), c: c.to_affine() }
}

/// A proof's three points, in affine form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofPoints {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl From<ProofPoints> for groth16_proof {
    fn from(p: ProofPoints) -> groth16_proof {
        groth16_proof { a: (&p.a).into(), b: (&p.b).into(), c: (&p.c).into() }
    }
}
