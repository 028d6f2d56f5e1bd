//! Our own constraint-system collector: synthesizes a bellperson circuit into
//! the data of one `Assignment` (docs/ARCHITECTURE.md §2), as bellperson's prover builds it.
//!
//! Semantics copied from the behaviour (not the code) of bellperson 0.27's
//! `ProvingAssignment`: each constraint appends the evaluations of its A, B
//! and C linear combinations; an aux variable's A-density (B-density) bit is
//! set when it appears with a non-zero coefficient in some A (B); an input's
//! B-density bit likewise. After synthesis, one constraint `input_i · 0 = 0`
//! per input is appended (the generator does the same, so the IC query is
//! fully dense), and input 0 is the constant one, allocated first.

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use supraseal_c2::{fr_t, CAssignment};

/// A growable bit vector in u64 words (bit i = bit i % 64 of word i / 64).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitVec {
    pub words: Vec<u64>,
    pub len: usize,
}

impl BitVec {
    fn push(&mut self) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
    }
    fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    /// Number of set bits.
    pub fn popcount(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// One synthesized circuit: everything `generate_groth16_proofs_c` reads.
#[derive(Clone, Debug, Default)]
pub struct Witness {
    pub a_aux_density: BitVec,
    pub b_inp_density: BitVec,
    pub b_aux_density: BitVec,
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    pub inputs: Vec<Scalar>,
    pub aux: Vec<Scalar>,
}

impl Witness {
    /// Synthesizes `circuit` (with its witness values) the way bellperson's prover does.
    pub fn synthesize<C: bellperson::Circuit<Scalar>>(circuit: C) -> Result<Witness, SynthesisError> {
        let mut cs = Witness::default();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut cs)?;
        for i in 0..cs.inputs.len() {
            cs.enforce(|| "input", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
        }
        Ok(cs)
    }

    /// Number of constraints (including the per-input ones).
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }

    /// The public inputs a verifier takes (all inputs but the constant one).
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.inputs[1..]
    }

    /// The C ABI view of this witness. Borrows `self`: keep it alive and
    /// unmodified while the returned value is in use.
    pub fn assignment(&self) -> CAssignment {
        let fr = |v: &Vec<Scalar>| v.as_ptr() as *const fr_t;
        CAssignment {
            a_aux_density: self.a_aux_density.words.as_ptr(),
            a_aux_bit_len: self.a_aux_density.len,
            a_aux_popcount: self.a_aux_density.popcount(),
            b_inp_density: self.b_inp_density.words.as_ptr(),
            b_inp_bit_len: self.b_inp_density.len,
            b_inp_popcount: self.b_inp_density.popcount(),
            b_aux_density: self.b_aux_density.words.as_ptr(),
            b_aux_bit_len: self.b_aux_density.len,
            b_aux_popcount: self.b_aux_density.popcount(),
            a: fr(&self.a),
            b: fr(&self.b),
            c: fr(&self.c),
            abc_size: self.a.len(),
            inp_assignment_data: fr(&self.inputs),
            inp_assignment_size: self.inputs.len(),
            aux_assignment_data: fr(&self.aux),
            aux_assignment_size: self.aux.len(),
        }
    }
}

/// Evaluates `lc`, marking the density bits of the variables it uses.
fn eval(
    lc: &LinearCombination<Scalar>,
    inputs: &[Scalar],
    aux: &[Scalar],
    mut inp_density: Option<&mut BitVec>,
    mut aux_density: Option<&mut BitVec>,
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (i, coeff) in lc.iter_inputs() {
        if !bool::from(coeff.is_zero()) {
            acc += inputs[*i] * coeff;
            if let Some(d) = inp_density.as_deref_mut() {
                d.set(*i);
            }
        }
    }
    for (j, coeff) in lc.iter_aux() {
        if !bool::from(coeff.is_zero()) {
            acc += aux[*j] * coeff;
            if let Some(d) = aux_density.as_deref_mut() {
                d.set(*j);
            }
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for Witness {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.a_aux_density.push();
        self.b_aux_density.push();
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        self.b_inp_density.push();
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (la, lb, lc) = (a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero()));
        let va = eval(&la, &self.inputs, &self.aux, None, Some(&mut self.a_aux_density));
        let vb = eval(&lb, &self.inputs, &self.aux, Some(&mut self.b_inp_density), Some(&mut self.b_aux_density));
        let vc = eval(&lc, &self.inputs, &self.aux, None, None);
        self.a.push(va);
        self.b.push(vb);
        self.c.push(vc);
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
