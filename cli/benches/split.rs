//! The split-MSM preparation (`groth16::split::prepare`, docs/ARCHITECTURE.md
//! §4) on the host: the bitmaps of each circuit's 1 scalars and the tail of
//! positions whose scalar is neither 0 nor 1, over 2^22 positions of L (every
//! aux variable), for 1 and 3 circuits. The scalars are 48 % zero, 47 % one
//! and 5 % random (mostly boolean, as PoRep witnesses are). Run:
//! `cargo bench -p supraseal-c2-cli --bench split`.

use blstrs::Scalar;
use criterion::{criterion_group, criterion_main, Criterion};
use ff::Field;
use rand::{Rng, SeedableRng};

use supraseal_c2::groth16::split::{prepare, Query};

fn bench(c: &mut Criterion) {
    let n = 1usize << 22;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    let aux: Vec<Vec<Scalar>> = (0..3)
        .map(|_| {
            (0..n)
                .map(|_| match rng.gen_range(0..100) {
                    0..=47 => Scalar::ZERO,
                    48..=94 => Scalar::ONE,
                    _ => Scalar::random(&mut rng),
                })
                .collect()
        })
        .collect();
    let mut g = c.benchmark_group("split_prepare_2^22");
    g.sample_size(20);
    for circuits in [1usize, 3] {
        let refs: Vec<&[Scalar]> = aux[..circuits].iter().map(Vec::as_slice).collect();
        g.bench_function(format!("{circuits} circuit(s)"), |b| b.iter(|| prepare(Query::Full { vars: n }, &refs)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
