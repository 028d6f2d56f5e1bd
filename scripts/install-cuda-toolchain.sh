#!/usr/bin/env bash
# Installs a CUDA 13.0 compiler (nvcc) from PyPI into a virtualenv, so the
# kernels can be compiled on machines without a CUDA toolkit (CI, the
# development VM). Idempotent: does nothing when the pinned nvcc is present.
# Usage: scripts/install-cuda-toolchain.sh [VENV_DIR]   (default: .venv-cuda)
# Prints the path of nvcc on its last line.
set -euo pipefail
venv=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.venv-cuda"}
nvcc="$venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc"
if [ ! -x "$nvcc" ] || ! "$nvcc" --version 2>/dev/null | grep -q "release 13.0"; then
  python3 -m venv "$venv"
  # Pin every package: mixed versions fail in ptxas.
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85
fi
# The wheel layout differs between Python versions: find nvcc wherever it landed.
nvcc=$(ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | head -n 1)
[ -x "$nvcc" ] || { echo "nvcc not found under $venv" >&2; exit 1; }
echo "$nvcc"
