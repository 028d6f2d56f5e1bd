//! Validation of the callers' `Assignment` array into a safe, borrowed view.
//!
//! Everything the prover will read is checked here, before any work: every
//! pointer (non-NULL where its size is non-zero, aligned), every size relation
//! of docs/ARCHITECTURE.md §2, §4 against the SRS, popcounts against the bit vectors, and that
//! all circuits of one call share sizes and density vectors (the split-MSM
//! preparation and the shared bases depend on it). The reference checks these
//! with `assert`, which vanishes in release builds; we always check.

use blstrs::Scalar;

use crate::abi::types::{fr_t, CAssignment};
use crate::error::{Error, Result};
use crate::srs::Srs;

/// One circuit's witness, borrowed from the caller (Montgomery-form scalars).
#[derive(Clone, Copy, Debug)]
pub struct Circuit<'a> {
    /// `abc_size` evaluations each.
    pub a: &'a [Scalar],
    pub b: &'a [Scalar],
    pub c: &'a [Scalar],
    /// Input values; `inp[0]` is the constant one.
    pub inp: &'a [Scalar],
    /// Aux values.
    pub aux: &'a [Scalar],
    /// Its index in the caller's `provers` array (for error messages).
    pub index: usize,
    /// Whether its scalars were checked canonical at validation; a circuit
    /// whose check [`validate_deferring`] left out must pass
    /// [`Circuit::check_scalars`] before any computation reads it.
    pub scalars_checked: bool,
}

impl Circuit<'_> {
    /// `EINVAL` unless every scalar (a, b, c, inputs, aux) is canonical, naming
    /// the first that is not (see [`check_canonical`]).
    pub fn check_scalars(&self) -> Result<()> {
        let i = self.index;
        for (name, v) in [("a", self.a), ("b", self.b), ("c", self.c), ("inp_assignment_data", self.inp), ("aux_assignment_data", self.aux)] {
            check_canonical(v, || format!("provers[{i}].{name}"))?;
        }
        Ok(())
    }
}

/// A bit vector of `len` bits in u64 words (bit i = bit i % 64 of word i / 64).
#[derive(Clone, Copy, Debug)]
pub struct Density<'a> {
    pub words: &'a [u64],
    pub len: usize,
    /// Number of set bits among the first `len`.
    pub popcount: usize,
}

impl Density<'_> {
    /// Whether bit `i` (< len) is set.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }
}

/// A validated call: circuits sharing one shape and one set of density vectors.
#[derive(Debug)]
pub struct Batch<'a> {
    pub circuits: Vec<Circuit<'a>>,
    pub a_aux: Density<'a>,
    pub b_inp: Density<'a>,
    pub b_aux: Density<'a>,
}

impl Batch<'_> {
    pub fn num_inputs(&self) -> usize {
        self.circuits[0].inp.len()
    }
    pub fn num_aux(&self) -> usize {
        self.circuits[0].aux.len()
    }
}

/// Popcount of the first `len` bits of `words`.
fn count_ones(words: &[u64], len: usize) -> usize {
    let full = len / 64;
    let mut n: usize = words[..full].iter().map(|w| w.count_ones() as usize).sum();
    if len % 64 != 0 {
        n += (words[full] & ((1u64 << (len % 64)) - 1)).count_ones() as usize;
    }
    n
}

/// Equality of the first `len` bits.
fn same_bits(x: &[u64], y: &[u64], len: usize) -> bool {
    let full = len / 64;
    x[..full] == y[..full] && (len % 64 == 0 || ((x[full] ^ y[full]) & ((1u64 << (len % 64)) - 1)) == 0)
}

/// `EINVAL` naming the argument (`what()`, called only on error) unless
/// `ptr` is aligned for `T`: the one alignment check of every pointer a
/// caller hands the library.
pub(crate) fn check_aligned<T, D: std::fmt::Display>(ptr: *const T, what: impl FnOnce() -> D) -> Result<()> {
    let align = std::mem::align_of::<T>();
    if (ptr as usize) % align != 0 {
        return Err(Error::invalid(format!("{} = {ptr:p} is not aligned to {align} bytes", what())));
    }
    Ok(())
}

