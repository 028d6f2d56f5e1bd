//! Fuzz harnesses, shared by the cargo-fuzz targets in `fuzz/` (libFuzzer,
//! nightly flags) and the corpus replay test `tests/fuzz_corpus.rs` (stable,
//! part of `cargo test`). Not part of the supported API.
//!
//! Each harness takes arbitrary bytes and panics on a finding: a panic caught
//! at the ABI (`EFAULT`), an error without a message or with the wrong code,
//! a result that disagrees with an independent model of the validation rules,
//! or a proof written on error. Memory errors (a read past a buffer the
//! harness owns) are what the sanitizer build of the fuzz targets catches.
//! Notes and numbers: `notes/FUZZING.md`.

use std::ffi::{c_int, c_void, CStr};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use blstrs::{G1Affine, G2Affine, G1Projective, G2Projective, Scalar};
use group::Group;

use crate::abi::exports::{
    destroy_pending_proof, drop_SRS, finalize_groth16_proof_c, generate_groth16_proofs_c, generate_groth16_proofs_start_c,
};
use crate::abi::types::{fr_t, groth16_proof, CAssignment, RustError, SRS};
use crate::error::code;
use crate::srs::{Srs, G1_BYTES, G2_BYTES};

/// The name the params harness gives its input in messages.
pub const PARAMS_NAME: &str = "fuzz.params";

/// Harness 1: the params-file parser ([`Srs::parse`], what `create_SRS` runs
/// on the mapped file). Any input either parses into a key whose sections
/// account for every byte, or fails with `EINVAL` and a message that names
/// the input and a section.
pub fn params_file(data: &[u8]) {
    match Srs::parse(Path::new(PARAMS_NAME), data) {
        Ok(srs) => {
            // The ic count is the only one not kept; read it back.
            let ic_at = 3 * G1_BYTES + 3 * G2_BYTES;
            let ic = u32::from_be_bytes(data[ic_at..ic_at + 4].try_into().unwrap()) as usize;
            let g1 = ic + srs.h.len() + srs.l.len() + srs.a.len() + srs.b_g1.len();
            let want = ic_at + 6 * 4 + g1 * G1_BYTES + srs.b_g2.len() * G2_BYTES;
            assert_eq!(data.len(), want, "a parsed key must account for every byte of the file");
            assert!(!srs.h.is_empty(), "a parsed key has an evaluation domain");
            assert!(srs.domain_size() > srs.h.len(), "domain size {} for {} h points", srs.domain_size(), srs.h.len());
        }
        Err(e) => {
            assert_eq!(e.code, code::EINVAL, "malformed contents are EINVAL: {}", e.message);
            let prefix = format!("{PARAMS_NAME}: ");
            assert!(e.message.starts_with(&prefix), "the message names the input: {:?}", e.message);
            assert!(e.message.len() > prefix.len() + 5, "the message says what is wrong: {:?}", e.message);
        }
    }
}

/// A valid params file with the given section counts (`ic` has 1 point).
/// Points are small multiples of the generators, so every point is decoded
/// and subgroup-checked like a real file's. Used for seed corpora and by
/// [`prove_call`].
pub fn tiny_params(h: usize, l: usize, a: usize, b: usize) -> Vec<u8> {
    let g1 = |i: usize| G1Affine::from(G1Projective::generator() * Scalar::from(i as u64 + 1)).to_uncompressed();
    let g2 = |i: usize| G2Affine::from(G2Projective::generator() * Scalar::from(i as u64 + 1)).to_uncompressed();
    let mut out = Vec::new();
    out.extend_from_slice(&g1(0)); // alpha_g1
    out.extend_from_slice(&g1(1)); // beta_g1
    out.extend_from_slice(&g2(2)); // beta_g2
    out.extend_from_slice(&g2(3)); // gamma_g2
    out.extend_from_slice(&g1(4)); // delta_g1
    out.extend_from_slice(&g2(5)); // delta_g2
    for count in [1, h, l, a, b] {
        out.extend_from_slice(&(count as u32).to_be_bytes());
        (0..count).for_each(|i| out.extend_from_slice(&g1(i % 5)));
    }
    out.extend_from_slice(&(b as u32).to_be_bytes());
    (0..b).for_each(|i| out.extend_from_slice(&g2(i % 5)));
    out
}

