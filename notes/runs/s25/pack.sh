# Builds the GPU pack and trims it for notes/runs/s25/steps.sh: run from anywhere, then carry
# gpu-pack.tgz (git-ignored) and run on the device, e.g.
#   mkdir -p /tmp/w && tar xzf gpu-pack.tgz -C /tmp/w && bash /tmp/w/pk/steps.sh synth-bg tests ntt wait
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/gpu-pack.sh
rm -rf /tmp/pk && mkdir -p /tmp/pk
cp gpu-pack/{supraseal-c2,gpu,gpu_proofs,lock_protocol,gpu_params,gpu_bench,sppark_bench,libupstream_ref.so,run.sh,gpu-samples.py,COMMIT} /tmp/pk/
cp notes/runs/s24/70cf2f7-proofs-upstream.txt notes/runs/s25/steps.sh /tmp/pk/
tar czf gpu-pack.tgz -C /tmp pk
ls -la gpu-pack.tgz && cat /tmp/pk/COMMIT