/// Builds a slice from a caller pointer, checking NULL and alignment.
///
/// # Safety
/// When non-NULL, `ptr` must point to `len` readable elements that stay valid
/// and unmodified for `'a` (the ABI contract of docs/ARCHITECTURE.md §2).
unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: impl Fn() -> String) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::invalid(format!("{} is NULL but its size is {len}", what())));
    }
    check_aligned(ptr, &what)?;
    if len.checked_mul(std::mem::size_of::<T>()).is_none_or(|b| b > isize::MAX as usize) {
        return Err(Error::invalid(format!("{}: size {len} is impossibly large", what())));
    }
    // SAFETY: non-NULL, aligned, and valid for `len` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Scalars from the caller: `fr_t` and blstrs `Scalar` share one layout
/// (both are 4 little-endian u64 limbs in Montgomery form).
unsafe fn scalars<'a>(ptr: *const fr_t, len: usize, what: impl Fn() -> String) -> Result<&'a [Scalar]> {
    // SAFETY: forwarded contract; Scalar is repr(transparent) over blst_fr = [u64; 4], as fr_t.
    unsafe { slice(ptr as *const Scalar, len, what) }
}

unsafe fn density<'a>(i: usize, name: &str, ptr: *const u64, len: usize, popcount: usize) -> Result<Density<'a>> {
    // SAFETY: forwarded contract: the bit vector has len.div_ceil(64) words.
    let words = unsafe { slice(ptr, len.div_ceil(64), || format!("provers[{i}].{name}_density")) }?;
    let ones = count_ones(words, len);
    if ones != popcount {
        return Err(Error::invalid(format!(
            "provers[{i}].{name}_popcount is {popcount} but the bit vector has {ones} ones"
        )));
    }
    Ok(Density { words, len, popcount })
}

fn expect_eq(what: impl Fn() -> String, got: usize, want: usize, because: &str) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid(format!("{} is {got} but {because} {want}", what())))
    }
}

/// The BLS12-381 scalar field modulus r, little-endian u64 limbs.
const MODULUS_R: [u64; 4] = [0xffff_ffff_0000_0001, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];

/// Whether a Montgomery-form element's representation is below r.
fn is_canonical(s: &Scalar) -> bool {
    let l = blst::blst_fr::from(*s).l;
    for i in (0..4).rev() {
        if l[i] != MODULUS_R[i] {
            return l[i] < MODULUS_R[i];
        }
    }
    false
}

/// Scalars per piece of [`check_canonical`]'s parallel scan (2 MiB).
const CHECK_PIECE: usize = 1 << 16;

/// Rejects scalars whose representation is not below r (they are not field
/// elements; the reference would silently compute with them). Parallel scan
/// in pieces of [`CHECK_PIECE`] scalars, each read straight through (no
/// early exit inside a piece), so that it runs at memory speed: 16 GiB of
/// a porep-32g circuit is scanned while the device computes the circuit
/// before it.
pub(crate) fn check_canonical(v: &[Scalar], what: impl Fn() -> String) -> Result<()> {
    use rayon::prelude::*;
    let bad_piece = v.par_chunks(CHECK_PIECE).position_first(|piece| piece.iter().fold(false, |bad, s| bad | !is_canonical(s)));
    let Some(p) = bad_piece else {
        return Ok(());
    };
    let j = p * CHECK_PIECE + v[p * CHECK_PIECE..].iter().position(|s| !is_canonical(s)).unwrap_or(0);
    Err(Error::invalid(format!(
        "{}[{j}] is not a canonical field element: its Montgomery representation {:016x?} is not below r",
        what(),
        blst::blst_fr::from(v[j]).l
    )))
}

/// Validates `provers` against `srs` and returns the borrowed view, every
/// scalar of every circuit checked (see [`validate_deferring`]).
///
/// Errors (all `EINVAL`): `provers` NULL or `num_circuits` 0; a NULL or
/// misaligned pointer whose size is non-zero; bit lengths that differ from the
/// variable counts; popcounts that differ from the bit vectors; SRS query
/// lengths that differ from the assignment; `abc_size` of 0 or beyond the
/// domain; circuits that differ in any size or density bit; any scalar whose
/// representation is not below r (rejected, not reduced).
///
/// # Safety
/// `provers` must point to `num_circuits` readable `Assignment`s whose pointers
/// satisfy the ABI contract (docs/ARCHITECTURE.md §2) for `'a`.
pub unsafe fn validate<'a>(provers: *const CAssignment, num_circuits: usize, srs: &Srs) -> Result<Batch<'a>> {
    // SAFETY: forwarded contract.
    unsafe { validate_checking(provers, num_circuits, srs, num_circuits) }
}

