#!/bin/bash
# Issue 30 (TMA), the final check on the merged main (run from the repo root on the device
# machine; carry .gpu-wheels for PyCUDA):   bash tools/gpu/tma_final.sh
# Under 4 minutes: warpviz trace --validate of kernels/format2/tma_copy_triton.launch.toml (the
# trace to ship in assets/traces), then trace_triton(..., validate=True) of Triton's TMA copies
# (copy2d_dev, copy2d_dev_st, load3d, oob2d, attention: tests/test_tma_gpu.py), every counter
# compared with Nsight Compute. Writes $OUT/tma_final.tgz (tma_final/: log.txt, the traces, one
# JSON of each case's validation).
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/tma_final"; mkdir -p "$D/traces"
exec > >(tee -a "$D/log.txt") 2>&1
T0=$(date +%s)
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
source tools/gpu/device_setup.sh
step 70 python3 -m viz.cli trace kernels/format2/tma_copy_triton.launch.toml --validate \
  --out "$D/tma_copy_triton.wvtrace" > "$D/tma_copy_triton.txt" 2>&1
grep -E "differ|match|equal|Nsight|complete|unrecorded" "$D/tma_copy_triton.txt" | head -20
export WARPVIZ_TMA_OUT="$D/traces" WARPVIZ_TMA_CASES="copy2d_dev,copy2d_dev_st,oob2d,load3d,attention"
left=$(( 220 - ($(date +%s) - T0) ))
step $(( left > 40 ? left : 40 )) python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_tma_gpu.py --no-header -rA 2>&1 | tail -40
python3 - "$D/traces" <<'PY'
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    d = json.loads(p.read_text()); v = d["validation"] or {}
    bad = [r for r in v.get("rows", []) + v.get("other", []) if not r["match"]]
    print(f"{d['case']}: match={v.get('match')} {len(v.get('rows', [])) + len(v.get('other', []))} counters, {len(bad)} differ")
    for r in bad:
        print(f"    {r['metric']}: model {r['model']} ncu {r['hardware']}")
PY
echo "tma_final: $(( $(date +%s) - T0 )) s"
tar czf "$OUT/tma_final.tgz" -C "$OUT" tma_final
ls -la "$OUT/tma_final.tgz"
