# The replay proof on the GPU machine, from the repository root:
#   bash tools/gpu/replay_proof.sh
# Traces the kernels of kernels/replay/ as written and with the suggested layout change
# (each with --validate: Nsight Compute), replays the first with that layout, compares every
# shared-memory counter, times both (warpviz bench --traces) and compares the predicted and
# measured change in time. Then runs tests/test_replay_gpu.py. Everything goes into
# $OUT/replay_proof.tgz (summary.md, summary.json, traces, bench.json, log.txt, pytest log).
set -u
OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT/replay_proof"
exec > >(tee -a "$OUT/replay_proof/run-log.txt") 2>&1
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
t0=$(date +%s)
timeout 420 python3 tools/gpu/replay_proof.py --out "$OUT/replay_proof"
echo "=== proof rc=$? in $(( $(date +%s) - t0 )) s"
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_replay_gpu.py 2>&1 | tail -30
echo "=== total $(( $(date +%s) - t0 )) s"
tar czf "$OUT/replay_proof.tgz" -C "$OUT" replay_proof
ls -la "$OUT"
