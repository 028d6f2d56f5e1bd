//! Split-MSM preparation (docs/ARCHITECTURE.md §4, the reference's `prep_msm`), written once
//! for every backend.
//!
//! An aux MSM (L, A-aux or B-aux) has one base per *query position* q: every
//! aux variable for L, the variables whose density bit is set for A and B.
//! Real circuits are mostly boolean, so per circuit the positions whose scalar
//! is exactly 1 are marked in a bitmap and summed by batch addition, and a real
//! MSM runs only on the *tail*: positions whose scalar is neither 0 nor 1 in
//! at least one circuit (the union over circuits), compacted. A position in the
//! tail is never in a bitmap, so each base is counted once. The split is taken
//! when the tail is at most half the positions; otherwise the plan is a plain
//! MSM over all positions. Both give the same sum. Tests may take the split
//! whatever the tail ([`SplitWhen::Always`]): a random witness's plans then
//! have tails, which a boolean one's (SHA-256) lack.
//!
//! The work runs in parallel over word-aligned chunks of variables (the
//! reference used one thread per circuit, which made it the critical path).

use blstrs::Scalar;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::assignment::Density;

/// Variables per parallel task (a multiple of 64, so chunks are word aligned
/// in the density vector).
const CHUNK_VARS: usize = 1 << 14;

/// Which aux variables feed an MSM, in base order.
#[derive(Clone, Copy, Debug)]
pub enum Query<'a> {
    /// Every aux variable (L).
    Full { vars: usize },
    /// Only variables with their bit set (A-aux, B-aux).
    Dense(Density<'a>),
}

impl Query<'_> {
    /// Number of aux variables the query ranges over.
    pub fn vars(&self) -> usize {
        match self {
            Query::Full { vars } => *vars,
            Query::Dense(d) => d.len,
        }
    }
    /// Number of bases (query positions).
    pub fn positions(&self) -> usize {
        match self {
            Query::Full { vars } => *vars,
            Query::Dense(d) => d.popcount,
        }
    }
    #[inline]
    fn selects(&self, j: usize) -> bool {
        match self {
            Query::Full { .. } => true,
            Query::Dense(d) => d.get(j),
        }
    }
}

/// How one aux MSM is computed for every circuit of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MsmPlan {
    /// Σ_{q in ones[c]} base[q] + Σ_t aux[c][tail_vars[t]]·base[tail[t]].
    Split {
        /// Per circuit: bit q set when the scalar at position q is 1 and q is not in the tail.
        ones: Vec<Vec<u64>>,
        /// Positions (base indices) of the tail, ascending.
        tail: Vec<u32>,
        /// The aux variable at each tail position, shared by every circuit:
        /// the tail's scalars are read from the witness when its MSM runs
        /// ([`MsmPlan::tail_scalars_all`]), not copied per circuit here (a
        /// porep-32g circuit's copies were ~0.3 GiB of host memory, held
        /// for the whole call).
        tail_vars: Vec<u32>,
    },
    /// Σ_q scalars[c][q]·base[q]: the gathered scalars of each circuit.
    Plain { scalars: Vec<Vec<Scalar>> },
}

impl MsmPlan {
    /// The scalars of one circuit's tail (`aux`: its aux vector), in tail
    /// order; empty for a plain plan.
    #[cfg(any(test, feature = "tools"))]
    pub fn tail_scalars(&self, aux: &[Scalar]) -> Vec<Scalar> {
        match self {
            MsmPlan::Split { tail_vars, .. } => tail_vars.iter().map(|&j| aux[j as usize]).collect(),
            MsmPlan::Plain { .. } => Vec::new(),
        }
    }

    /// [`MsmPlan::tail_scalars`] of every circuit (`aux`: the circuits' aux
    /// vectors), gathered in pieces of the tail (about
    /// [`crate::threads::cpu_threads`] pieces in all, at least one per
    /// circuit) on at most that many plain threads: it runs under the
    /// compute lock ([`crate::threads::on_plain_threads`]), and one
    /// porep-32g circuit's gather on one thread (random reads over its
    /// 4 GiB aux vector) took ~0.2 s of the hold on the H200.
    pub fn tail_scalars_all(&self, aux: &[&[Scalar]]) -> Vec<Vec<Scalar>> {
        self.gather_tails(aux, crate::threads::cpu_threads(), 1 << 16)
    }