/// [`validate`], but the scalars of circuits 1.. are left unchecked
/// (`scalars_checked` false): a porep-32g circuit holds 16 GiB of scalars, and
/// the pipeline checks circuits 1.. beside the device work of circuit 0
/// (`pipeline::checks`) rather than before it. Every other check, and circuit
/// 0's scalars, are as in [`validate`].
///
/// # Safety
/// As [`validate`].
pub unsafe fn validate_deferring<'a>(provers: *const CAssignment, num_circuits: usize, srs: &Srs) -> Result<Batch<'a>> {
    // SAFETY: forwarded contract.
    unsafe { validate_checking(provers, num_circuits, srs, 1) }
}

/// [`validate`], checking the scalars of the first `checked` circuits only.
unsafe fn validate_checking<'a>(provers: *const CAssignment, num_circuits: usize, srs: &Srs, checked: usize) -> Result<Batch<'a>> {
    if num_circuits == 0 {
        return Err(Error::invalid("num_circuits is 0; at least one circuit is required"));
    }
    // SAFETY: caller contract.
    let provers = unsafe { slice(provers, num_circuits, || "provers".to_string()) }?;
    let p0 = &provers[0];
    let n = srs.domain_size();

    // Shape checks on circuit 0 against the SRS; other circuits must equal it.
    expect_eq(|| "provers[0].a_aux_bit_len".into(), p0.a_aux_bit_len, p0.aux_assignment_size, "aux_assignment_size is")?;
    expect_eq(|| "provers[0].b_aux_bit_len".into(), p0.b_aux_bit_len, p0.aux_assignment_size, "aux_assignment_size is")?;
    expect_eq(|| "provers[0].b_inp_bit_len".into(), p0.b_inp_bit_len, p0.inp_assignment_size, "inp_assignment_size is")?;
    if p0.inp_assignment_size == 0 {
        return Err(Error::invalid("provers[0].inp_assignment_size is 0 but input 0 (the constant one) is required"));
    }
    if p0.abc_size == 0 || p0.abc_size > n {
        return Err(Error::invalid(format!(
            "provers[0].abc_size is {} but must be in 1..={n} (the SRS domain size, from {} h points)",
            p0.abc_size,
            srs.h.len()
        )));
    }
    // Bound the bit lengths by the key before any density word is read, so a
    // caller whose sizes disagree with the key gets EINVAL, not a read past
    // its (shorter) buffers.
    expect_eq(|| "SRS l point count".into(), srs.l.len(), p0.aux_assignment_size, "provers[0].aux_assignment_size is")?;
    if p0.inp_assignment_size > srs.a.len() {
        return Err(Error::invalid(format!(
            "provers[0].inp_assignment_size is {} but the SRS has only {} a points (inputs come first)",
            p0.inp_assignment_size,
            srs.a.len()
        )));
    }
    // SAFETY: caller contract for the density pointers.
    let a_aux = unsafe { density(0, "a_aux", p0.a_aux_density, p0.a_aux_bit_len, p0.a_aux_popcount) }?;
    let b_inp = unsafe { density(0, "b_inp", p0.b_inp_density, p0.b_inp_bit_len, p0.b_inp_popcount) }?;
    let b_aux = unsafe { density(0, "b_aux", p0.b_aux_density, p0.b_aux_bit_len, p0.b_aux_popcount) }?;
    expect_eq(
        || "SRS a point count".into(),
        srs.a.len(),
        p0.inp_assignment_size + p0.a_aux_popcount,
        "inp_assignment_size + a_aux_popcount is",
    )?;
    let b_points = p0.b_inp_popcount + p0.b_aux_popcount;
    expect_eq(|| "SRS b_g1 point count".into(), srs.b_g1.len(), b_points, "b_inp_popcount + b_aux_popcount is")?;
    expect_eq(|| "SRS b_g2 point count".into(), srs.b_g2.len(), b_points, "b_inp_popcount + b_aux_popcount is")?;

    let mut circuits = crate::error::try_vec(num_circuits, format_args!("num_circuits = {num_circuits}"))?;
    for (i, p) in provers.iter().enumerate() {
        if i > 0 {
            let same = |field: &str, got: usize, want: usize| {
                expect_eq(|| format!("provers[{i}].{field}"), got, want, "provers[0] has")
            };
            same("abc_size", p.abc_size, p0.abc_size)?;
            same("inp_assignment_size", p.inp_assignment_size, p0.inp_assignment_size)?;
            same("aux_assignment_size", p.aux_assignment_size, p0.aux_assignment_size)?;
            same("a_aux_bit_len", p.a_aux_bit_len, p0.a_aux_bit_len)?;
            same("b_inp_bit_len", p.b_inp_bit_len, p0.b_inp_bit_len)?;
            same("b_aux_bit_len", p.b_aux_bit_len, p0.b_aux_bit_len)?;
            for (name, ptr, pop, d) in [
                ("a_aux", p.a_aux_density, p.a_aux_popcount, &a_aux),
                ("b_inp", p.b_inp_density, p.b_inp_popcount, &b_inp),
                ("b_aux", p.b_aux_density, p.b_aux_popcount, &b_aux),
            ] {
                // SAFETY: caller contract.
                let di = unsafe { density(i, name, ptr, d.len, pop) }?;
                if di.words.as_ptr() != d.words.as_ptr() && !same_bits(di.words, d.words, d.len) {
                    return Err(Error::invalid(format!(
                        "provers[{i}].{name}_density differs from provers[0].{name}_density; circuits in one call must share density vectors"
                    )));
                }
            }
        }
        // SAFETY: caller contract for the scalar arrays.
        let c = unsafe {
            Circuit {
                a: scalars(p.a, p.abc_size, || format!("provers[{i}].a"))?,
                b: scalars(p.b, p.abc_size, || format!("provers[{i}].b"))?,
                c: scalars(p.c, p.abc_size, || format!("provers[{i}].c"))?,
                inp: scalars(p.inp_assignment_data, p.inp_assignment_size, || format!("provers[{i}].inp_assignment_data"))?,
                aux: scalars(p.aux_assignment_data, p.aux_assignment_size, || format!("provers[{i}].aux_assignment_data"))?,
                index: i,
                scalars_checked: i < checked,
            }
        };
        if c.scalars_checked {
            c.check_scalars()?;
        }
        circuits.push(c);
    }
    Ok(Batch { circuits, a_aux, b_inp, b_aux })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_ones_ignores_bits_past_the_length() {
        assert_eq!(count_ones(&[u64::MAX, u64::MAX], 70), 70);
        assert_eq!(count_ones(&[0b1011], 2), 2);
        assert!(same_bits(&[0b0111], &[0b1111], 3));
        assert!(!same_bits(&[0b0111], &[0b0011], 3));
    }

    /// A scalar whose representation is `l` (not necessarily below r).
    fn raw(l: [u64; 4]) -> Scalar {
        // SAFETY: Scalar is a transparent wrapper of blst_fr, four u64 limbs.
        unsafe { std::mem::transmute::<blst::blst_fr, Scalar>(blst::blst_fr { l }) }
    }

    #[test]
    fn the_first_non_canonical_scalar_is_named_across_pieces() {
        let mut v = vec![Scalar::from(7u64); 3 * CHECK_PIECE + 5];
        assert!(check_canonical(&v, || "v".into()).is_ok());
        // r itself, r − 1 (canonical) and 2^256 − 1, in later and earlier pieces.
        let r_minus_1 = [MODULUS_R[0] - 1, MODULUS_R[1], MODULUS_R[2], MODULUS_R[3]];
        v[CHECK_PIECE - 1] = raw(r_minus_1);
        assert!(check_canonical(&v, || "v".into()).is_ok(), "r − 1 is canonical");
        v[3 * CHECK_PIECE + 4] = raw(MODULUS_R);
        let e = check_canonical(&v, || "v".into()).unwrap_err();
        assert!(e.message.starts_with(&format!("v[{}] is not a canonical", 3 * CHECK_PIECE + 4)), "{}", e.message);
        v[CHECK_PIECE + 9] = raw([u64::MAX; 4]);
        v[2 * CHECK_PIECE] = raw(MODULUS_R);
        let e = check_canonical(&v, || "v".into()).unwrap_err();
        assert!(e.message.starts_with(&format!("v[{}] is not a canonical", CHECK_PIECE + 9)), "{}", e.message);
    }
}
