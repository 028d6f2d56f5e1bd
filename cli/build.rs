//! Sets `cfg(gpu_kernels)` when the library was built with GPU kernels (its
//! build script's `kernels` value, through `links`), so the GPU-only tests
//! are reported as ignored in a CPU-only build instead of passing vacuously.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(gpu_kernels)");
    // Cargo reruns this script when the library's build script output changes.
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("DEP_SUPRASEAL_C2_KERNELS").as_deref() == Ok("1") {
        println!("cargo:rustc-cfg=gpu_kernels");
    }
}
