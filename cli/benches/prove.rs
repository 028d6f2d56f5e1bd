//! Whole-proof CPU benchmark: this library (synthesis + proving through the C
//! ABI) against bellperson's own CPU prover (`create_random_proof`, which also
//! synthesizes) on the same SHA-256 circuit and the same params file, at
//! about 2^16 and 2^18 constraints. Parameters are generated once and cached
//! (see `params::cache_dir`). Run: `cargo bench -p supraseal-c2-cli --bench prove`.

use std::fs::File;
use std::io::BufReader;

use bellperson::groth16::{create_random_proof, Parameters};
use blstrs::{Bls12, Scalar};
use criterion::{criterion_group, criterion_main, Criterion};
use ff::Field;
use rand::SeedableRng;

use supraseal_c2_cli::circuits::{Instance, Kind};
use supraseal_c2_cli::collector::Witness;
use supraseal_c2_cli::ffi::{self, Params};
use supraseal_c2_cli::{kit, params};

fn bench(c: &mut Criterion) {
    let sizes: Vec<u32> = std::env::var("BENCH_LOG_CONSTRAINTS")
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|_| vec![16, 18]);
    for k in sizes {
        let keys = kit::keys(&params::cache_dir(), Kind::Sha256, k).expect("params");
        let srs = Params::open(&keys.path, true).expect("create_SRS");
        let bp: Parameters<Bls12> =
            Parameters::read(BufReader::new(File::open(&keys.path).unwrap()), false).expect("bellperson params");
        let shape = Instance::shape(Kind::Sha256, k);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(k as u64);
        let (inst, inputs) = shape.with_random_witness(&mut rng);
        let w = Witness::synthesize(inst.clone()).unwrap();
        eprintln!("sha256 k={k}: {} constraints, {} aux", w.num_constraints(), w.aux.len());
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let check = ffi::prove(&srs, std::slice::from_ref(&w), &[r], &[s], std::ptr::null_mut(), -1).unwrap();
        assert!(ffi::verify(&keys.vk, &check[0], &inputs), "benchmarked proof verifies");

        let mut g = c.benchmark_group(format!("prove_sha256_2^{k}"));
        g.sample_size(10);
        g.bench_function("supraseal-c2 (synthesis + prove)", |b| {
            b.iter(|| {
                let w = Witness::synthesize(inst.clone()).unwrap();
                ffi::prove(&srs, std::slice::from_ref(&w), &[r], &[s], std::ptr::null_mut(), -1).unwrap()
            })
        });
        g.bench_function("supraseal-c2 (prove only)", |b| {
            b.iter(|| ffi::prove(&srs, std::slice::from_ref(&w), &[r], &[s], std::ptr::null_mut(), -1).unwrap())
        });
        g.bench_function("bellperson create_random_proof", |b| {
            b.iter(|| create_random_proof::<Bls12, _, _, _>(inst.clone(), &bp, &mut rng).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
