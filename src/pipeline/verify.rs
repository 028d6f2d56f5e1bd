//! The optional self-check (`SUPRASEAL_C2_VERIFY=1`): each proof is
//! verified against the key's verifying key before it is written, with the
//! Groth16 verification equation bellperson's `verify_proof` checks,
//!
//! `e(A, B) = e(α₁, β₂) · e(Σ inputᵢ·icᵢ, γ₂) · e(C, δ₂)`,
//!
//! as one multi-Miller loop over (A, B), (acc, −γ₂), (C, −δ₂) and one final
//! exponentiation, compared with `e(α₁, β₂)`. `acc = ic₀ + Σᵢ≥₁ inputᵢ·icᵢ`:
//! input 0 is the constant one, so a verifier takes only inputs 1.. (the
//! public inputs). Its cost is one small MSM over the `ic` bases (one per
//! input, the CPU backend's Pippenger) and three Miller loops per proof,
//! whatever the domain.

use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use group::{Curve, Group};
use pairing::{MillerLoopResult, MultiMillerLoop};

use crate::cpu::msm::{msm, G1};
use crate::error::{Error, Result};
pub use crate::groth16::epilogue::ProofPoints;
use crate::srs::Srs;

/// The verifying key in the form the pairing check takes, made once per key.
pub struct PreparedKey {
    alpha_beta: Gt,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

impl PreparedKey {
    /// Prepares `srs`'s verifying key. Errors: `EINVAL` when the key carries
    /// no verifying key (assembled from parts rather than read from a
    /// params file).
    pub fn new(srs: &Srs) -> Result<PreparedKey> {
        let gamma_g2 = srs.gamma_g2.filter(|_| !srs.ic.is_empty()).ok_or_else(|| {
            Error::invalid(format!(
                "SUPRASEAL_C2_VERIFY is on but the key {} has no verifying key (ic, gamma_g2): it was assembled from parts, not read from a params file",
                srs.path.display()
            ))
        })?;
        Ok(PreparedKey {
            alpha_beta: blstrs::pairing(&srs.alpha_g1, &srs.beta_g2),
            neg_gamma_g2: G2Prepared::from(-gamma_g2),
            neg_delta_g2: G2Prepared::from(-srs.delta_g2),
            ic: srs.ic.clone(),
        })
    }

    /// Inputs a proof of this key takes, the constant one included.
    pub fn num_inputs(&self) -> usize {
        self.ic.len()
    }

    /// Whether `proof` verifies for `public_inputs` (the circuit's inputs
    /// without the constant one). `public_inputs` holds
    /// [`PreparedKey::num_inputs`] − 1 values (panics otherwise: the
    /// caller checks the count when the call starts).
    pub fn verifies(&self, proof: &ProofPoints, public_inputs: &[Scalar]) -> bool {
        assert_eq!(public_inputs.len() + 1, self.ic.len(), "public inputs vs the key's ic");
        let inputs = if public_inputs.is_empty() { G1Projective::identity() } else { msm::<G1>(&self.ic[1..], public_inputs) };
        let acc = (inputs + self.ic[0]).to_affine();
        let b = G2Prepared::from(proof.b);
        let terms = [(&proof.a, &b), (&acc, &self.neg_gamma_g2), (&proof.c, &self.neg_delta_g2)];
        Bls12::multi_miller_loop(&terms).final_exponentiation() == self.alpha_beta
    }
}

/// `srs`'s prepared verifying key, made on first use and kept with the key.
/// Errors as [`PreparedKey::new`].
pub fn prepared(srs: &Srs) -> Result<&PreparedKey> {
    if srs.prepared_vk.get().is_none() {
        // Two calls may both prepare it; the first stored copy is kept.
        let _ = srs.prepared_vk.set(Box::new(PreparedKey::new(srs)?));
    }
    Ok(srs.prepared_vk.get().and_then(|k| k.downcast_ref::<PreparedKey>()).expect("set above with this type"))
}

/// Checks that `srs` can verify proofs of circuits with `num_inputs` inputs
/// (the constant one included), before a verified call proves. Errors:
/// `EINVAL` naming what is missing or the two counts.
pub fn check_key(srs: &Srs, num_inputs: usize) -> Result<()> {
    let key = prepared(srs)?;
    if key.num_inputs() != num_inputs {
        return Err(Error::invalid(format!(
            "SUPRASEAL_C2_VERIFY is on but provers[0].inp_assignment_size is {num_inputs} while the key {} has {} ic points (one per input)",
            srs.path.display(),
            key.num_inputs()
        )));
    }
    Ok(())
}

/// Verifies the proof of circuit `index` (its position in the call's
/// `provers`). Errors: `EBADMSG` naming the circuit when it does not verify.
pub fn verify(srs: &Srs, index: usize, proof: &ProofPoints, public_inputs: &[Scalar]) -> Result<()> {
    if prepared(srs)?.verifies(proof, public_inputs) {
        return Ok(());
    }
    Err(Error::proof_rejected(format!(
        "SUPRASEAL_C2_VERIFY: the proof of circuit {index} (provers[{index}]) does not verify against the verifying key of {}: \
         no proof of the call is written (the witness does not satisfy the circuit, the file's verifying key (ic, gamma, delta) does not match its proving key, or the prover computed a wrong value)",
        srs.path.display()
    )))
}

/// A proof with `C` moved by the generator: a wrong proof of the right
/// shape, for tests of the check.
#[doc(hidden)]
#[cfg(any(test, feature = "tools"))]
pub fn tampered(proof: &ProofPoints) -> ProofPoints {
    ProofPoints { c: (G1Projective::from(proof.c) + G1Projective::generator()).to_affine(), ..*proof }
}
