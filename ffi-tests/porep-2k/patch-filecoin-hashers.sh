#!/usr/bin/env bash
# Makes the patched copy of filecoin-hashers 14.1.0 that Cargo.toml's
# [patch.crates-io] points at: the crate exactly as published, except that its
# `cuda` feature is empty (storage-proofs-core's `cuda-supraseal` feature turns
# it on, and it would pull neptune/bellperson CUDA kernels that need nvcc and
# libcudart). The copy lives in .patched/ (git-ignored) and is rebuilt from the
# cargo registry every time; nothing of filecoin-hashers is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name=filecoin-hashers
ver=14.1.0
dest="$here/.patched/$name"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"

find_src() { ls -d "$cargo_home"/registry/src/*/"$name-$ver" 2>/dev/null | head -n1; }

src="$(find_src || true)"
if [ -z "$src" ]; then
    # Not unpacked yet: let cargo download it through a scratch manifest.
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
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
    src="$(find_src)"
fi
[ -n "$src" ] || { echo "patch-filecoin-hashers: $name $ver not found in $cargo_home/registry" >&2; exit 1; }

rm -rf "$dest.tmp"
mkdir -p "$(dirname "$dest")"
cp -r "$src" "$dest.tmp"
chmod -R u+w "$dest.tmp"
rm -f "$dest.tmp/Cargo.lock" "$dest.tmp/.cargo-ok"
# cuda = [ "bellperson/cuda", "neptune/cuda", ]  ->  cuda = []
perl -0pi -e 's/^cuda = \[[^\]]*\]/cuda = []/m' "$dest.tmp/Cargo.toml"
grep -qx 'cuda = \[\]' "$dest.tmp/Cargo.toml" || {
    echo "patch-filecoin-hashers: could not empty the cuda feature in $dest.tmp/Cargo.toml" >&2
    exit 1
}
if grep -q 'neptune/cuda\|bellperson/cuda' "$dest.tmp/Cargo.toml"; then
    echo "patch-filecoin-hashers: CUDA features still referenced in $dest.tmp/Cargo.toml" >&2
    exit 1
fi
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "patched $name $ver (cuda = []) at $dest" >&2
