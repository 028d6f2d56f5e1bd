//! The 0.1.2 split-argument form of the Rust API: per-circuit pointer
//! slices and shared density bit vectors instead of [`Assignment`]s, turned
//! into [`Assignment`]s with the reference's checks and passed on.

#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_int, c_void};

use super::{generate_groth16_proofs_on_gpu, start_groth16_proofs, Assignment, SRS};

/// Builds one [`Assignment`] per circuit from the split-argument form of
/// [`generate_groth16_proof`], with the reference's checks.
#[allow(clippy::too_many_arguments)]
fn assignments_from_parts<S, D>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
) -> Vec<Assignment<S>> {
    assert_eq!(ntt_a_scalars.len(), num_circuits, "ntt_a_scalars length");
    assert_eq!(ntt_b_scalars.len(), num_circuits, "ntt_b_scalars length");
    assert_eq!(ntt_c_scalars.len(), num_circuits, "ntt_c_scalars length");
    assert_eq!(input_assignments.len(), num_circuits, "input_assignments length");
    assert_eq!(aux_assignments.len(), num_circuits, "aux_assignments length");
    assert_eq!(r_s.len(), num_circuits, "r_s length");
    assert_eq!(s_s.len(), num_circuits, "s_s length");
    let bits = std::mem::size_of::<D>() * 8;
    assert!(bits == 64, "only 64-bit elements in bit vectors are supported (got {bits}-bit)");
    assert!(a_aux_density_bv.len() * bits >= aux_assignments_size, "a_aux_density_bv is shorter than aux_assignments_size bits");
    assert!(b_g1_aux_density_bv.len() * bits >= aux_assignments_size, "b_g1_aux_density_bv is shorter than aux_assignments_size bits");
    assert!(
        b_g1_input_density_bv.len() * bits >= input_assignments_size,
        "b_g1_input_density_bv is shorter than input_assignments_size bits"
    );
    (0..num_circuits)
        .map(|c| Assignment::<S> {
            a_aux_density: a_aux_density_bv.as_ptr() as *const usize,
            a_aux_bit_len: aux_assignments_size,
            a_aux_popcount: a_aux_total_density,
            b_inp_density: b_g1_input_density_bv.as_ptr() as *const usize,
            b_inp_bit_len: input_assignments_size,
            b_inp_popcount: b_g1_input_total_density,
            b_aux_density: b_g1_aux_density_bv.as_ptr() as *const usize,
            b_aux_bit_len: aux_assignments_size,
            b_aux_popcount: b_g1_aux_total_density,
            a: ntt_a_scalars[c],
            b: ntt_b_scalars[c],
            c: ntt_c_scalars[c],
            abc_size: ntt_scalars_actual_size,
            inp_assignment_data: input_assignments[c],
            inp_assignment_size: input_assignments_size,
            aux_assignment_data: aux_assignments[c],
            aux_assignment_size: aux_assignments_size,
        })
        .collect()
}

/// The 0.1.2 split-argument form: proves `num_circuits` circuits that share
/// sizes and density bit vectors, given per-circuit pointers.
///
/// - `ntt_{a,b,c}_scalars[i]`: circuit i's A, B, C evaluations, each
///   `ntt_scalars_actual_size` scalars (constraints + inputs);
/// - `input_assignments[i]` / `aux_assignments[i]`: circuit i's variable
///   values, `input_assignments_size` / `aux_assignments_size` scalars;
/// - `a_aux_density_bv`, `b_g1_input_density_bv`, `b_g1_aux_density_bv`:
///   shared density bit vectors of 64-bit words (at least
///   `aux_assignments_size`, `input_assignments_size`, `aux_assignments_size`
///   bits), with their popcounts `*_total_density`;
/// - `r_s`, `s_s`, `proofs`: `num_circuits` elements each.
///
/// Panics when a slice length differs from `num_circuits`, when `D` is not
/// 64-bit or a bit vector is too short (the reference's asserts), and on any
/// library error.
///
/// This is the 19-argument signature of 0.1.2 (what bellperson 0.27 calls);
/// with the `curio-fork` feature it takes Curio's fork's 21 arguments instead
/// (`…, srs, gpu_mtx, gpu_index`, as [`generate_groth16_proof_on_gpu`]).
#[cfg(not(feature = "curio-fork"))]
#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) {
    generate_groth16_proof_on_gpu(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
        proofs,
        srs,
        std::ptr::null_mut(),
        -1,
    )
}

