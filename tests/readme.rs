//! The README's C example compiles as printed: its first ```c block, with
//! the committed header, under `cc -Wall -Wextra -Werror` (CC overrides cc).

use std::path::Path;
use std::process::Command;

#[test]
fn readme_c_example_compiles_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let snippet = readme
        .split("```c\n")
        .nth(1)
        .and_then(|t| t.split("```").next())
        .expect("README.md has a ```c block");
    assert!(snippet.contains("generate_groth16_proofs_c"), "the C example calls the prover:\n{snippet}");
    let dir = std::env::temp_dir().join(format!("supraseal-c2-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (src, obj) = (dir.join("example.c"), dir.join("example.o"));
    std::fs::write(&src, snippet).expect("write example.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-Wall", "-Wextra", "-Werror", "-c"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{cc} -Wall -Wextra -Werror refuses the README's C example:\n{}\n--- the example ---\n{snippet}",
        String::from_utf8_lossy(&out.stderr)
    );
}
