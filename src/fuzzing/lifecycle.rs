//! Harness 2b: the split form's lifecycle (`generate_groth16_proofs_start_c`,
//! `finalize_groth16_proof_c`, `destroy_pending_proof`) over several pending
//! handles, with stale and foreign handle values and lock handles, checked
//! against a model of which handles are live.

use std::ffi::{c_void, CStr};
use std::sync::{Arc, OnceLock};

use blstrs::Scalar;

use crate::abi::exports::{
    destroy_pending_proof, finalize_groth16_proof_c, generate_groth16_proofs_c, generate_groth16_proofs_start_c,
};
use crate::abi::types::{fr_t, groth16_proof, CAssignment, RustError, SRS};
use crate::error::code;
use crate::srs::Srs;

use super::params::key_for;
use super::{count_bits, lock_handle, Reader, A_AUX, B_AUX, B_INP};

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
