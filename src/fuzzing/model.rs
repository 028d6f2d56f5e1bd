//! The circuits the prover harness builds (owned buffers, the sizes and
//! pointers it hands over) and an independent model of the validation rules
//! of docs/ARCHITECTURE.md §2, §4: whether a correct implementation must
//! accept a call on them. The model restates the rules without the
//! validator's code.

use std::ffi::c_int;

use crate::abi::types::fr_t;
use crate::srs::Srs;

use super::{count_bits, A_AUX, B_AUX, B_INP};

/// The scalar field modulus r, little-endian limbs; written out here again
/// (not imported) so the model is independent of the validator.
pub(super) const R: [u64; 4] =
    [0xffff_ffff_0000_0001, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];

fn below_r(l: &[u64; 4]) -> bool {
    (0..4).rev().find(|&i| l[i] != R[i]).is_some_and(|i| l[i] < R[i])
}

/// Where one of an Assignment's pointers points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Ptr {
    Own,
    Null,
    /// Own buffer plus 1..=7 bytes.
    Misaligned(usize),
    /// The same kind of buffer of another circuit (same length).
    Other(usize),
}

/// One circuit's owned buffers and the sizes and pointers to hand over.
pub(super) struct Circuit {
    pub(super) words: [Vec<u64>; 3],
    pub(super) scalars: [Vec<fr_t>; 5],
    /// bit lengths and popcounts of the three density vectors.
    pub(super) bits: [usize; 3],
    pub(super) pops: [usize; 3],
    pub(super) abc: usize,
    pub(super) inp: usize,
    pub(super) aux: usize,
    pub(super) ptrs: [Ptr; 8],
}

impl Circuit {
    fn size_of(&self, kind: usize) -> usize {
        match kind {
            0..=2 => self.bits[kind].div_ceil(64),
            3..=5 => self.abc,
            6 => self.inp,
            _ => self.aux,
        }
    }
}

/// The rules, restated from docs/ARCHITECTURE.md §2, §4 without the validator's code: whether
/// a correct implementation must accept this call.
pub(super) fn model_valid(cs: &[Circuit], num: usize, rs: &[fr_t], ss: &[fr_t], gpu_index: c_int, key: &Srs) -> bool {
    if num == 0 || gpu_index < -1 {
        return false;
    }
    let p0 = &cs[0];
    let shape_ok = p0.aux == key.l.len()
        && p0.bits == [p0.aux, p0.inp, p0.aux]
        && p0.inp >= 1
        && (1..=key.domain_size()).contains(&p0.abc)
        && p0.inp.checked_add(p0.pops[A_AUX]) == Some(key.a.len())
        && p0.pops[B_INP].checked_add(p0.pops[B_AUX]) == Some(key.b_g1.len());
    if !shape_ok {
        return false;
    }
    // From here every size equals the one the buffers were made for, except
    // abc (≤ the domain, which the a/b/c buffers hold).
    for x in &cs[..num] {
        if x.bits != p0.bits || x.abc != p0.abc || x.inp != p0.inp || x.aux != p0.aux {
            return false;
        }
        for k in 0..8 {
            let len = x.size_of(k);
            let target = match x.ptrs[k] {
                // An empty vector has no ones: its popcount must be 0.
                _ if len == 0 && k < 3 && x.pops[k] != 0 => return false,
                _ if len == 0 => continue,
                Ptr::Null | Ptr::Misaligned(_) => return false,
                Ptr::Own => x,
                Ptr::Other(c) => &cs[c],
            };
            if k < 3 {
                let (w, w0) = (&target.words[k], &p0_words(cs, k));
                if count_bits(w, x.bits[k]) != x.pops[k] || (0..x.bits[k]).any(|i| bit(w, i) != bit(w0, i)) {
                    return false;
                }
            } else if !target.scalars[k - 3][..len].iter().all(|s| below_r(&s.limbs)) {
                return false;
            }
        }
    }
    rs[..num].iter().chain(&ss[..num]).all(|s| below_r(&s.limbs))
}

/// [`model_valid`] for the validation layer alone (r, s, gpu_index unchecked).
pub(super) fn valid_ignoring_rs(cs: &[Circuit], num: usize, key: &Srs) -> bool {
    let zero = vec![fr_t { limbs: [0; 4] }; num.min(cs.len())];
    model_valid(cs, num, &zero, &zero, -1, key)
}

/// The density vector circuit 0 actually passes for kind `k`.
fn p0_words(cs: &[Circuit], k: usize) -> Vec<u64> {
    match cs[0].ptrs[k] {
        Ptr::Other(c) => cs[c].words[k].clone(),
        _ => cs[0].words[k].clone(),
    }
}

fn bit(w: &[u64], i: usize) -> bool {
    w[i / 64] >> (i % 64) & 1 == 1
}
