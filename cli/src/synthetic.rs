//! Synthetic proving keys and witnesses of a chosen shape, for throughput
//! benchmarks at shapes where generating real parameters with bellperson
//! would take days: a `2^D` domain ([`Shape::new`]) or a 32 GiB sector's
//! partition ([`Shape::porep_32g`], with that circuit's vector lengths and
//! densities). The work per proof is the real work (same NTTs, MSM sizes and
//! split-MSM plans); the proofs do not verify, because the points are not
//! from one trusted setup. Correctness is tested with real keys.
//!
//! The key's points come from one deterministic source ([`key`] in memory,
//! [`write_params`] as a bellperson-layout `.params` file), so a
//! file written with a seed and the in-memory key of that seed hold the same
//! points: distinct (P + i·Q per chunk of 2^14, a fresh random P and Q per
//! chunk) and in the prime-order subgroup.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use supraseal_c2::Srs;

use crate::collector::{BitVec, Witness};

/// How aux values are distributed: parts per million that are 0, that are
/// 1, the rest uniform random field elements (it decides batch additions vs
/// tail MSMs: 1s are summed by batch addition, the rest by the tail MSM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    pub zero_ppm: u32,
    pub one_ppm: u32,
}

impl Mix {
    /// The parts per million that are neither 0 nor 1.
    pub fn other_ppm(&self) -> u32 {
        1_000_000 - self.zero_ppm - self.one_ppm
    }
}

/// The sizes of a synthetic circuit and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// A name for reports (`porep-32g`, `2^24`).
    pub name: String,
    pub log_domain: u32,
    /// Constraints including the per-input ones (`abc_size`).
    pub constraints: usize,
    /// Public inputs, the constant one included (input 0).
    pub num_inputs: usize,
    pub num_aux: usize,
    pub a_aux_popcount: usize,
    pub b_inp_popcount: usize,
    pub b_aux_popcount: usize,
    /// Values of the aux variables whose B-density bit is set (they enter
    /// L, A and B).
    pub mix_b: Mix,
    /// Values of the other aux variables (L and A only).
    pub mix_rest: Mix,
}

impl Shape {
    /// A synthetic shape with a 2^`log_domain` domain (log_domain ≥ 10):
    /// constraints the domain minus 1/64, aux the domain minus 1/32, 21
    /// inputs all in B, A-density 90 % and B-density 20 % of the aux
    /// variables, aux values 50 % zero, 30 % one, 20 % other.
    pub fn new(log_domain: u32) -> Shape {
        let n = 1usize << log_domain;
        let num_aux = n - n / 32;
        Shape {
            name: format!("2^{log_domain}"),
            log_domain,
            constraints: n - n / 64,
            num_inputs: 21,
            num_aux,
            a_aux_popcount: num_aux / 10 * 9,
            b_inp_popcount: 21,
            b_aux_popcount: num_aux / 5,
            mix_b: Mix { zero_ppm: 500_000, one_ppm: 300_000 },
            mix_rest: Mix { zero_ppm: 500_000, one_ppm: 300_000 },
        }
    }

    /// One partition of a 32 GiB sector's PoRep C2 (10 per sector), with
    /// these vector lengths and densities (Curio's cuzk
    /// measurements, checked against bellperson's generator): 130,278,869
    /// constraints plus 328 input constraints, domain 2^27, 328 inputs,
    /// 130,169,893 aux variables; popcounts A-aux 129,753,292, B-input 1,
    /// B-aux 33,112,281. The params file is 47,373,928,632 bytes.
    ///
    /// The aux value mix is not published. It is measured on filecoin-proofs'
    /// own circuit at the sector size that seals here, 2 KiB (`porep-2k
    /// value-mix`, notes/VALUE_MIX.md): aux values with the B-density bit are
    /// 47.7 % zero, 47.6 % one, 4.64 % other; the rest 52.3 % zero, 47.1 %
    /// one, 0.60 % other (over all aux: 1.63 % other). The 2 KiB partition
    /// has the same A and B densities as this shape (99.6 % and 25.5 %), and
    /// the same mix is assumed here.
    pub fn porep_32g() -> Shape {
        Shape {
            name: "porep-32g".into(),
            log_domain: 27,
            constraints: 130_278_869 + 328,
            num_inputs: 328,
            num_aux: 130_169_893,
            a_aux_popcount: 129_753_292,
            b_inp_popcount: 1,
            b_aux_popcount: 33_112_281,
            mix_b: Mix { zero_ppm: 477_330, one_ppm: 476_240 },
            mix_rest: Mix { zero_ppm: 523_080, one_ppm: 470_930 },
        }
    }

