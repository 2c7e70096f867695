#!/bin/bash
# A probe of Hopper's own memory path (TMA, bulk copies, wgmma), run from the repo
# root on the device machine (H200, CUDA 13, ncu 2025.3, Python 3.12 with torch and Triton):
#   bash tools/gpu/probe_tma.sh
# Needs no PyCUDA and no carried wheels. About 3 to 4 minutes. Everything goes into
# $OUT/probe_tma.tgz (folder probe_tma/):
#   log.txt                 this log
#   env.txt                 GPU, driver, nvcc, ncu, Python, torch, Triton versions
#   tensormaps.json         CUtensorMap bytes (hex) of maps encoded with one field changed at a
#                           time (tools/gpu/probe_tma_maps.py)
#   query-all.txt, query-base.txt, query-tma.txt   ncu --query-metrics (all; base; TMA/gmma/bulk lines)
#   metrics.txt, metrics-chosen.txt                the metrics asked for (and those ncu lacks)
#   triton/CASE/            kernel.ptx, kernel.cubin, kernel.ttgir, kernel.sass, launch.json
#                           for each case of tools/gpu/probe_tma_kernels.py
#   triton/ncu.csv          the metrics of every case, one launch each in the order of
#                           triton/ncu-order.txt; triton/ncu-source.csv: per-SASS-instruction
#                           counts (ncu --page source) of attention, copy2d_dev, copy2d_dev_st,
#                           matmul, matmul_tma, load3d, in that order
#   cases/                  the CUDA TMA/bulk counting probe (tools/gpu/probe_tma_cases.cu):
#                           cases.json (inputs, map bytes, launch order), probe.sass, probe.ptx,
#                           ncu.csv, table.txt (non-zero counters per case)
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/probe_tma"; mkdir -p "$D/triton" "$D/cases"
exec > >(tee -a "$D/log.txt") 2>&1
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
export PATH="$CUDA_ROOT/bin:$PATH"
export PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=/tmp/probe-tma-triton-cache
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
T0=$(date +%s)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nvcc --version | tail -2
  "$NCU" --version | tail -1
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
} > "$D/env.txt" 2>&1; cat "$D/env.txt"

# a) tensor map bytes
step 60 python3 tools/gpu/probe_tma_maps.py "$D/tensormaps.json"

# metric names on this ncu
step 60 "$NCU" --query-metrics --query-metrics-mode all --chip gh100 > "$D/query-all.txt" 2>&1
step 30 "$NCU" --query-metrics --chip gh100 > "$D/query-base.txt" 2>&1
grep -iE 'tma|gmma|bulk|utma|tensormap|tmain|dshared|shared_ld|op_ldsm' "$D/query-all.txt" "$D/query-base.txt" > "$D/query-tma.txt"
wc -l "$D/query-tma.txt"
python3 tools/gpu/probe_tma_collect.py metrics "$D/query-all.txt" "$D/query-base.txt" "$D/metrics.txt" "$D/metrics-chosen.txt"
METRICS=$(cat "$D/metrics.txt")

# c) the CUDA counting probe (first: it needs no Triton)
B=/tmp/probe_tma_cases
if step 60 nvcc -arch=sm_90a -O2 -std=c++17 -lineinfo -o "$B" tools/gpu/probe_tma_cases.cu; then
  cuobjdump -sass "$B" > "$D/cases/probe.sass" 2>&1
  nvcc -arch=sm_90a -O2 -std=c++17 -ptx -o "$D/cases/probe.ptx" tools/gpu/probe_tma_cases.cu
  step 30 "$B" "$D/cases/cases.json"
  step 150 "$NCU" --metrics "$METRICS" --csv --print-units base --kernel-name tma_case "$B" "$D/cases/cases-ncu.json" \
    > "$D/cases/ncu.csv" 2> "$D/cases/ncu.err"
  tail -3 "$D/cases/ncu.err"
  if ! grep -q '"ID"' "$D/cases/ncu.csv"; then   # a metric this ncu refuses: the core list only
    METRICS=$(cat "$D/metrics-core.txt")
    step 120 "$NCU" --metrics "$METRICS" --csv --print-units base --kernel-name tma_case "$B" "$D/cases/cases-ncu.json" \
      > "$D/cases/ncu.csv" 2> "$D/cases/ncu.err"
  fi
  python3 tools/gpu/probe_tma_collect.py table "$D/cases/ncu.csv" "$D/cases/cases.json" > "$D/cases/table.txt" 2>&1
  cat "$D/cases/table.txt"
fi

# b) Triton kernels: compile, run, check, save PTX/cubin/SASS and the launch
step 150 python3 tools/gpu/probe_tma_kernels.py dump "$D/triton"
for dir in "$D"/triton/*/; do
  [ -f "$dir/kernel.cubin" ] && cuobjdump -sass "$dir/kernel.cubin" > "$dir/kernel.sass" 2>&1
done
CASES=$(cd "$D/triton" && for c in copy2d_dev copy2d_dev_st copy2d_host load3d oob2d oob2d_host matmul matmul_tma attention attention_tma; do [ -f $c/launch.json ] && echo -n "$c "; done)
echo "$CASES" > "$D/triton/ncu-order.txt"
KRE='regex:^(copy2d|load3d|matmul|attention)'
left=$(( 270 - ($(date +%s) - T0) ))
step $(( left > 30 ? left : 30 )) "$NCU" --metrics "$METRICS" --csv --print-units base --kernel-name "$KRE" \
  python3 tools/gpu/probe_tma_kernels.py run $CASES > "$D/triton/ncu.csv" 2> "$D/triton/ncu.err"
tail -3 "$D/triton/ncu.err"
echo "launch order: $CASES"
python3 tools/gpu/probe_tma_collect.py table "$D/triton/ncu.csv"
# per-SASS-instruction execution counts (where the attention's shared loads go; which TMA
# instructions run with a true predicate)
left=$(( 295 - ($(date +%s) - T0) ))
step $(( left > 30 ? left : 30 )) "$NCU" --section SourceCounters --page source --print-source sass --csv --kernel-name "$KRE" \
  python3 tools/gpu/probe_tma_kernels.py run attention copy2d_dev copy2d_dev_st matmul matmul_tma load3d \
  > "$D/triton/ncu-source.csv" 2> "$D/triton/ncu-source.err"
tail -3 "$D/triton/ncu-source.err"
echo "probe_tma: $(( $(date +%s) - T0 )) s"
tar czf "$OUT/probe_tma.tgz" -C "$OUT" probe_tma
ls -la "$OUT/probe_tma.tgz"