    /// [`MsmPlan::tail_scalars_all`] in about `pieces` pieces of at least
    /// `min_piece` scalars (each circuit cut into the same number).
    fn gather_tails(&self, aux: &[&[Scalar]], pieces: usize, min_piece: usize) -> Vec<Vec<Scalar>> {
        let MsmPlan::Split { tail_vars, .. } = self else {
            return aux.iter().map(|_| Vec::new()).collect();
        };
        let len = tail_vars.len();
        let per = len.div_ceil((pieces / aux.len().max(1)).max(1)).max(min_piece).max(1);
        let mut out: Vec<Vec<Scalar>> = aux.iter().map(|_| Vec::with_capacity(len)).collect();
        let mut tasks: Vec<crate::threads::Task<'_>> = Vec::new();
        for (o, a) in out.iter_mut().zip(aux) {
            for (dst, vars) in o.spare_capacity_mut()[..len].chunks_mut(per).zip(tail_vars.chunks(per)) {
                tasks.push(Box::new(move || {
                    for (d, &j) in dst.iter_mut().zip(vars) {
                        d.write(a[j as usize]);
                    }
                }));
            }
        }
        crate::threads::on_plain_threads(tasks);
        for o in &mut out {
            // SAFETY: the pieces cover 0..len of every vector's spare
            // capacity, and each task wrote every element of its piece
            // (`on_plain_threads` returns once all have run; a panic in one
            // is resumed above, before this point).
            unsafe { o.set_len(len) };
        }
        out
    }
}

#[inline]
fn limbs(s: &Scalar) -> [u64; 4] {
    blst::blst_fr::from(*s).l
}

const ONE: [u64; 4] = {
    // Montgomery form of 1 (R mod r), little-endian limbs; checked by a test.
    [0x0000_0001_ffff_fffe, 0x5884_b7fa_0003_4802, 0x998c_4fef_ecbc_4ff5, 0x1824_b159_acc5_056f]
};

#[inline]
fn kind(s: &Scalar) -> u8 {
    let l = limbs(s);
    if l == [0; 4] {
        0
    } else if l == ONE {
        1
    } else {
        2
    }
}

/// [`prepare_when`] with the split taken where the tail is at most half
/// the positions, as proving calls take it (tests and benches).
#[cfg(any(test, feature = "tools"))]
pub fn prepare(query: Query<'_>, aux: &[&[Scalar]]) -> MsmPlan {
    prepare_when(query, aux, SplitWhen::TailAtMostHalf)
}

/// When [`prepare_when`] takes the split plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitWhen {
    /// The tail is at most half the positions (proving calls).
    TailAtMostHalf,
    /// Whatever the tail (tests: `SUPRASEAL_C2_SPLIT_ALWAYS`).
    Always,
}

