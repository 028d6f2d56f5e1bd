//! Shared helpers of the bellperson `[patch]` tests: a test circuit with
//! public inputs and boolean witnesses, and a witness recorder that builds
//! `supraseal_c2::Assignment`s the way bellperson's prover does.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

/// Knowledge of a private `x` and a private 16-bit `y` such that the public
/// inputs are `z = f^rounds(x)` with `f(z) = z² + x` (starting from x),
/// `x·y`, and the number of set bits of `y`. `rounds` squaring constraints,
/// 16 boolean constraints and a few linear ones: aux scalars are a mix of
/// random field elements and 0/1 values.
#[derive(Clone, Debug)]
pub struct TestCircuit {
    pub x: Option<Fr>,
    pub y: Option<u16>,
    pub rounds: usize,
}

impl TestCircuit {
    pub fn new(x: Fr, y: u16, rounds: usize) -> Self {
        Self { x: Some(x), y: Some(y), rounds }
    }

    /// The circuit without a witness, for parameter generation.
    pub fn blank(rounds: usize) -> Self {
        Self { x: None, y: None, rounds }
    }

    /// The public inputs (without the leading constant one).
    pub fn public_inputs(&self) -> Vec<Fr> {
        let x = self.x.expect("witness");
        let y = self.y.expect("witness");
        let mut z = x;
        for _ in 0..self.rounds {
            z = z.square() + x;
        }
        vec![z, x * Fr::from(y as u64), Fr::from(y.count_ones() as u64)]
    }
}

impl Circuit<Fr> for TestCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let xv = self.x;
        let x = cs.alloc(|| "x", || xv.ok_or(SynthesisError::AssignmentMissing))?;
        let (mut z, mut zv) = (x, xv);
        for i in 0..self.rounds {
            let nv = zv.zip(xv).map(|(z, x)| z.square() + x);
            let n = cs.alloc(|| format!("z{}", i + 1), || nv.ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| format!("round {i}"), |lc| lc + z, |lc| lc + z, |lc| lc + n - x);
            (z, zv) = (n, nv);
        }
        let out_z = cs.alloc_input(|| "z", || zv.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "z public", |lc| lc + z, |lc| lc + CS::one(), |lc| lc + out_z);

        let mut y_lc = LinearCombination::zero();
        let mut count_lc = LinearCombination::zero();
        let mut coeff = Fr::ONE;
        for i in 0..16 {
            let bit = self.y.map(|y| (y >> i) & 1 == 1);
            let b = cs.alloc(|| format!("y bit {i}"), || bit.map(|v| if v { Fr::ONE } else { Fr::ZERO }).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| format!("bit {i} boolean"), |lc| lc + b, |lc| lc + CS::one() - b, |lc| lc);
            y_lc = y_lc + (coeff, b);
            count_lc = count_lc + b;
            coeff = coeff.double();
        }
        let yv = self.y.map(|y| Fr::from(y as u64));
        let y = cs.alloc(|| "y", || yv.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "y packing", |_| y_lc, |lc| lc + CS::one(), |lc| lc + y);
        let xy = cs.alloc_input(|| "x*y", || xv.zip(yv).map(|(x, y)| x * y).ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "x*y", |lc| lc + x, |lc| lc + y, |lc| lc + xy);
        let cnt = self.y.map(|y| Fr::from(y.count_ones() as u64));
        let count = cs.alloc_input(|| "popcount", || cnt.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "popcount", |_| count_lc, |lc| lc + CS::one(), |lc| lc + count);
        Ok(())
    }
}

/// A bit vector of 64-bit words (bit i = bit i%64 of word i/64).
#[derive(Default, Debug, Clone)]
pub struct Bits {
    pub words: Vec<u64>,
    pub len: usize,
}