    /// A shape by name: `porep-32g`, or `2^D` / `D` for [`Shape::new`].
    pub fn named(name: &str) -> Option<Shape> {
        if name == "porep-32g" {
            return Some(Shape::porep_32g());
        }
        let d: u32 = name.strip_prefix("2^").unwrap_or(name).parse().ok()?;
        (10..=27).contains(&d).then(|| Shape::new(d))
    }

    /// Points of each vector: (ic, h, l, a, b_g1 = b_g2).
    pub fn counts(&self) -> [usize; 5] {
        let n = 1usize << self.log_domain;
        [
            self.num_inputs,
            n - 1,
            self.num_aux,
            self.num_inputs + self.a_aux_popcount,
            self.b_inp_popcount + self.b_aux_popcount,
        ]
    }

    /// Host memory the key takes, in bytes: its query vectors as the library
    /// holds them (h, l, a, b_g1: 96-byte G1 points; b_g2: 192-byte G2
    /// points), built in memory or loaded from its params file (the load
    /// drops ic; the file is read in bounded pieces).
    pub fn key_bytes(&self) -> u64 {
        let [_, h, l, a, b] = self.counts().map(|c| c as u64);
        (h + l + a + b) * 96 + b * 192
    }

    /// Host memory one witness takes, in bytes: a, b and c (one 32-byte
    /// scalar per constraint each), the inputs and aux values (32 bytes
    /// each) and the three density bit vectors ([`witness`]).
    pub fn witness_bytes(&self) -> u64 {
        let (constraints, inputs, aux) = (self.constraints as u64, self.num_inputs as u64, self.num_aux as u64);
        32 * (3 * constraints + inputs + aux) + 8 * (2 * aux.div_ceil(64) + inputs.div_ceil(64))
    }

    /// Host memory a proof on the CPU backend adds while it computes the
    /// quotient: a, b and c padded to the domain, 32 bytes per element
    /// (`CpuCompute::quotient`). The GPU backend computes it on the device.
    pub fn cpu_quotient_bytes(&self) -> u64 {
        (3 * 32) << self.log_domain
    }

    /// Size of the params file in bytes (the layout of [`write_params`]).
    pub fn params_bytes(&self) -> u64 {
        let [ic, h, l, a, b] = self.counts().map(|c| c as u64);
        3 * 96 + 3 * 192 + 6 * 4 + (ic + h + l + a + b) * 96 + b * 192
    }
}

/// A bit vector of `len` bits with exactly `popcount` ones, evenly spread
/// (bit ⌊k·len/popcount⌋ for k < popcount; the first bit is always set).
fn spread(len: usize, popcount: usize) -> BitVec {
    let mut words = vec![0u64; len.div_ceil(64)];
    for k in 0..popcount {
        let i = (k as u128 * len as u128 / popcount as u128) as usize;
        words[i / 64] |= 1 << (i % 64);
    }
    BitVec { words, len }
}

const CHUNK: usize = 1 << 14;

/// Chunk `c` of a section's points (deterministic in `seed` and `c`).
fn chunk<P: Group + Curve<AffineRepr = A>, A: PrimeCurveAffine + Copy>(seed: u64, c: usize, len: usize) -> Vec<A> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(1 << 20).wrapping_add(c as u64));
    let step = P::random(&mut rng);
    let mut p = P::random(&mut rng);
    let proj: Vec<P> = (0..CHUNK.min(len - c * CHUNK))
        .map(|_| {
            p += step;
            p
        })
        .collect();
    let mut out = vec![A::identity(); proj.len()];
    P::batch_normalize(&proj, &mut out);
    out
}