/// Reads fuzz bytes; zeros once they run out.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |v, i| v | (self.u8() as u64) << (8 * i))
    }
}

/// The scalar field modulus r, little-endian limbs; written out here again
/// (not imported) so the model below is independent of the validator.
const R: [u64; 4] = [0xffff_ffff_0000_0001, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];

fn below_r(l: &[u64; 4]) -> bool {
    (0..4).rev().find(|&i| l[i] != R[i]).is_some_and(|i| l[i] < R[i])
}

/// Where one of an Assignment's pointers points.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ptr {
    Own,
    Null,
    /// Own buffer plus 1..=7 bytes.
    Misaligned(usize),
    /// The same kind of buffer of another circuit (same length).
    Other(usize),
}

/// Array kinds: three density vectors (these indices), then the scalar
/// arrays a, b, c, inp_assignment_data, aux_assignment_data (3..=7).
const A_AUX: usize = 0;
const B_INP: usize = 1;
const B_AUX: usize = 2;

/// One circuit's owned buffers and the sizes and pointers to hand over.
struct Circuit {
    words: [Vec<u64>; 3],
    scalars: [Vec<fr_t>; 5],
    /// bit lengths and popcounts of the three density vectors.
    bits: [usize; 3],
    pops: [usize; 3],
    abc: usize,
    inp: usize,
    aux: usize,
    ptrs: [Ptr; 8],
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

fn count_bits(words: &[u64], len: usize) -> usize {
    (0..len).filter(|&i| words[i / 64] >> (i % 64) & 1 == 1).count()
}

fn scalar(r: &mut Reader) -> fr_t {
    let v = r.u8();
    let s = if v < 160 { Scalar::from((v % 3) as u64) } else { Scalar::from(r.u64()) };
    fr_t { limbs: blst::blst_fr::from(s).l }
}

/// A key of shape `(h, l, a, b)`: the points of one parsed [`tiny_params`]
/// file, reused cyclically ([`Srs::from_parts`]; parsing and
/// subgroup-checking a key per input would cost more than the call under test).
fn key_for(shape: [usize; 4]) -> Arc<Srs> {
    static TEMPLATE: OnceLock<Srs> = OnceLock::new();
    let t = TEMPLATE.get_or_init(|| Srs::parse(Path::new("tiny.params"), &tiny_params(5, 5, 5, 5)).expect("valid"));
    fn take<T: Copy>(from: &[T], n: usize) -> Vec<T> {
        from.iter().copied().cycle().take(n).collect()
    }
    let [h, l, a, b] = shape;
    Arc::new(Srs::from_parts(
        t.path.clone(),
        t.alpha_g1,
        t.beta_g1,
        t.beta_g2,
        t.delta_g1,
        t.delta_g2,
        take(&t.h, h),
        take(&t.l, l),
        take(&t.a, a),
        take(&t.b_g1, b),
        take(&t.b_g2, b),
    ))
}

/// A live lock handle shared by all inputs (never destroyed).
fn lock_handle() -> *mut c_void {
    static H: OnceLock<usize> = OnceLock::new();
    *H.get_or_init(|| crate::abi::exports::create_gpu_mutex() as usize) as *mut c_void
}

/// Harness 2: `generate_groth16_proofs_c` (or the split form) on the CPU
/// backend with Assignments built from fuzz bytes.
///
/// The input picks a consistent shape (1–3 circuits, 1–4 inputs, 0–129 aux
/// variables, a domain of 2–16, density bits, scalar values) and a key of
/// exactly that shape, then applies up to 8 edits: a size or popcount set to
/// any value, a pointer made NULL, misaligned or pointed at another
/// circuit's buffer, a density bit flipped, a scalar made non-canonical,
/// `num_circuits` lowered, a bad `gpu_index`. Every buffer is owned here and
/// sized for the shape the key allows, so a validator that read past what
/// the key permits would read past the buffer (caught by the sanitizer).
///
/// Checks: the call succeeds exactly when an independent model of the rules
/// of docs/ARCHITECTURE.md §2, §4 says the input is valid; errors are `EINVAL` with a
/// message that names the function; on error no proof is written; on
/// success every proof is.
pub fn prove_call(data: &[u8]) {
    std::env::set_var("SUPRASEAL_C2_BACKEND", "cpu");
    // A first byte of 0xC0 and above selects the split-form lifecycle (a
    // quarter of the inputs; the rest keep the layout of the corpus).
    if let Some((&b, rest)) = data.split_first() {
        if b >= 0xC0 {
            return split_lifecycle(rest);
        }
    }
    let mut r = Reader(data);
    let circuits = 1 + r.u8() as usize % 3;
    let inp = 1 + r.u8() as usize % 4;
    let aux = r.u8() as usize % 130;
    let h = 1 + r.u8() as usize % 8;
    let n = (h + 1).next_power_of_two();
    let abc = 1 + r.u8() as usize % n;
    let bits = [aux, inp, aux];
    let words: [Vec<u64>; 3] = std::array::from_fn(|k| (0..bits[k].div_ceil(64)).map(|_| r.u64()).collect());
    let pops: [usize; 3] = std::array::from_fn(|k| count_bits(&words[k], bits[k]));
    let key = key_for([h, aux, inp + pops[A_AUX], pops[B_INP] + pops[B_AUX]]);

    // Buffer capacities: what the key allows (a/b/c up to the domain size).
    let caps = [n, n, n, inp, aux];
    let mut cs: Vec<Circuit> = (0..circuits)
        .map(|_| Circuit {
            words: words.clone(),
            scalars: std::array::from_fn(|k| (0..caps[k]).map(|_| scalar(&mut r)).collect()),
            bits,
            pops,
            abc,
            inp,
            aux,
            ptrs: [Ptr::Own; 8],
        })
        .collect();
    let mut rs: Vec<fr_t> = (0..circuits).map(|_| scalar(&mut r)).collect();
    let mut ss: Vec<fr_t> = (0..circuits).map(|_| scalar(&mut r)).collect();
    let mut num = circuits;
    let mut gpu_index: c_int = -1;
    let split = r.u8();
    let gpu_mtx = if r.u8() & 1 == 1 { lock_handle() } else { std::ptr::null_mut() };

    for _ in 0..r.u8() % 9 {
        let c = r.u8() as usize % circuits;
        let what = r.u8() % 12;
        let arg = r.u8() as usize;
        let sizes: [&mut usize; 10] = {
            let x = &mut cs[c];
            let [b0, b1, b2] = &mut x.bits;
            let [p0, p1, p2] = &mut x.pops;
            [b0, b1, b2, p0, p1, p2, &mut x.abc, &mut x.inp, &mut x.aux, &mut num]
        };
        match what {
            0..=2 => {
                // a size: nudge, small value or anything
                let s = sizes.into_iter().nth(arg % 10).unwrap();
                *s = match r.u8() % 3 {
                    0 => s.wrapping_add(r.u8() as usize).wrapping_sub(128),
                    1 => r.u8() as usize,
                    _ => r.u64() as usize,
                };
                if arg % 10 == 9 {
                    num = num.min(circuits); // r_s, s_s and proofs hold `circuits`
                }
            }
            3..=4 => {
                let k = arg % 8;
                cs[c].ptrs[k] = match r.u8() % 3 {
                    0 => Ptr::Null,
                    1 => Ptr::Misaligned(1 + r.u8() as usize % 7),
                    _ => Ptr::Other(r.u8() as usize % circuits),
                };
            }
            5..=6 => {
                let k = arg % 3;
                let w = &mut cs[c].words[k];
                if !w.is_empty() {
                    let bit = r.u8() as usize % (w.len() * 64);
                    w[bit / 64] ^= 1 << (bit % 64);
                }
            }
            7..=9 => {
                let bad = match r.u8() % 4 {
                    0 => R,
                    1 => [R[0] + 1, R[1], R[2], R[3]],
                    2 => [u64::MAX; 4],
                    _ => [R[0] - 1, R[1], R[2], R[3]], // r - 1: canonical
                };
                let i = r.u8() as usize;
                match arg % 7 {
                    5 => rs[c].limbs = bad,
                    6 => ss[c].limbs = bad,
                    k => {
                        let v = &mut cs[c].scalars[k];
                        if !v.is_empty() {
                            let len = v.len();
                            v[i % len].limbs = bad;
                        }
                    }
                }
            }
            10 => gpu_index = -(r.u8() as c_int % 4) - 1, // -1 ..= -4
            _ => gpu_index = 0,
        }
    }

    let valid = model_valid(&cs, num, &rs, &ss, gpu_index, &key);
    let provers: Vec<CAssignment> = cs.iter().map(|x| assignment(x, &cs)).collect();
    if split & 0b11100 != 0 {
        // Seven inputs in eight stop at the validation layer: a valid call
        // proves (tens of milliseconds under the sanitizer), which would
        // dominate the run otherwise.
        // SAFETY: as for the full call below.
        let got = unsafe { crate::assignment::validate(provers.as_ptr(), num, &key) };
        let valid_layer = valid_ignoring_rs(&cs, num, &key);
        match got {
            Ok(_) => assert!(valid_layer, "validate accepted an invalid input"),
            Err(e) => {
                assert!(!valid_layer, "validate rejected a valid input: {}", e.message);
                assert_eq!(e.code, code::EINVAL, "{}", e.message);
                assert!(e.message.len() > 10, "validate's message says what is wrong: {:?}", e.message);
            }
        }
        return;
    }
    let mut handle = SRS { ptr: Arc::into_raw(key.clone()) as *const c_void };
    let mut proofs = vec![[0xA5u8; 384]; circuits];
    let out = proofs.as_mut_ptr() as *mut groth16_proof;
    let (rp, sp) = (rs.as_ptr(), ss.as_ptr());
    let (e, func) = if split & 1 == 0 {
        // SAFETY: every pointer is NULL, misaligned (rejected before any read)
        // or into a buffer owned above that holds what the key permits.
        let e = unsafe { generate_groth16_proofs_c(provers.as_ptr(), num, rp, sp, out, &handle, gpu_mtx, gpu_index) };
        (e, "generate_groth16_proofs_c")
    } else {
        let mut pending: *mut c_void = std::ptr::dangling_mut::<c_void>();
        // SAFETY: as above; `pending` is writable.
        let e = unsafe {
            generate_groth16_proofs_start_c(provers.as_ptr(), num, rp, sp, &handle, gpu_mtx, gpu_index, &mut pending)
        };
        if e.code != 0 {
            assert!(pending.is_null(), "start failed but left a pending handle");
            (e, "generate_groth16_proofs_start_c")
        } else {
            // The caller's buffers are overwritten and freed before finalize:
            // the pending handle must not read them (a read is a
            // use-after-free, which the sanitizer build reports).
            for x in &mut cs {
                x.words.iter_mut().for_each(|w| w.fill(u64::MAX));
                x.scalars.iter_mut().for_each(|v| v.fill(fr_t { limbs: [u64::MAX; 4] }));
            }
            rs.fill(fr_t { limbs: [u64::MAX; 4] });
            ss.fill(fr_t { limbs: [u64::MAX; 4] });
            drop((cs, rs, ss, provers));
            // SAFETY: a handle holding one reference; the pending proof keeps its own.
            unsafe { drop_SRS(&mut handle) };
            finish(pending, split, out)
        }
    };
    if func.is_empty() {
        proofs.clear(); // destroyed without finalize: nothing written, nothing to check
    }
    // SAFETY: the reference taken by Arc::into_raw above, or already emptied.
    unsafe { drop_SRS(&mut handle) };
    check_outcome(&e, func, valid, &proofs, num);
}

/// Split form, part 2: finalize (`split` bit 1 clear) or destroy.
fn finish(pending: *mut c_void, split: u8, out: *mut groth16_proof) -> (RustError, &'static str) {
    if split & 2 == 0 {
        // SAFETY: a live pending handle; `proofs` holds `num` slots.
        (unsafe { finalize_groth16_proof_c(pending, out) }, "finalize_groth16_proof_c")
    } else {
        destroy_pending_proof(pending);
        (RustError::OK, "")
    }
}

fn check_outcome(e: &RustError, func: &str, valid: bool, proofs: &[[u8; 384]], num: usize) {
    let msg = if e.message.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated string allocated by the library.
        unsafe { CStr::from_ptr(e.message) }.to_string_lossy().into_owned()
    };
    assert_ne!(e.code, code::EFAULT, "a panic was caught at the ABI: {msg}");
    if valid {
        assert_eq!(e.code, 0, "a valid input was rejected: {msg}");
        assert!(proofs.iter().take(num).all(|p| p != &[0xA5; 384]), "a proof slot was not written");
    } else {
        assert_eq!(e.code, code::EINVAL, "an invalid input was not rejected with EINVAL: {msg}");
        let prefix = format!("{func}: ");
        assert!(msg.starts_with(&prefix) && msg.len() > prefix.len() + 5, "message {msg:?} names {func}");
        assert!(proofs.iter().all(|p| p == &[0xA5; 384]), "a proof was written on error");
    }
}

