#!/usr/bin/env bash
# Installs a CUDA compiler (nvcc) into a folder of the checkout, so the
# kernels can be compiled on machines without a CUDA toolkit (CI, the
# development VM). Idempotent: does nothing when the pinned nvcc is present.
#
#   scripts/install-cuda-toolchain.sh [13] [DIR]   nvcc 13.0 (default; DIR: .venv-cuda)
#   scripts/install-cuda-toolchain.sh 12 [DIR]     nvcc 12.4 (DIR: .venv-cuda12)
#
# Prints the path of nvcc on its last line.
#
# 13.0: every part comes from PyPI (nvidia-cuda-nvcc and friends, pinned).
# 12.4: PyPI's nvidia-cuda-nvcc-cu12 wheels hold ptxas, libnvvm and the crt
# headers but no nvcc, cicc or cudafe++ (none of its 12.x versions does), so
# those come from Debian 13 (trixie)'s non-free nvidia-cuda-toolkit
# 12.4.131 (NVIDIA's binaries, fetched with `apt-get download` through a
# private apt state under DIR: the system's apt sources are not touched; needs
# apt-get and dpkg-deb), and the headers from PyPI's nvidia-cuda-runtime-cu12
# 12.4.127 and nvidia-cuda-nvcc-cu12 12.4.131, the same CUDA 12.4 update 1.
# Both are put together in DIR/cuda-12.4 with its own nvcc.profile.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
major=13
case "${1:-}" in
  12|13) major=$1; shift ;;
esac

if [ "$major" = 13 ]; then
  venv=${1:-"$repo/.venv-cuda"}
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
  exit 0
fi

# CUDA 12.4.
deb_version=12.4.131 # nvidia-cuda-toolkit's upstream version (Debian adds ~12.4.1-N)
dir=${1:-"$repo/.venv-cuda12"}
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
root="$dir/cuda-12.4"
nvcc="$root/bin/nvcc"
if [ -x "$nvcc" ] && "$nvcc" --version 2>/dev/null | grep -q "release 12.4, V$deb_version"; then
  echo "$nvcc"
  exit 0
fi
for tool in apt-get dpkg-deb python3; do
  command -v "$tool" >/dev/null || { echo "install-cuda-toolchain.sh 12: needs $tool (a Debian or Ubuntu host)" >&2; exit 1; }
done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { echo "install-cuda-toolchain.sh 12: $keyring missing (apt-get install debian-archive-keyring)" >&2; exit 1; }

# Headers, ptxas's companions: PyPI.
python3 -m venv "$dir/venv"
"$dir/venv/bin/pip" install --quiet --disable-pip-version-check \
  nvidia-cuda-nvcc-cu12==12.4.131 nvidia-cuda-runtime-cu12==12.4.127
wheels=$(ls -d "$dir"/venv/lib/python3*/site-packages/nvidia | head -n 1)

# nvcc, cicc, cudafe++, fatbinary, ptxas: Debian trixie non-free, through
# apt's own signature and checksum checks.
apt="$dir/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/deb"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian trixie non-free" > "$apt/sources.list"
aptopts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Architecture=amd64)
apt-get "${aptopts[@]}" update -qq
candidate=$(apt-cache "${aptopts[@]}" policy nvidia-cuda-toolkit | awk '/Candidate:/ {print $2}')
case "$candidate" in
  "$deb_version"~*) ;;
  *) echo "install-cuda-toolchain.sh 12: Debian trixie offers nvidia-cuda-toolkit '$candidate', not $deb_version~*: update the pins in $0" >&2; exit 1 ;;
esac
rm -rf "$apt/deb" && mkdir -p "$apt/deb"
(cd "$apt/deb" && apt-get "${aptopts[@]}" download -q "nvidia-cuda-toolkit=$candidate")
rm -rf "$apt/x" && dpkg-deb -x "$apt"/deb/nvidia-cuda-toolkit_*.deb "$apt/x"

# A toolkit folder as nvcc expects it: bin/ with nvcc.profile, nvvm/libdevice,
# include/.
rm -rf "$root"
mkdir -p "$root/bin" "$root/nvvm" "$root/include"
cp -a "$apt/x/usr/lib/nvidia-cuda-toolkit/bin/"{nvcc,cicc,crt} "$root/bin/"
cp -a "$apt/x/usr/bin/"{cudafe++,fatbinary,ptxas,nvlink,bin2c,cuobjdump} "$root/bin/"
cp -a "$apt/x/usr/lib/nvidia-cuda-toolkit/libdevice" "$root/nvvm/"
cp -a "$wheels/cuda_runtime/include/." "$wheels/cuda_nvcc/include/." "$root/include/"
cat > "$root/bin/nvcc.profile" <<'EOF'
TOP                = $(_HERE_)/..
CICC_PATH          = $(_HERE_)
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH              += $(_HERE_):
INCLUDES          += "-I$(TOP)/include" $(_SPACE_)
EOF
rm -rf "$apt" "$dir/venv"
"$nvcc" --version | grep -q "release 12.4, V$deb_version" || { echo "install-cuda-toolchain.sh 12: $nvcc does not run" >&2; exit 1; }
echo "$nvcc"