/// All `len` points of a section, in memory. Filled in place: a collect of
/// per-chunk vectors would hold the section twice at its end (rayon gathers
/// an unindexed iterator's pieces before copying them into one vector).
fn points<P: Group + Curve<AffineRepr = A> + Send + Sync, A: PrimeCurveAffine + Send + Sync + Copy>(
    len: usize,
    seed: u64,
) -> Vec<A> {
    let mut out = vec![A::identity(); len];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, dst)| dst.copy_from_slice(&chunk::<P, A>(seed, c, len)));
    out
}

/// The seeds of the key's sections, derived from the key's seed.
struct Seeds(u64);

impl Seeds {
    fn of(&self, section: u64) -> u64 {
        self.0.wrapping_add(section)
    }
}

/// A synthetic witness of `shape`: dense random a, b, c; aux values drawn
/// from `shape.mix_b` where the B-density bit is set and from
/// `shape.mix_rest` elsewhere; exact popcounts ([`spread`]); input 0 is the
/// constant one.
pub fn witness(shape: &Shape, seed: u64) -> Witness {
    // Every vector is filled in place, chunk by chunk (as `points`).
    let full = |len: usize, seed: u64| -> Vec<Scalar> {
        let mut out = vec![Scalar::ZERO; len];
        out.par_chunks_mut(1 << 16).enumerate().for_each(|(c, dst)| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(1 << 20) + c as u64);
            dst.iter_mut().for_each(|v| *v = Scalar::random(&mut rng));
        });
        out
    };
    let mut inputs = full(shape.num_inputs, seed ^ 1);
    inputs[0] = Scalar::ONE;
    let b_aux = spread(shape.num_aux, shape.b_aux_popcount);
    let b_words = &b_aux.words;
    let mut aux = vec![Scalar::ZERO; shape.num_aux];
    aux.par_chunks_mut(1 << 16).enumerate().for_each(|(c, dst)| {
        let mut rng = ChaCha20Rng::seed_from_u64(seed.wrapping_mul(1 << 20) + 7 + c as u64);
        for (j, v) in ((c << 16)..).zip(dst.iter_mut()) {
            let mix = if b_words[j / 64] >> (j % 64) & 1 == 1 { shape.mix_b } else { shape.mix_rest };
            let x = rng.gen_range(0..1_000_000);
            *v = if x < mix.zero_ppm {
                Scalar::ZERO
            } else if x < mix.zero_ppm + mix.one_ppm {
                Scalar::ONE
            } else {
                Scalar::random(&mut rng)
            };
        }
    });
    Witness {
        a_aux_density: spread(shape.num_aux, shape.a_aux_popcount),
        b_inp_density: spread(shape.num_inputs, shape.b_inp_popcount),
        b_aux_density: b_aux,
        a: full(shape.constraints, seed ^ 2),
        b: full(shape.constraints, seed ^ 3),
        c: full(shape.constraints, seed ^ 4),
        inputs,
        aux,
    }
}

/// The synthetic key of `shape` in memory: the points [`write_params`]
/// writes for the same seed.
pub fn key(shape: &Shape, seed: u64) -> Arc<Srs> {
    let s = Seeds(seed);
    let [_, h, l, a, b] = shape.counts();
    let g1 = |len: usize, k: u64| points::<G1Projective, G1Affine>(len, s.of(k));
    let g2 = |len: usize, k: u64| points::<G2Projective, G2Affine>(len, s.of(k));
    Arc::new(Srs::from_parts(
        PathBuf::from(format!("<synthetic {}>", shape.name)),
        g1(1, 1)[0],
        g1(1, 2)[0],
        g2(1, 3)[0],
        g1(1, 4)[0],
        g2(1, 5)[0],
        g1(h, 10),
        g1(l, 11),
        g1(a, 12),
        g1(b, 13),
        g2(b, 14),
    ))
}

/// Chunks generated in parallel before they are written in order.
const WINDOW: usize = 256;

