#!/bin/bash
# The scenario kinds tma.store and TMA boxes past the tensor's edge, checked on
# the GPU (run from the repo root on the device machine; carry .gpu-wheels for PyCUDA):
#     bash tools/gpu/tma_scenarios.sh
# Under 4 minutes: `warpviz validate --json` of the built-ins tma-store-swizzle-128b and
# tma-oob-edge (the generated kernels: UTMASTG with a real tensor map, boxes past the edge), and
# of tma-swizzle-128b and tma-ldmatrix-128b (tma.load, unchanged), every counter compared with
# Nsight Compute, l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st included; the
# generated kernels' SASS (UTMASTG, UTMACMDFLUSH) with cuobjdump. Writes $OUT/tma_scenarios.tgz.
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/tma_scenarios"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
T0=$(date +%s)
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
source tools/gpu/device_setup.sh
for n in tma-store-swizzle-128b tma-oob-edge tma-swizzle-128b tma-ldmatrix-128b; do
  step 50 python3 -m viz.cli validate "$n" --json > "$D/$n.json" 2> "$D/$n.err"
  python3 -m viz.cli validate "$n" > "$D/$n.txt" 2>&1 || true
  tail -25 "$D/$n.txt"
done
python3 - "$D" <<'PY'
import sys, pathlib
from viz.scenario import load
from viz.gpu.codegen import generate
d = pathlib.Path(sys.argv[1])
for n in ("tma-store-swizzle-128b", "tma-oob-edge"):
    (d / f"{n}.cu").write_text(generate(load(n), name="k").source)
PY
for n in tma-store-swizzle-128b tma-oob-edge; do
  nvcc -arch=sm_90 -cubin -O3 -o "$D/$n.cubin" "$D/$n.cu" 2>/dev/null && cuobjdump -sass "$D/$n.cubin" > "$D/$n.sass" 2>&1
  grep -oE "UTMA[A-Z0-9.]*|SYNCS[A-Z0-9.]*|BAR[A-Z0-9.]*" "$D/$n.sass" 2>/dev/null | sort | uniq -c
done
echo "tma_scenarios: $(( $(date +%s) - T0 )) s"
tar czf "$OUT/tma_scenarios.tgz" -C "$OUT" tma_scenarios
ls -la "$OUT/tma_scenarios.tgz"