impl Bits {
    fn push(&mut self) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        self.len += 1;
    }
    fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    pub fn popcount(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// One synthesized circuit: the A/B/C evaluations at the constraints, the
/// variable values and the density bit vectors (what bellperson's private
/// `ProvingAssignment` holds).
#[derive(Default, Debug, Clone)]
pub struct Witness {
    pub a: Vec<Fr>,
    pub b: Vec<Fr>,
    pub c: Vec<Fr>,
    pub inputs: Vec<Fr>,
    pub aux: Vec<Fr>,
    pub a_aux_density: Bits,
    pub b_inp_density: Bits,
    pub b_aux_density: Bits,
}

fn eval(lc: &LinearCombination<Fr>, w: &Witness, inp: Option<&mut Bits>, aux: Option<&mut Bits>) -> Fr {
    let mut acc = Fr::ZERO;
    let mut inp = inp;
    for (i, c) in lc.iter_inputs() {
        if !c.is_zero_vartime() {
            acc += w.inputs[*i] * c;
            if let Some(d) = inp.as_deref_mut() {
                d.set(*i);
            }
        }
    }
    let mut aux = aux;
    for (i, c) in lc.iter_aux() {
        if !c.is_zero_vartime() {
            acc += w.aux[*i] * c;
            if let Some(d) = aux.as_deref_mut() {
                d.set(*i);
            }
        }
    }
    acc
}

impl ConstraintSystem<Fr> for Witness {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
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
        F: FnOnce() -> Result<Fr, SynthesisError>,
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
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let (a, b, c) = (a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero()));
        let mut ad = std::mem::take(&mut self.a_aux_density);
        let va = eval(&a, self, None, Some(&mut ad));
        self.a_aux_density = ad;
        let (mut bi, mut ba) = (std::mem::take(&mut self.b_inp_density), std::mem::take(&mut self.b_aux_density));
        let vb = eval(&b, self, Some(&mut bi), Some(&mut ba));
        (self.b_inp_density, self.b_aux_density) = (bi, ba);
        let vc = eval(&c, self, None, None);
        self.a.push(va);
        self.b.push(vb);
        self.c.push(vc);
    }

    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

impl Witness {
    /// Synthesizes `circuit` as bellperson's prover does: the constant one as
    /// input 0, the circuit, then one `input · 1 = 0` constraint per input.
    pub fn synthesize<C: Circuit<Fr>>(circuit: C) -> Result<Self, SynthesisError> {
        let mut w = Witness::default();
        w.alloc_input(|| "one", || Ok(Fr::ONE))?;
        circuit.synthesize(&mut w)?;
        for i in 0..w.inputs.len() {
            w.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
        }
        Ok(w)
    }

    /// The Rust API's view of this witness (borrows `self`).
    pub fn assignment(&self) -> supraseal_c2::Assignment<Fr> {
        supraseal_c2::Assignment {
            a_aux_density: self.a_aux_density.words.as_ptr() as *const usize,
            a_aux_bit_len: self.a_aux_density.len,
            a_aux_popcount: self.a_aux_density.popcount(),
            b_inp_density: self.b_inp_density.words.as_ptr() as *const usize,
            b_inp_bit_len: self.b_inp_density.len,
            b_inp_popcount: self.b_inp_density.popcount(),
            b_aux_density: self.b_aux_density.words.as_ptr() as *const usize,
            b_aux_bit_len: self.b_aux_density.len,
            b_aux_popcount: self.b_aux_density.popcount(),
            a: self.a.as_ptr(),
            b: self.b.as_ptr(),
            c: self.c.as_ptr(),
            abc_size: self.a.len(),
            inp_assignment_data: self.inputs.as_ptr(),
            inp_assignment_size: self.inputs.len(),
            aux_assignment_data: self.aux.as_ptr(),
            aux_assignment_size: self.aux.len(),
        }
    }
}

/// A proof's serialized (compressed) bytes, for byte comparisons.
pub fn proof_bytes(p: &bellperson::groth16::Proof<blstrs::Bls12>) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).expect("serialize proof");
    v
}

/// Deterministic test randomness.
pub fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed)
}

/// A random scalar (for witnesses, r and s).
pub fn random_fr<R: rand::RngCore>(rng: &mut R) -> Fr {
    Fr::random(rng)
}