/// Builds the plan for `query` over the aux vectors of all circuits (equal
/// lengths, `query.vars()` elements each), in one pass over the scalars:
/// each chunk's first position comes from the query alone (its selected
/// variables), so the bitmaps and tails are written as the scalars are
/// read, and `when` and the tail's length then decide between the split
/// and the plain plan. Under `TailAtMostHalf`, once the tails found pass
/// half the positions the plan is plain whatever the rest holds, and the
/// remaining chunks are skipped; a plain plan drops the pass's bitmaps and
/// tails (their tails about half the positions, 8 bytes each) before it
/// gathers the scalars.
pub fn prepare_when(query: Query<'_>, aux: &[&[Scalar]], when: SplitWhen) -> MsmPlan {
    let vars = query.vars();
    let chunks = vars.div_ceil(CHUNK_VARS);
    let range = |ci: usize| ci * CHUNK_VARS..((ci + 1) * CHUNK_VARS).min(vars);
    let in_tail = |j: usize| aux.iter().any(|a| kind(&a[j]) == 2);

    // Positions of each chunk (no scalar is read), and each chunk's first.
    let counts: Vec<usize> = (0..chunks).into_par_iter().map(|ci| range(ci).filter(|&j| query.selects(j)).count()).collect();
    let positions: usize = counts.iter().sum();
    debug_assert_eq!(positions, query.positions());
    let q_start: Vec<usize> = counts
        .iter()
        .scan(0, |acc, &c| {
            let s = *acc;
            *acc += c;
            Some(s)
        })
        .collect();

    // Bitmaps (atomic words, since a chunk's positions need not be word
    // aligned) and per-chunk tails, concatenated in order.
    let words = positions.div_ceil(64);
    let ones: Vec<Vec<AtomicU64>> = aux.iter().map(|_| (0..words).map(|_| AtomicU64::new(0)).collect()).collect();
    let tail_so_far = AtomicUsize::new(0);
    let plain = || when == SplitWhen::TailAtMostHalf && tail_so_far.load(Ordering::Relaxed) * 2 > positions;
    let parts: Vec<(Vec<u32>, Vec<u32>)> = (0..chunks)
        .into_par_iter()
        .map(|ci| {
            let (mut tail, mut tail_vars) = (Vec::new(), Vec::new());
            if plain() {
                return (tail, tail_vars);
            }
            let mut q = q_start[ci];
            // Current word and its pending bits per circuit, flushed on word change.
            let mut word = q / 64;
            let mut pending = vec![0u64; aux.len()];
            let flush = |word: usize, pending: &mut [u64]| {
                for (c, bits) in pending.iter_mut().enumerate() {
                    if *bits != 0 {
                        ones[c][word].fetch_or(*bits, Ordering::Relaxed);
                        *bits = 0;
                    }
                }
            };
            for j in range(ci).filter(|&j| query.selects(j)) {
                if q / 64 != word {
                    flush(word, &mut pending);
                    word = q / 64;
                }
                if in_tail(j) {
                    tail.push(q as u32);
                    tail_vars.push(j as u32);
                } else {
                    for (c, a) in aux.iter().enumerate() {
                        if kind(&a[j]) == 1 {
                            pending[c] |= 1 << (q % 64);
                        }
                    }
                }
                q += 1;
            }
            if word < words {
                flush(word, &mut pending);
            }
            tail_so_far.fetch_add(tail.len(), Ordering::Relaxed);
            (tail, tail_vars)
        })
        .collect();

    if plain() {
        drop((ones, parts));
        // Plain path: gather each circuit's scalars in position order.
        let scalars = aux
            .par_iter()
            .map(|a| match query {
                Query::Full { .. } => a.to_vec(),
                Query::Dense(_) => (0..vars).filter(|&j| query.selects(j)).map(|j| a[j]).collect(),
            })
            .collect();
        return MsmPlan::Plain { scalars };
    }
    let tail_len = tail_so_far.into_inner();
    let (mut tail, mut tail_vars) = (Vec::with_capacity(tail_len), Vec::with_capacity(tail_len));
    for (t, v) in parts {
        tail.extend(t);
        tail_vars.extend(v);
    }
    let ones = ones.into_iter().map(|v| v.into_iter().map(AtomicU64::into_inner).collect()).collect();
    MsmPlan::Split { ones, tail, tail_vars }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;

    #[test]
    fn montgomery_one_constant_matches_blstrs() {
        assert_eq!(limbs(&Scalar::ONE), ONE);
        assert_eq!(kind(&Scalar::ZERO), 0);
        assert_eq!(kind(&Scalar::ONE), 1);
        assert_eq!(kind(&Scalar::from(2u64)), 2);
    }

    fn bit(words: &[u64], i: usize) -> bool {
        (words[i / 64] >> (i % 64)) & 1 == 1
    }

    #[test]
    fn split_plan_partitions_positions_between_bitmap_and_tail() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let vars = 3 * CHUNK_VARS + 77;
        let pick = |rng: &mut rand_chacha::ChaCha8Rng| match rng.gen_range(0..10) {
            0..=4 => Scalar::ZERO,
            5..=8 => Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        };
        let aux: Vec<Vec<Scalar>> = (0..3).map(|_| (0..vars).map(|_| pick(&mut rng)).collect()).collect();
        let density: Vec<u64> = (0..vars.div_ceil(64)).map(|_| rng.gen()).collect();
        let popcount = (0..vars).filter(|&j| bit(&density, j)).count();
        let refs: Vec<&[Scalar]> = aux.iter().map(|v| v.as_slice()).collect();
        let query = Query::Dense(Density { words: &density, len: vars, popcount });
        let plan = prepare(query, &refs);
        let MsmPlan::Split { ones, tail, .. } = &plan else {
            panic!("expected the split path for a mostly boolean witness");
        };
        let selected: Vec<usize> = (0..vars).filter(|&j| bit(&density, j)).collect();
        let want_tail: Vec<u32> = (0..popcount)
            .filter(|&q| refs.iter().any(|a| kind(&a[selected[q]]) == 2))
            .map(|q| q as u32)
            .collect();
        assert_eq!(*tail, want_tail);
        for c in 0..3 {
            for (q, &j) in selected.iter().enumerate() {
                let in_tail = want_tail.binary_search(&(q as u32)).is_ok();
                assert_eq!(bit(&ones[c], q), !in_tail && aux[c][j] == Scalar::ONE, "c {c} q {q}");
            }
            let want: Vec<Scalar> = want_tail.iter().map(|&q| aux[c][selected[q as usize]]).collect();
            assert_eq!(plan.tail_scalars(&aux[c]), want);
        }
        // Gathered in pieces on plain threads: the same vectors, whatever the cut.
        let each: Vec<Vec<Scalar>> = refs.iter().map(|a| plan.tail_scalars(a)).collect();
        for (pieces, min_piece) in [(1, 1), (3, 1), (16, 2), (64, 1), (5, 1 << 20)] {
            assert_eq!(plan.gather_tails(&refs, pieces, min_piece), each, "{pieces} pieces of at least {min_piece}");
        }
        assert_eq!(plan.tail_scalars_all(&refs), each);
    }

    /// The split is taken while the tail is at most half the positions:
    /// exactly half (spread over chunks) splits, one more is plain.
    #[test]
    fn the_plan_is_split_up_to_half_the_positions_in_the_tail() {
        let vars = 4 * CHUNK_VARS + 10;
        let two = Scalar::from(2u64);
        for (extra, split) in [(0usize, true), (1, false)] {
            // Every other variable in the tail, from the last chunk backwards, then `extra` more.
            let mut aux = vec![Scalar::ONE; vars];
            let mut left = vars / 2 + extra;
            for j in (0..vars).rev().step_by(2).chain((0..vars).rev().skip(1).step_by(2)) {
                if left == 0 {
                    break;
                }
                aux[j] = two;
                left -= 1;
            }
            let plan = prepare(Query::Full { vars }, &[&aux]);
            match (&plan, split) {
                (MsmPlan::Split { tail, ones, .. }, true) => {
                    assert_eq!(tail.len(), vars / 2);
                    let ones_count: u32 = ones[0].iter().map(|w| w.count_ones()).sum();
                    assert_eq!(ones_count as usize, vars - vars / 2);
                }
                (MsmPlan::Plain { scalars }, false) => assert_eq!(scalars, &vec![aux.clone()]),
                _ => panic!("{} of {vars} positions in the tail: expected split = {split}", vars / 2 + extra),
            }
        }
    }

    #[test]
    fn random_witness_takes_the_plain_path_with_gathered_scalars() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(10);
        let aux: Vec<Scalar> = (0..1000).map(|_| Scalar::random(&mut rng)).collect();
        let plan = prepare(Query::Full { vars: 1000 }, &[&aux]);
        assert_eq!(plan, MsmPlan::Plain { scalars: vec![aux] });
    }

    /// `SplitWhen::Always` splits a random witness: a few ones in the
    /// bitmap, every other position in the tail, with its own variable.
    #[test]
    fn a_random_witness_splits_when_told_to() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let vars = 2 * CHUNK_VARS + 77;
        let mut aux: Vec<Scalar> = (0..vars).map(|_| Scalar::random(&mut rng)).collect();
        let ones = [3, CHUNK_VARS + 5, vars - 1];
        for &j in &ones {
            aux[j] = Scalar::ONE;
        }
        aux[7] = Scalar::ZERO;
        match prepare_when(Query::Full { vars }, &[&aux], SplitWhen::Always) {
            MsmPlan::Split { ones: bits, tail, tail_vars } => {
                let set: Vec<usize> = (0..vars).filter(|&q| bit(&bits[0], q)).collect();
                assert_eq!(set, ones);
                let expect: Vec<u32> = (0..vars as u32).filter(|&j| !ones.contains(&(j as usize)) && j != 7).collect();
                assert_eq!(tail, expect);
                assert_eq!(tail_vars, expect);
            }
            plain => panic!("expected a split plan, got {plain:?}"),
        }
    }
}