/// Streams one section's points (uncompressed encodings) to `out`.
fn write_section<P, A, const N: usize>(
    out: &mut impl Write,
    len: usize,
    seed: u64,
    encode: fn(&A) -> [u8; N],
    progress: &mut impl FnMut(usize),
) -> Result<()>
where
    P: Group + Curve<AffineRepr = A> + Send + Sync,
    A: PrimeCurveAffine + Send + Sync + Copy,
{
    let chunks = len.div_ceil(CHUNK);
    for first in (0..chunks).step_by(WINDOW) {
        let bytes: Vec<Vec<u8>> = (first..chunks.min(first + WINDOW))
            .into_par_iter()
            .map(|c| chunk::<P, A>(seed, c, len).iter().flat_map(encode).collect())
            .collect();
        for b in &bytes {
            out.write_all(b)?;
            progress(b.len() / N);
        }
    }
    Ok(())
}

/// Writes the synthetic key of `shape` and `seed` as a params file at
/// `path` (bellperson's layout: alpha_g1, beta_g1, beta_g2,
/// gamma_g2, delta_g1, delta_g2, then ic, h, l, a, b_g1, b_g2 with big-endian
/// u32 counts; uncompressed points). Streams to disk (memory stays at a
/// window of chunks, ~400 MB for G1) through a temporary file renamed at the
/// end. Returns the bytes written.
pub fn write_params(shape: &Shape, seed: u64, path: &Path, mut progress: impl FnMut(&str, usize)) -> Result<u64> {
    // The rename at the end replaces whatever `path` names: refuse anything
    // but a regular file (a device node, a FIFO, a symlink, a directory)
    // before minutes of work.
    if let Ok(m) = std::fs::symlink_metadata(path) {
        ensure!(
            m.file_type().is_file(),
            "{} exists and is not a regular file ({:?}); give a new path or an existing params file to replace",
            path.display(),
            m.file_type()
        );
    }
    let s = Seeds(seed);
    let name = path.file_name().with_context(|| format!("{}: no file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    /// Removes the temporary file unless it was renamed into place.
    struct Tmp<'a>(&'a Path, bool);
    impl Drop for Tmp<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
            }
        }
    }
    let file = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut guard = Tmp(&tmp, false);
    let mut out = std::io::BufWriter::with_capacity(8 << 20, file);
    let g1 = |k: u64| points::<G1Projective, G1Affine>(1, s.of(k))[0].to_uncompressed();
    let g2 = |k: u64| points::<G2Projective, G2Affine>(1, s.of(k))[0].to_uncompressed();
    for p in [&g1(1)[..], &g1(2), &g2(3), &g2(6), &g1(4), &g2(5)] {
        out.write_all(p)?;
    }
    let [ic, h, l, a, b] = shape.counts();
    let enc1: fn(&G1Affine) -> [u8; 96] = |p| p.to_uncompressed();
    let enc2: fn(&G2Affine) -> [u8; 192] = |p| p.to_uncompressed();
    for (name, len, k) in [("ic", ic, 9), ("h", h, 10), ("l", l, 11), ("a", a, 12), ("b_g1", b, 13)] {
        ensure!(len <= u32::MAX as usize, "{name}: {len} points do not fit the file's u32 count");
        out.write_all(&(len as u32).to_be_bytes())?;
        write_section::<G1Projective, G1Affine, 96>(&mut out, len, s.of(k), enc1, &mut |n| progress(name, n))?;
    }
    out.write_all(&(b as u32).to_be_bytes())?;
    write_section::<G2Projective, G2Affine, 192>(&mut out, b, s.of(14), enc2, &mut |n| progress("b_g2", n))?;
    let file = out.into_inner().map_err(|e| e.into_error()).context("flushing the params file")?;
    file.sync_all().ok();
    let written = file.metadata()?.len();
    ensure!(written == shape.params_bytes(), "wrote {written} bytes, the shape needs {}", shape.params_bytes());
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    guard.1 = true;
    Ok(written)
}

/// The first 96 bytes of the params file of `seed` (alpha_g1, uncompressed):
/// what the bench compares to tell whether a file was written for its seed.
pub fn alpha_g1_bytes(seed: u64) -> [u8; 96] {
    points::<G1Projective, G1Affine>(1, Seeds(seed).of(1))[0].to_uncompressed()
}

