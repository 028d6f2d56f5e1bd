//! BLS12-381 facts both backends share: the group markers with their host
//! point types ([`Points`], which the CPU's [`crate::cpu::msm::Curve`] and
//! the GPU's `gpu::group::DeviceGroup` extend), the scalar field's 2-power
//! roots of unity, the coset generator, and the direction of a transform.

use std::ops::AddAssign;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};

/// Marker for G1 (coordinates in Fp).
pub struct G1;
/// Marker for G2 (coordinates in Fq2 = Fp[u]/(u² + 1)).
pub struct G2;

/// Which of the two groups a [`Points`] marker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupName {
    G1,
    G2,
}

/// A group's host point types (blstrs: Montgomery form, blst's layout).
pub trait Points: Send + Sync + 'static {
    /// Affine points as the SRS stores them.
    type Affine: Copy + Send + Sync;
    /// Projective (Jacobian) points: accumulators and results.
    type Projective: group::Group + Copy + Send + Sync + for<'a> AddAssign<&'a Self::Affine>;
    /// Which group this is (the GPU backend places G2's MSMs by a setting).
    const NAME: GroupName;
}

impl Points for G1 {
    type Affine = G1Affine;
    type Projective = G1Projective;
    const NAME: GroupName = GroupName::G1;
}

impl Points for G2 {
    type Affine = G2Affine;
    type Projective = G2Projective;
    const NAME: GroupName = GroupName::G2;
}

/// The coset generator g = 7 of the quotient's coset g·⟨ω⟩: Fr's
/// multiplicative generator, the coset bellperson uses.
pub const COSET_GENERATOR: Scalar = Scalar::MULTIPLICATIVE_GENERATOR;

/// Direction of a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Inverse,
}

/// The primitive 2^k-th root of unity in Fr (`Scalar::ROOT_OF_UNITY`, of
/// order 2^32, squared 32 − k times). Panics if k > 32 (Fr's 2-adicity;
/// callers check the domain size first).
pub fn root_of_unity(k: u32) -> Scalar {
    assert!(k <= Scalar::S, "domain 2^{k} exceeds Fr's 2-adicity 2^{}", Scalar::S);
    let mut w = Scalar::ROOT_OF_UNITY;
    for _ in k..Scalar::S {
        w = w.square();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_have_exactly_their_order() {
        for k in [0u32, 1, 5, 27, 32] {
            let w = root_of_unity(k);
            assert_eq!(w.pow_vartime([1u64 << k]), Scalar::ONE, "ω^(2^{k}) = 1");
            if k > 0 {
                assert_ne!(w.pow_vartime([1u64 << (k - 1)]), Scalar::ONE, "ω of 2^{k} is primitive");
            }
        }
        assert_eq!(COSET_GENERATOR, Scalar::from(7u64));
    }
}
