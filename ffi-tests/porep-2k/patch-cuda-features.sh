#!/usr/bin/env bash
# Makes the patched copies that Cargo.toml's [patch.crates-io] points at: two
# crates exactly as published, except for one feature list each, so that the
# supraseal feature chain builds and links on a machine without nvcc or
# libcuda while C2 still goes through `bellperson/cuda-supraseal`:
#
#   filecoin-hashers 14.1.0  cuda = []
#       (storage-proofs-core's `cuda-supraseal` turns it on; upstream it is
#       ["bellperson/cuda", "neptune/cuda"]: bellperson's and neptune's own
#       CUDA kernels, compiled by nvcc at build time, linked to libcuda.)
#   filecoin-proofs 19.1.0   cuda-supraseal = [core/cuda-supraseal,
#                             bellperson/cuda-supraseal, filecoin-hashers/cuda]
#       (filecoin-proofs-api's `cuda-supraseal` turns it on; upstream it also
#       turns on storage-proofs-{porep,post,update}/cuda: the GPU column and
#       tree-r builders of PC2, which pull the same kernels and are off unless
#       FIL_PROOFS_USE_GPU_*_BUILDER is set. Neither feature list touches C2.)
#
# Only feature lists change: no source file of either crate is edited, so
# every `cfg(feature = ...)` in their code sees the same features as upstream.
# The copies live in .patched/ (git-ignored) and are made again from the cargo
# registry every time (kept when identical); nothing of these crates is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"

find_src() { ls -d "$cargo_home"/registry/src/*/"$1-$2" 2>/dev/null | head -n1; }

# Unpacked copy of NAME VER in the cargo registry (downloaded if missing).
registry_src() { # name, version
    local name="$1" ver="$2" src scratch
    src="$(find_src "$name" "$ver" || true)"
    if [ -z "$src" ]; then
        # Not unpacked yet: let cargo download it through a scratch manifest.
        scratch="$(mktemp -d)"
        mkdir -p "$scratch/src"
        : >"$scratch/src/lib.rs"
        cat >"$scratch/Cargo.toml" <<TOML
[package]
name = "fetch-$name"
version = "0.0.0"
edition = "2021"
[dependencies]
$name = { version = "=$ver", default-features = false }
[workspace]
TOML
        cargo fetch --manifest-path "$scratch/Cargo.toml" >&2
        rm -rf "$scratch"
        src="$(find_src "$name" "$ver")"
    fi
    [ -n "$src" ] || { echo "patch-cuda-features: $name $ver not found in $cargo_home/registry" >&2; exit 1; }
    echo "$src"
}

# Copies NAME VER to .patched/NAME with FEATURE's list replaced by LIST (a
# TOML array), then checks that the new line is there and that no entry in
# FORBIDDEN (a grep -E pattern) is left in the manifest.
patch_feature() { # name, version, feature, list, forbidden
    local name="$1" ver="$2" feature="$3" list="$4" forbidden="$5"
    local src dest="$here/.patched/$name"
    src="$(registry_src "$name" "$ver")"
    rm -rf "$dest.tmp"
    mkdir -p "$(dirname "$dest")"
    cp -r "$src" "$dest.tmp"
    chmod -R u+w "$dest.tmp"
    rm -f "$dest.tmp/Cargo.lock" "$dest.tmp/.cargo-ok"
    FEATURE="$feature" LIST="$list" perl -0pi -e 's/^\Q$ENV{FEATURE}\E = \[[^\]]*\]/$ENV{FEATURE} = $ENV{LIST}/m' "$dest.tmp/Cargo.toml"
    grep -qxF "$feature = $list" "$dest.tmp/Cargo.toml" || {
        echo "patch-cuda-features: could not set $feature = $list in $dest.tmp/Cargo.toml" >&2
        exit 1
    }
    if grep -Eq "$forbidden" "$dest.tmp/Cargo.toml"; then
        echo "patch-cuda-features: $name still references /$forbidden/ in $dest.tmp/Cargo.toml" >&2
        grep -En "$forbidden" "$dest.tmp/Cargo.toml" >&2
        exit 1
    fi
    # An identical copy stays as it is: cargo fingerprints path dependencies
    # by mtime, and a fresh copy would rebuild them and all their dependents.
    if [ -d "$dest" ] && diff -rq "$dest.tmp" "$dest" >/dev/null; then
        rm -rf "$dest.tmp"
        echo "patched $name $ver ($feature = $list) at $dest (unchanged)" >&2
        return
    fi
    rm -rf "$dest"
    mv "$dest.tmp" "$dest"
    echo "patched $name $ver ($feature = $list) at $dest" >&2
}

patch_feature filecoin-hashers 14.1.0 cuda '[]' 'neptune/cuda|bellperson/cuda'
# filecoin-proofs' own `cuda` feature keeps its list (nothing turns it on here;
# it and cuda-supraseal are mutually exclusive by compile_error!).
patch_feature filecoin-proofs 19.1.0 cuda-supraseal \
    '["storage-proofs-core/cuda-supraseal", "bellperson/cuda-supraseal", "filecoin-hashers/cuda"]' \
    '^cuda-supraseal = .*storage-proofs-(porep|post|update)/cuda'
