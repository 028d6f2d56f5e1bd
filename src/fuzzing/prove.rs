//! Harness 2: one prover call (`generate_groth16_proofs_c`, the split form,
//! or the validation layer alone) on the CPU backend, with Assignments built
//! from the input and then edited into valid or invalid ones; the outcome is
//! checked against `super::model`.

use std::ffi::{c_int, c_void, CStr};
use std::sync::Arc;

use blstrs::Scalar;

use crate::abi::exports::{
    destroy_pending_proof, drop_SRS, finalize_groth16_proof_c, generate_groth16_proofs_c, generate_groth16_proofs_start_c,
};
use crate::abi::types::{fr_t, groth16_proof, CAssignment, RustError, SRS};
use crate::error::code;

use super::model::{model_valid, valid_ignoring_rs, Circuit, Ptr, R};
use super::params::key_for;
use super::{count_bits, lock_handle, split_lifecycle, Reader, A_AUX, B_AUX, B_INP};

/// A scalar from the input: mostly 0, 1 or 2, else any value below 2^64.
fn scalar(r: &mut Reader) -> fr_t {
    let v = r.u8();
    let s = if v < 160 { Scalar::from((v % 3) as u64) } else { Scalar::from(r.u64()) };
    fr_t { limbs: blst::blst_fr::from(s).l }
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