/// Checks that the params file at `path` was written by [`write_params`]
/// for `shape` and `seed` (its size and its first point).
pub fn check_params_file(shape: &Shape, seed: u64, path: &Path) -> Result<()> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata()?.len();
    ensure!(
        len == shape.params_bytes(),
        "{} has {len} bytes; a {} params file has {} (written by `params synth` for another shape?)",
        path.display(),
        shape.name,
        shape.params_bytes()
    );
    let mut head = [0u8; 96];
    f.read_exact(&mut head)?;
    ensure!(
        head == alpha_g1_bytes(seed),
        "{} was not written for --seed {seed} (its alpha_g1 differs): give the seed `params synth` had",
        path.display()
    );
    Ok(())
}

/// `supraseal-c2 params synth`: writes the file and reports its size and
/// the write rate.
pub fn synth(shape: &Shape, seed: u64, path: &Path) -> Result<()> {
    let t = Instant::now();
    eprintln!(
        "writing the synthetic {} key ({} bytes) to {} ...",
        shape.name,
        shape.params_bytes(),
        path.display()
    );
    let total: usize = shape.counts().iter().sum::<usize>() + shape.counts()[4];
    let (mut done, mut last) = (0usize, Instant::now());
    let bytes = write_params(shape, seed, path, |section, n| {
        done += n;
        if last.elapsed().as_secs() >= 10 {
            last = Instant::now();
            eprintln!("  {section}: {:.0} % of the points after {:.0} s", 100.0 * done as f64 / total as f64, t.elapsed().as_secs_f64());
        }
    })?;
    let secs = t.elapsed().as_secs_f64();
    println!("wrote {} ({bytes} bytes, {}) in {secs:.1} s ({})", path.display(), crate::units::bytes(bytes), crate::units::per_second(bytes, secs));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porep_32g_has_the_published_sizes() {
        let s = Shape::porep_32g();
        assert_eq!(s.counts(), [328, (1 << 27) - 1, 130_169_893, 129_753_620, 33_112_282]);
        assert_eq!(s.params_bytes(), 47_373_928_632);
        // The memory `bench --help` and the README state (GiB).
        let gib = |b: u64| format!("{:.1}", b as f64 / (1u64 << 30) as f64);
        assert_eq!((gib(s.key_bytes()), gib(s.witness_bytes()), gib(s.cpu_quotient_bytes())), ("44.1".into(), "15.6".into(), "12.0".into()));
        assert_eq!(s.params_bytes() - s.key_bytes(), 3 * 96 + 3 * 192 + 6 * 4 + 328 * 96, "the file's points minus ic and the single points");
        assert_eq!(Shape::named("porep-32g"), Some(s));
        assert_eq!(Shape::named("2^20"), Some(Shape::new(20)));
        assert_eq!(Shape::named("9"), None);
    }

    #[test]
    fn the_witness_follows_the_shapes_mix_per_density_class() {
        let mut shape = Shape::new(16);
        shape.mix_b = Mix { zero_ppm: 0, one_ppm: 0 };
        shape.mix_rest = Mix { zero_ppm: 1_000_000, one_ppm: 0 };
        let w = witness(&shape, 9);
        for (j, v) in w.aux.iter().enumerate() {
            let in_b = w.b_aux_density.words[j / 64] >> (j % 64) & 1 == 1;
            assert_eq!(bool::from(v.is_zero()), !in_b, "aux {j}");
        }
        let porep = Shape::porep_32g();
        assert_eq!(porep.mix_b.other_ppm(), 46_430);
        assert_eq!(porep.mix_rest.other_ppm(), 5_990);
    }

    #[test]
    fn spread_has_the_exact_popcount() {
        for (len, pop) in [(328, 1), (130_169, 129_753), (1000, 254), (64, 64), (70, 0)] {
            let v = spread(len, pop);
            assert_eq!(v.popcount(), pop, "len {len}");
            assert_eq!(v.words.len(), len.div_ceil(64));
        }
        assert_eq!(spread(328, 1).words[0], 1, "the constant one is the B input");
    }
}
