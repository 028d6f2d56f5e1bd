//! The split-MSM path (batch addition of the ones + MSM of the compacted
//! tail) gives the same sums as the plain MSM, on real witnesses: SHA-256
//! (mostly bits: split taken) and MiMC (random: plain taken, or split when
//! told to: every position but a few in the tail).

mod common;

use blstrs::{G1Affine, G1Projective, Scalar};

use supraseal_c2::assignment::Density;
use supraseal_c2::cpu::msm::{self, G1};
use supraseal_c2::groth16::split::{prepare_when, MsmPlan, Query, SplitWhen};
use supraseal_c2::srs::Srs;
use supraseal_c2_cli::circuits::Kind;
use supraseal_c2_cli::collector::BitVec;
use supraseal_c2_cli::kit;

fn plain(bases: &[G1Affine], query: Query<'_>, aux: &[Scalar]) -> G1Projective {
    let scalars: Vec<Scalar> = match query {
        Query::Full { .. } => aux.to_vec(),
        Query::Dense(d) => (0..d.len).filter(|&j| d.get(j)).map(|j| aux[j]).collect(),
    };
    msm::msm::<G1>(bases, &scalars)
}

fn planned(bases: &[G1Affine], plan: &MsmPlan, c: usize, aux: &[Scalar]) -> G1Projective {
    match plan {
        MsmPlan::Split { ones, tail, .. } => {
            let tail_bases: Vec<G1Affine> = tail.iter().map(|&q| bases[q as usize]).collect();
            msm::batch_add::<G1>(bases, &ones[c]) + msm::msm::<G1>(&tail_bases, &plan.tail_scalars(aux))
        }
        MsmPlan::Plain { scalars } => msm::msm::<G1>(bases, &scalars[c]),
    }
}

fn density(b: &BitVec) -> Density<'_> {
    Density { words: &b.words, len: b.len, popcount: b.popcount() }
}

fn check(kind: Kind, k: u32, when: SplitWhen, expect_split: bool) {
    let keys = common::keys(kind, k);
    let srs = Srs::load(&keys.path).unwrap();
    let mut rng = common::rng();
    let batch = kit::witnesses(kind, k, 2, &mut rng).unwrap();
    let aux: Vec<&[Scalar]> = batch.iter().map(|(w, _)| w.aux.as_slice()).collect();
    let w0 = &batch[0].0;
    let inputs = w0.inputs.len();

    let cases = [
        ("L", Query::Full { vars: w0.aux.len() }, srs.l()),
        ("A", Query::Dense(density(&w0.a_aux_density)), &srs.a()[inputs..]),
        ("B", Query::Dense(density(&w0.b_aux_density)), &srs.b_g1()[w0.b_inp_density.popcount()..]),
    ];
    for (name, query, bases) in cases {
        let plan = prepare_when(query, &aux, when);
        assert_eq!(matches!(plan, MsmPlan::Split { .. }), expect_split, "{name} plan for {kind:?}");
        if let MsmPlan::Split { tail, .. } = &plan {
            // SHA-256's aux variables are bits (an empty tail); MiMC's are random.
            assert_eq!(tail.is_empty(), kind == Kind::Sha256, "{name} tail of {} positions for {kind:?}", tail.len());
        }
        for (c, a) in aux.iter().enumerate() {
            assert_eq!(planned(bases, &plan, c, a), plain(bases, query, a), "{name} sum, circuit {c}, {kind:?}");
        }
    }
}

#[test]
fn split_path_equals_plain_msm_on_a_boolean_witness() {
    check(Kind::Sha256, 15, SplitWhen::TailAtMostHalf, true);
}

#[test]
fn random_witness_split_when_told_to_equals_plain_msm() {
    check(Kind::Mimc, 10, SplitWhen::Always, true);
}

#[test]
fn random_witness_takes_the_plain_path() {
    check(Kind::Mimc, 10, SplitWhen::TailAtMostHalf, false);
}