/// Curio's fork's signature of the split-argument form (the `curio-fork`
/// feature; what Curio's bellperson calls): the 0.1.2 arguments followed by
/// a lock handle and a device, `gpu_mtx` and `gpu_index` as in
/// [`generate_groth16_proofs_on_gpu`](super::generate_groth16_proofs_on_gpu)
/// (NULL and −1: the default lock, any device). The same call as
/// [`generate_groth16_proof_on_gpu`]; the arguments and panics are those of
/// the 0.1.2 form, documented there.
#[cfg(feature = "curio-fork")]
#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) {
    generate_groth16_proof_on_gpu(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
        proofs,
        srs,
        gpu_mtx,
        gpu_index,
    )
}

/// [`generate_groth16_proof`] with an explicit lock handle and device
/// (`gpu_mtx`, `gpu_index` as in [`generate_groth16_proofs_on_gpu`]).
#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof_on_gpu<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) {
    assert_eq!(proofs.len(), num_circuits, "proofs length");
    let provers = assignments_from_parts(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
    );
    generate_groth16_proofs_on_gpu(&provers, r_s, s_s, proofs, srs, gpu_mtx, gpu_index)
}

/// Split form of [`generate_groth16_proof`], part 1, with a lock handle and
/// any device (19 arguments). Returns the pending handle; see
/// [`start_groth16_proofs`]. Panics as [`generate_groth16_proof`]. With the
/// `curio-fork` feature it takes Curio's fork's 20 arguments instead (the
/// device too, as [`start_groth16_proof_on_gpu`]).
#[cfg(not(feature = "curio-fork"))]
#[allow(clippy::too_many_arguments)]
pub fn start_groth16_proof<S, D>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    srs: &SRS,
    gpu_mtx: *mut c_void,
) -> *mut c_void {
    start_groth16_proof_on_gpu(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
        srs,
        gpu_mtx,
        -1,
    )
}

/// Curio's fork's signature of the split form's part 1 (the `curio-fork`
/// feature; what Curio's bellperson calls): the arguments of
/// [`start_groth16_proof_on_gpu`], which this is. Returns the pending handle
/// for [`finish_groth16_proof`](super::finish_groth16_proof) or
/// [`drop_pending_proof`](super::drop_pending_proof). It returns later than
/// the fork's: see **Timing** at [`start_groth16_proof_on_gpu`].
#[cfg(feature = "curio-fork")]
#[allow(clippy::too_many_arguments)]
pub fn start_groth16_proof<S, D>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> *mut c_void {
    start_groth16_proof_on_gpu(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
        srs,
        gpu_mtx,
        gpu_index,
    )
}

/// [`start_groth16_proof`] with an explicit device (`gpu_index` as in
/// [`generate_groth16_proofs_on_gpu`]).
///
/// **Timing** (every start function). Start returns once the call's device work
/// and its CPU-side G2 MSMs of B′ are done; the lock is released before it
/// waits for the G2 MSMs, so other calls use the GPU meanwhile, and the finish
/// only blinds (a few point multiplications per circuit). Curio's fork returns
/// earlier: once its GPU work is done and its lock released, its CPU G2 MSM
/// still running on a thread that its finish joins; its caller's thread is free
/// for that time. With `SUPRASEAL_C2_G2_MSM=gpu` (or `auto` choosing the
/// device) the G2 MSMs run on the device under the compute lock and no CPU work
/// is left when the GPU work ends.
#[allow(clippy::too_many_arguments)]
pub fn start_groth16_proof_on_gpu<S, D>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> *mut c_void {
    let provers = assignments_from_parts(
        ntt_a_scalars,
        ntt_b_scalars,
        ntt_c_scalars,
        ntt_scalars_actual_size,
        input_assignments,
        aux_assignments,
        input_assignments_size,
        aux_assignments_size,
        a_aux_density_bv,
        b_g1_input_density_bv,
        b_g1_aux_density_bv,
        a_aux_total_density,
        b_g1_input_total_density,
        b_g1_aux_total_density,
        num_circuits,
        r_s,
        s_s,
    );
    start_groth16_proofs(&provers, r_s, s_s, srs, gpu_mtx, gpu_index)
}