/// The raw Assignment for `x`, its pointers resolved against all circuits.
fn assignment(x: &Circuit, all: &[Circuit]) -> CAssignment {
    let ptr = |k: usize| -> *const u8 {
        let base = |c: &Circuit| -> *const u8 {
            match k {
                0..=2 => c.words[k].as_ptr() as *const u8,
                _ => c.scalars[k - 3].as_ptr() as *const u8,
            }
        };
        match x.ptrs[k] {
            Ptr::Own => base(x),
            Ptr::Null => std::ptr::null(),
            Ptr::Misaligned(b) => base(x).wrapping_add(b),
            Ptr::Other(c) => base(&all[c]),
        }
    };
    CAssignment {
        a_aux_density: ptr(0) as *const u64,
        a_aux_bit_len: x.bits[A_AUX],
        a_aux_popcount: x.pops[A_AUX],
        b_inp_density: ptr(1) as *const u64,
        b_inp_bit_len: x.bits[B_INP],
        b_inp_popcount: x.pops[B_INP],
        b_aux_density: ptr(2) as *const u64,
        b_aux_bit_len: x.bits[B_AUX],
        b_aux_popcount: x.pops[B_AUX],
        a: ptr(3) as *const fr_t,
        b: ptr(4) as *const fr_t,
        c: ptr(5) as *const fr_t,
        abc_size: x.abc,
        inp_assignment_data: ptr(6) as *const fr_t,
        inp_assignment_size: x.inp,
        aux_assignment_data: ptr(7) as *const fr_t,
        aux_assignment_size: x.aux,
    }
}

