//! Replays the committed fuzz corpora (fuzz/corpus/<target>/) through the
//! same harnesses the cargo-fuzz targets run (`supraseal_c2::fuzzing`), on
//! stable and without libFuzzer, so every `cargo test` re-checks them; plus
//! one test per fuzzing finding (notes/FUZZING.md).

use std::ffi::CString;
use std::path::{Path, PathBuf};

use supraseal_c2::abi::exports::{create_SRS, drop_SRS};
use supraseal_c2::fuzzing;
use supraseal_c2::SRS;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{}: the committed corpus is missing ({} files)", dir.display(), files.len());
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

/// Runs `harness` on every file, naming the file that fails.
fn replay(target: &str, harness: fn(&[u8])) {
    for (path, data) in corpus(target) {
        if let Err(e) = std::panic::catch_unwind(|| harness(&data)) {
            std::panic::resume_unwind(Box::new(format!("{}: {:?}", path.display(), e.downcast_ref::<String>())));
        }
    }
}

#[test]
fn params_file_corpus_replays_cleanly() {
    replay("params_file", fuzzing::params_file);
}

#[test]
fn prove_call_corpus_replays_cleanly() {
    replay("prove_call", fuzzing::prove_call);
}

/// The corpus again, through `create_SRS` on a real file: the path-based
/// loader (open, mmap) agrees with the in-memory parser on every input.
#[test]
fn params_file_corpus_through_create_srs_agrees_with_the_parser() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-corpus-params");
    std::fs::create_dir_all(&dir).unwrap();
    let mut accepted = 0;
    for (path, data) in corpus("params_file") {
        let file = dir.join(path.file_name().unwrap());
        std::fs::write(&file, &data).unwrap();
        let parsed = supraseal_c2::srs::Srs::parse(&file, &data).map(|_| ()).map_err(|e| e.code);
        let c_path = CString::new(file.to_str().unwrap()).unwrap();
        let mut srs = SRS::default();
        // SAFETY: `srs` is writable, `c_path` a C string.
        let e = unsafe { create_SRS(&mut srs, c_path.as_ptr(), false) };
        assert_eq!(parsed, if e.code == 0 { Ok(()) } else { Err(e.code) }, "{}: {e}", path.display());
        if e.code == 0 {
            accepted += 1;
        } else {
            assert!(e.message_str().contains(&*file.to_string_lossy()), "{}", e.message_str());
        }
        // SAFETY: a handle from create_SRS (or still empty).
        unsafe { drop_SRS(&mut srs) };
    }
    assert!(accepted > 0, "the corpus holds at least one valid file");
}

/// Finding 1 (prove_call, first session): an input whose aux count is 0
/// (empty density vectors) but whose circuit 1 claims b_aux_popcount 127.
/// The validator rightly rejects it; the harness's model skipped the
/// popcount check for empty vectors and called the input valid. Fixed in the
/// model; this keeps the input passing.
#[test]
fn finding_empty_density_with_a_nonzero_popcount_is_rejected() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/prove_call-empty-density-nonzero-popcount");
    fuzzing::prove_call(&std::fs::read(path).unwrap());
}

/// The split-form lifecycle harness on the sequence of issue 14: start A
/// (3 circuits), finalize A, start B (1 circuit), finalize A again (stale:
/// EINVAL, nothing written), destroy A again (ignored), finalize B (B's own
/// proof). The harness checks each step against its model.
#[test]
fn split_lifecycle_stale_handle_never_reaches_the_next_job() {
    let mut data = vec![0xC0u8, 5];
    let u64s = |n: usize, seed: u8| -> Vec<u8> { (0..n * 8).map(|i| seed.wrapping_mul(31).wrapping_add(i as u8 * 7) | 1).collect() };
    data.extend([0, 2]); // start A: 3 circuits
    data.extend(u64s(6, 1)); // r and s of A
    data.extend([2, 0]); // finalize A
    data.extend([0, 0]); // start B: 1 circuit
    data.extend(u64s(2, 2)); // r and s of B
    data.extend([2, 0]); // finalize A again: stale
    data.extend([4, 0]); // destroy A again: ignored
    data.extend([2, 1]); // finalize B
    fuzzing::prove_call(&data);
}
