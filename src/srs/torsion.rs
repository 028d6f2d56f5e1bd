//! Points outside the subgroup, for tests of the check (the batched check's
//! own tests and `tests/srs_errors.rs`, through `srs::subgroup::testing`):
//! a subgroup point plus a point of exact prime order q for each prime q
//! dividing the cofactor. Not a supported API.

use blst::*;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::Group;
use rand_chacha::rand_core::RngCore;

/// (q, #E with every factor q removed) for each prime q dividing G1's cofactor (#E = h·r).
const G1_TORSION: [(&str, &str); 5] = [
    ("3", "8ab05f8bdd54cde190937e76bc3e447cc27c3d6fbd7063fcd104635a790520c0a395554e5c6aaaad955555555558e39"),
    ("b", "3704612471307385e8f4b11c0f6f71e98ebcebf11641bde11e05f8de12635b461258dc05b269c8ff0a941963702343"),
    ("27c1", "4365bf803428bdeec60fd2e926108ec4349c3ed6101355fc141ebb62934a3754bcaa7f4893a24a99528dca02b"),
    ("d1c83", "26b97e14f9a9bfc6a1d68e51940e20533818e49972d05a4b963f8399f9c8df3382e9555b8e0c186760b113"),
    ("320238b", "2a97289d2f199a7fe442ea79eb7aa6cc575f3bb074193d880722109579598622c3f85f4e51b4a558443"),
];
/// The same for G2 (the last q is the 448-bit prime factor of the cofactor).
const G2_TORSION: [(&str, &str); 6] = [
    ("d", "4005449cda731a7136c440a0c65b728ba1c1fa6b6708356f3b9bdc84396cab33907d71557a7d33677f5d45f7cedb8cfdac10ff1fc5b48d6461e907737d78e96568f2d18c750b4b3ca5c33c3fd8ff8a70629888281914529f4e3380941cfdd"),
    ("17", "1473e413236dd889cb5381880d0a576821c578a6e8c7952f26668aaed6d2623f6a2afa96b5e43f5d126da598b99dbb518655c33a8b236b990d5fbd2d9b42b21fe9e0346d3c23104b06fb96e09de2555c861790a3cc012b5540aa5804bb595"),
    ("a99", "3fcee61e74c25c987842842a1a26de4d74f74f14543213da8777344b8bfcf67fd34a2a90a45b3170df91252e784da8bcaa5cfea7bc15ce204c72df226dc50975962d2d53a875b1ef426ad51a2cbb2185cf414efe8a6ae0d520ee8ae8bc2d"),
    ("2eb1", "e7b91d864fd7d4c0c79957105c92b89ec85bf8e8a7d594110346483f17da69c7cf3a9d7278d9937c64966acc866446ec1db5dcd51748de61764329a3e70094768767f1e6cc339643949c93915d33844c5ab2047701878fab9632ed78275"),
    ("3ffb5", "a91a4bdb3f26d1ead4914c4ce26b0fd01fa28a6b3f6c924d7093911c08709252e11d3c29df83baa337c6a28ec630c4603c694e666410999452285c21b6cb6bb5ecb4478b228299bce84d8ec6ce12616966d30f7f44cbf41ccb9be93271"),
    ("8d9f503deeeb5d5c423572788bea4d6ae0490c5afca1eeb2a9d75bb98b95878afab9c0da5cf222c377d87384d026cd73826d177200c0d3b1", "4c658e1d2a19cb91a3a9afea1c3245a3111bcf284ae2370fdb442fbe4bc7f9dc256f97848344975"),
];

/// How many primes divide G1's cofactor (the `which` of [`g1_with_torsion`]).
pub const G1_PRIMES: usize = G1_TORSION.len();
/// How many primes divide G2's cofactor (the `which` of [`g2_with_torsion`]).
pub const G2_PRIMES: usize = G2_TORSION.len();

/// Big-endian hex to the bits of the number, most significant first.
fn bits(hex: &str) -> Vec<bool> {
    hex.chars().flat_map(|c| {
        let v = c.to_digit(16).expect("hex digit");
        (0..4).rev().map(move |i| (v >> i) & 1 == 1)
    }).collect()
}

macro_rules! curve {
    ($name:ident, $torsion:ident, $affine:ty, $proj:ty, $raw:ty, $raw_affine:ty, $bytes:expr,
     $uncompress:ident, $from_affine:ident, $to_affine:ident, $double:ident, $add:ident, $is_inf:ident, $in_group:ident) => {
        /// G + T with G a random subgroup point and T of exact order
        /// `q` = the `which`-th prime of the cofactor (returned, in hex).
        pub fn $name(which: usize, rng: &mut impl RngCore) -> ($affine, &'static str) {
            let (q, cof) = $torsion[which];
            let mul = |p: &$raw, hex: &str| {
                let mut acc = <$raw>::default();
                for b in bits(hex) {
                    // SAFETY: valid points in and out (blst allows aliasing).
                    unsafe { $double(&mut acc, &acc) };
                    if b {
                        unsafe { $add(&mut acc, &acc, p) };
                    }
                }
                acc
            };
            let t = loop {
                // A random curve point: a random x with the compression
                // flag, decompressed (blst checks the curve, not the subgroup).
                let mut enc = [0u8; $bytes];
                rng.fill_bytes(&mut enc);
                enc[0] = (enc[0] & 0x1f) | 0x80 | (enc[0] & 0x20);
                for i in (0..$bytes).step_by(48) {
                    enc[i] &= if i == 0 { 0xbf } else { 0x0f };
                }
                let mut a = <$raw_affine>::default();
                // SAFETY: `enc` holds the compressed size.
                if unsafe { $uncompress(&mut a, enc.as_ptr()) } != BLST_ERROR::BLST_SUCCESS {
                    continue;
                }
                let mut r = <$raw>::default();
                unsafe { $from_affine(&mut r, &a) };
                // The q-primary part of R; then multiplied by q until
                // the next multiple would vanish: order exactly q.
                let mut t = mul(&r, cof);
                if unsafe { $is_inf(&t) } {
                    continue;
                }
                loop {
                    let tq = mul(&t, q);
                    if unsafe { $is_inf(&tq) } {
                        break;
                    }
                    t = tq;
                }
                break t;
            };
            assert!(unsafe { $is_inf(&mul(&t, q)) }, "T has order q");
            assert!(!unsafe { $in_group(&t) });
            let g: $proj = <$proj>::random(&mut *rng);
            // SAFETY: the blstrs types are repr(transparent) over blst's.
            let g: $raw = unsafe { std::mem::transmute::<$proj, $raw>(g) };
            let mut bad = <$raw>::default();
            unsafe { $add(&mut bad, &g, &t) };
            let mut out = <$raw_affine>::default();
            unsafe { $to_affine(&mut out, &bad) };
            (unsafe { std::mem::transmute::<$raw_affine, $affine>(out) }, q)
        }
    };
}

curve!(g1_with_torsion, G1_TORSION, G1Affine, G1Projective, blst_p1, blst_p1_affine, 48,
    blst_p1_uncompress, blst_p1_from_affine, blst_p1_to_affine, blst_p1_double, blst_p1_add_or_double, blst_p1_is_inf, blst_p1_in_g1);
curve!(g2_with_torsion, G2_TORSION, G2Affine, G2Projective, blst_p2, blst_p2_affine, 96,
    blst_p2_uncompress, blst_p2_from_affine, blst_p2_to_affine, blst_p2_double, blst_p2_add_or_double, blst_p2_is_inf, blst_p2_in_g2);