/// The rules, restated from docs/ARCHITECTURE.md §2, §4 without the validator's code: whether
/// a correct implementation must accept this call.
fn model_valid(cs: &[Circuit], num: usize, rs: &[fr_t], ss: &[fr_t], gpu_index: c_int, key: &Srs) -> bool {
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
fn valid_ignoring_rs(cs: &[Circuit], num: usize, key: &Srs) -> bool {
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

/// One job of [`split_lifecycle`]: valid inputs (kept here, not by the
/// library) and the proofs the one-shot call gives for them.
struct Job {
    provers: Vec<CAssignment>,
    rs: Vec<fr_t>,
    ss: Vec<fr_t>,
    expected: Vec<[u8; 384]>,
}

/// What the model knows of a handle value the library returned.
enum Handle {
    Live(usize),
    Stale,
}

/// Harness 2b: random interleavings of `generate_groth16_proofs_start_c`,
/// `finalize_groth16_proof_c` and `destroy_pending_proof` over up to 8
/// handles, plus foreign values (a lock handle, a stack address, small
/// integers) and lock-handle destroys, checked against a model: a stale or
/// foreign handle is always `EINVAL` (finalize, no slot written) or ignored
/// (destroy); every live job, whenever it is finalized, gets exactly the
/// proofs of the one-shot call on its own inputs; no handle value is ever
/// returned twice.
pub fn split_lifecycle(data: &[u8]) {
    // One valid shape: 2 inputs, 6 aux variables, a domain of 8.
    struct Fixed {
        key: Arc<Srs>,
        words: [Vec<u64>; 3],
        scalars: Vec<[Vec<fr_t>; 5]>,
    }
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    let f = FIXED.get_or_init(|| {
        let words = [vec![0b110111u64], vec![0b01u64], vec![0b100101u64]];
        let pops: [usize; 3] = std::array::from_fn(|k| count_bits(&words[k], [6, 2, 6][k]));
        let key = key_for([7, 6, 2 + pops[A_AUX], pops[B_INP] + pops[B_AUX]]);
        // Three witnesses of mixed 0 / 1 / other values.
        let v = |i: u64| fr_t { limbs: blst::blst_fr::from(Scalar::from(i * i % 5 + i / 3)).l };
        let scalars = (0..3u64)
            .map(|c| std::array::from_fn(|k| (0..[8, 8, 8, 2, 6][k] as u64).map(|i| v(c * 31 + k as u64 * 7 + i)).collect()))
            .collect();
        Fixed { key, words, scalars }
    });
    let assignment = |c: usize| {
        let sc = &f.scalars[c];
        let w = &f.words;
        CAssignment {
            a_aux_density: w[A_AUX].as_ptr(),
            a_aux_bit_len: 6,
            a_aux_popcount: count_bits(&w[A_AUX], 6),
            b_inp_density: w[B_INP].as_ptr(),
            b_inp_bit_len: 2,
            b_inp_popcount: count_bits(&w[B_INP], 2),
            b_aux_density: w[B_AUX].as_ptr(),
            b_aux_bit_len: 6,
            b_aux_popcount: count_bits(&w[B_AUX], 6),
            a: sc[0].as_ptr(),
            b: sc[1].as_ptr(),
            c: sc[2].as_ptr(),
            abc_size: 8,
            inp_assignment_data: sc[3].as_ptr(),
            inp_assignment_size: 2,
            aux_assignment_data: sc[4].as_ptr(),
            aux_assignment_size: 6,
        }
    };
    // One reference of our own, released by the handle's drop.
    let srs = SRS { ptr: Arc::into_raw(f.key.clone()) as *const c_void };
    let message = |e: &RustError| -> String {
        if e.message.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated string allocated by the library.
            unsafe { CStr::from_ptr(e.message) }.to_string_lossy().into_owned()
        }
    };

    let mut r = Reader(data);
    let mut jobs: Vec<Option<Job>> = Vec::new();
    let mut seen: Vec<(usize, Handle)> = Vec::new();
    let mut on_stack = [0u64; 4];
    let lock = lock_handle();
    for _ in 0..1 + r.u8() % 24 {
        let op = r.u8() % 8;
        let pick = r.u8() as usize;
        match op {
            0 | 1 => {
                if seen.iter().filter(|(_, h)| matches!(h, Handle::Live(_))).count() >= 8 {
                    continue;
                }
                let n = 1 + pick % 3;
                let provers: Vec<CAssignment> = (0..n).map(|i| assignment((pick / 3 + i) % 3)).collect();
                let scalar_of = |r: &mut Reader| fr_t { limbs: blst::blst_fr::from(Scalar::from(1 + r.u64() % (1 << 62))).l };
                let rs: Vec<fr_t> = (0..n).map(|_| scalar_of(&mut r)).collect();
                let ss: Vec<fr_t> = (0..n).map(|_| scalar_of(&mut r)).collect();
                let mut expected = vec![[0u8; 384]; n];
                let (rp, sp) = (rs.as_ptr(), ss.as_ptr());
                let out = expected.as_mut_ptr() as *mut groth16_proof;
                // SAFETY: valid inputs of `n` circuits that outlive the call.
                let e = unsafe { generate_groth16_proofs_c(provers.as_ptr(), n, rp, sp, out, &srs, std::ptr::null_mut(), -1) };
                assert_eq!(e.code, 0, "the one-shot call on valid inputs: {}", message(&e));
                let mut pending = std::ptr::null_mut();
                let mtx = if pick & 0x80 != 0 { lock } else { std::ptr::null_mut() };
                // SAFETY: as above; `pending` is writable.
                let e = unsafe { generate_groth16_proofs_start_c(provers.as_ptr(), n, rp, sp, &srs, mtx, -1, &mut pending) };
                assert_eq!(e.code, 0, "start on valid inputs: {}", message(&e));
                assert!(seen.iter().all(|(v, _)| *v != pending as usize), "handle value {pending:p} returned twice");
                seen.push((pending as usize, Handle::Live(jobs.len())));
                jobs.push(Some(Job { provers, rs, ss, expected }));
            }
            2 | 3 => {
                // Finalize a handle the model knows (live or stale).
                let Some(i) = (!seen.is_empty()).then(|| pick % seen.len()) else { continue };
                let value = seen[i].0 as *mut c_void;
                let slots = match &seen[i].1 {
                    Handle::Live(j) => jobs[*j].as_ref().unwrap().expected.len(),
                    Handle::Stale => 3,
                };
                let mut proofs = vec![[0xA5u8; 384]; slots];
                // SAFETY: `proofs` holds the job's circuit count (live) or is
                // not written (stale: refused before any write).
                let e = unsafe { finalize_groth16_proof_c(value, proofs.as_mut_ptr() as *mut groth16_proof) };
                match std::mem::replace(&mut seen[i].1, Handle::Stale) {
                    Handle::Live(j) => {
                        let job = jobs[j].take().unwrap();
                        assert_eq!(e.code, 0, "finalize of a live handle: {}", message(&e));
                        assert!(proofs == job.expected, "a live job got proofs other than its own");
                        drop((job.provers, job.rs, job.ss));
                    }
                    Handle::Stale => {
                        let m = message(&e);
                        assert_eq!(e.code, code::EINVAL, "finalize of a stale handle: {m}");
                        assert!(m.starts_with("finalize_groth16_proof_c: ") && m.contains("stale"), "{m}");
                        assert!(proofs.iter().all(|p| p == &[0xA5; 384]), "a stale finalize wrote a proof");
                    }
                }
            }
            4 => {
                let Some(i) = (!seen.is_empty()).then(|| pick % seen.len()) else { continue };
                destroy_pending_proof(seen[i].0 as *mut c_void);
                if let Handle::Live(j) = std::mem::replace(&mut seen[i].1, Handle::Stale) {
                    jobs[j] = None;
                }
            }
            5 | 6 => {
                // A value that was never a pending handle.
                let value = match pick % 5 {
                    0 => lock,
                    1 => on_stack.as_mut_ptr() as *mut c_void,
                    2 => (r.u8() as usize) as *mut c_void,
                    3 => (0x5C2B_u64 << 48 | (1 << 47) | r.u64() >> 20) as usize as *mut c_void,
                    _ => r.u64() as usize as *mut c_void,
                };
                if value.is_null() || seen.iter().any(|(v, _)| *v == value as usize) {
                    continue;
                }
                let mut proofs = vec![[0xA5u8; 384]; 1];
                if op == 5 {
                    // SAFETY: refused before any write (not a live handle).
                    let e = unsafe { finalize_groth16_proof_c(value, proofs.as_mut_ptr() as *mut groth16_proof) };
                    let m = message(&e);
                    assert_eq!(e.code, code::EINVAL, "finalize of {value:p}: {m}");
                    assert!(m.contains("not a live pending proof"), "{m}");
                } else {
                    destroy_pending_proof(value);
                    // SAFETY: any value is accepted; a foreign one is ignored.
                    unsafe { crate::abi::exports::destroy_gpu_mutex(on_stack.as_mut_ptr() as *mut c_void) };
                }
                assert!(proofs[0] == [0xA5; 384] && on_stack == [0; 4], "a foreign value was written through");
            }
            _ => {
                // A lock handle created, destroyed twice, then used: EINVAL.
                let h = crate::abi::exports::create_gpu_mutex();
                // SAFETY: any value is accepted.
                unsafe {
                    crate::abi::exports::destroy_gpu_mutex(h);
                    crate::abi::exports::destroy_gpu_mutex(h);
                }
                assert!(crate::abi::handles::lock(h).is_err(), "a destroyed lock handle stays destroyed");
            }
        }
    }
    // Every job still live gets its own proofs.
    for (v, h) in seen {
        if let Handle::Live(j) = h {
            let job = jobs[j].take().unwrap();
            let mut proofs = vec![[0xA5u8; 384]; job.expected.len()];
            // SAFETY: a live handle; `proofs` holds its circuit count.
            let e = unsafe { finalize_groth16_proof_c(v as *mut c_void, proofs.as_mut_ptr() as *mut groth16_proof) };
            assert_eq!(e.code, 0, "final finalize: {}", message(&e));
            assert!(proofs == job.expected, "a live job got proofs other than its own");
        }
    }
}
