#!/usr/bin/env bash
# Checks that a built libsupraseal_c2.so exports all ten C ABI symbols.
# Usage: scripts/check-symbols.sh [path/to/libsupraseal_c2.so]
set -euo pipefail
lib=${1:-target/release/libsupraseal_c2.so}
symbols=(generate_groth16_proofs_c generate_groth16_proofs_start_c finalize_groth16_proof_c
         destroy_pending_proof create_SRS evict_SRS drop_SRS clone_SRS create_gpu_mutex destroy_gpu_mutex)
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }')
missing=0
for s in "${symbols[@]}"; do
  if ! grep -qx "$s" <<<"$exported"; then
    echo "missing symbol: $s" >&2
    missing=1
  fi
done
[ "$missing" = 0 ] && echo "all ${#symbols[@]} ABI symbols exported by $lib"
exit "$missing"
