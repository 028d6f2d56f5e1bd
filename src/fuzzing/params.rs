//! Harness 1, the params-file parser, and the params files and keys the
//! prover harnesses use: [`tiny_params`](crate::srs::tiny_params) builds a valid file of any shape
//! (seed corpora), and `key_for` gives a key of a shape without parsing one
//! per input.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::error::code;
use crate::srs::{tiny_params, Srs, G1_BYTES, G2_BYTES};

/// The name the params harness gives its input in messages.
pub const PARAMS_NAME: &str = "fuzz.params";

/// Harness 1: the params-file parser ([`Srs::parse`], what `create_SRS` runs
/// on the file's bytes). Any input either parses into a key whose sections
/// account for every byte, or fails with `EINVAL` and a message that names
/// the input and a section.
pub fn params_file(data: &[u8]) {
    match Srs::parse(Path::new(PARAMS_NAME), data) {
        Ok(srs) => {
            // The ic count is the only one not kept; read it back.
            let ic_at = 3 * G1_BYTES + 3 * G2_BYTES;
            let ic = u32::from_be_bytes(data[ic_at..ic_at + 4].try_into().unwrap()) as usize;
            let g1 = ic + srs.h.len() + srs.l.len() + srs.a.len() + srs.b_g1.len();
            let want = ic_at + 6 * 4 + g1 * G1_BYTES + srs.b_g2.len() * G2_BYTES;
            assert_eq!(data.len(), want, "a parsed key must account for every byte of the file");
            assert!(!srs.h.is_empty(), "a parsed key has an evaluation domain");
            assert!(srs.domain_size() > srs.h.len(), "domain size {} for {} h points", srs.domain_size(), srs.h.len());
        }
        Err(e) => {
            assert_eq!(e.code, code::EINVAL, "malformed contents are EINVAL: {}", e.message);
            let prefix = format!("{PARAMS_NAME}: ");
            assert!(e.message.starts_with(&prefix), "the message names the input: {:?}", e.message);
            assert!(e.message.len() > prefix.len() + 5, "the message says what is wrong: {:?}", e.message);
        }
    }
}

/// A key of shape `(h, l, a, b)`: the points of one parsed [`tiny_params`]
/// file, reused cyclically ([`Srs::from_parts`]; parsing and
/// subgroup-checking a key per input would cost more than the call under test).
pub(super) fn key_for(shape: [usize; 4]) -> Arc<Srs> {
    static TEMPLATE: OnceLock<Srs> = OnceLock::new();
    let t = TEMPLATE.get_or_init(|| Srs::parse(Path::new("tiny.params"), &tiny_params(5, 5, 5, 5)).expect("valid"));
    fn take<T: Copy>(from: &[T], n: usize) -> Vec<T> {
        from.iter().copied().cycle().take(n).collect()
    }
    let [h, l, a, b] = shape;
    Arc::new(Srs::from_parts(
        t.path.clone(),
        t.alpha_g1,
        t.beta_g1,
        t.beta_g2,
        t.delta_g1,
        t.delta_g2,
        take(&t.h, h),
        take(&t.l, l),
        take(&t.a, a),
        take(&t.b_g1, b),
        take(&t.b_g2, b),
    ))
}
