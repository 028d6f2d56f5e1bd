//! The committed C header must equal what cbindgen generates from src/abi.
//! Regenerate with `UPDATE_HEADER=1 cargo test -p supraseal-c2 --test header`.

use std::path::Path;

#[test]
fn committed_header_matches_cbindgen_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("utf-8 header");
    let path = root.join("include/supraseal_c2.h");
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/supraseal_c2.h is stale: run `UPDATE_HEADER=1 cargo test -p supraseal-c2 --test header` and commit it"
    );
    for symbol in [
        "generate_groth16_proofs_c",
        "generate_groth16_proofs_start_c",
        "finalize_groth16_proof_c",
        "destroy_pending_proof",
        "create_SRS",
        "evict_SRS",
        "drop_SRS",
        "clone_SRS",
        "create_gpu_mutex",
        "destroy_gpu_mutex",
    ] {
        assert!(generated.contains(&format!(" {symbol}(")), "header declares {symbol}");
    }
    assert!(generated.contains("} Assignment;"), "the C name of CAssignment is Assignment");
}
