//! The cost of the `SUPRASEAL_C2_VERIFY` self-check per proof, by the number
//! of inputs (the `ic` bases, the constant one included), which is all it
//! depends on: one MSM over the inputs, three Miller loops and one final
//! exponentiation, whatever the domain. 2 and 3 inputs are the MiMC and
//! SHA-256 test circuits, 21 the synthetic 2^D shapes (`bench --shape 2^24`),
//! 328 one porep-32g partition. The key and proof are random points: the
//! check computes the whole equation whether or not it holds. Also the
//! one-time preparation of a key. Run:
//! `cargo bench -p supraseal-c2-cli --bench verify`.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use criterion::{criterion_group, criterion_main, Criterion};
use ff::Field;
use group::{Curve, Group};
use rand::SeedableRng;

use supraseal_c2::pipeline::verify::{PreparedKey, ProofPoints};
use supraseal_c2::Srs;

fn bench(c: &mut Criterion) {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(0x5eed);
    let mut g1 = || G1Projective::random(&mut rng).to_affine();
    let (a, c1, alpha, beta, delta) = (g1(), g1(), g1(), g1(), g1());
    let ic_all: Vec<G1Affine> = (0..328).map(|_| g1()).collect();
    let mut g2 = || G2Projective::random(&mut rng).to_affine();
    let (b, beta2, gamma2, delta2): (G2Affine, G2Affine, G2Affine, G2Affine) = (g2(), g2(), g2(), g2());
    let proof = ProofPoints { a, b, c: c1 };
    let mut g = c.benchmark_group("verify_one_proof");
    for inputs in [2usize, 3, 21, 328] {
        let key = Srs::from_parts("random".into(), alpha, beta, beta2, delta, delta2, vec![alpha], vec![], vec![], vec![], vec![])
            .with_verifying_key(gamma2, ic_all[..inputs].to_vec());
        let pvk = PreparedKey::new(&key).unwrap();
        let public: Vec<Scalar> = (1..inputs).map(|_| Scalar::random(&mut rand::thread_rng())).collect();
        g.bench_function(format!("{inputs} inputs"), |bch| bch.iter(|| pvk.verifies(&proof, &public)));
        if inputs == 328 {
            g.bench_function("prepare the key (once per key), 328 inputs", |bch| bch.iter(|| PreparedKey::new(&key).unwrap()));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
