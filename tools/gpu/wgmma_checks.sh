#!/bin/bash
# The wgmma kind checked whole on the H200 (run from the repo root on the device machine):
#   bash tools/gpu/wgmma_checks.sh            (device tool: carry [".gpu-wheels"], made here by
#                                               tools/gpu/fetch_wheels.sh; PyCUDA is built the
#                                               first time, ~2 min)
#   1. warpviz validate tools/gpu/wgmma_cases/*.toml: six wgmma scenarios compiled as inline PTX
#      for sm_90a, the model's counters against Nsight Compute's (the four gmma ones included);
#   2. warpviz trace tests/data/wgmma/triton35_matmul_128x128x64.launch.toml --validate: Triton's
#      tl.dot GEMM traced, its 8 wgmma recorded, every counter against Nsight Compute's
#      (expected gmma: 4,096 instructions, 6,291,456 bytes, 49,152 wavefronts, 0 conflicts);
#   0. (first, no PyCUDA) tools/gpu/probe_wgmma_mix.sh: wgmma of several warpgroups together and
#      beside LDS/STS traffic, 14 launches under Nsight Compute (~40 s);
#   (pytest -m gpu tests/test_wgmma.py runs the same two checks as tests, when there is time.)
# About 3 to 4 minutes. Writes $OUT/wgmma_checks.tgz (wgmma_checks/: log.txt, validate.json,
# trace.json, matmul.wvtrace, and probe_wgmma_mix/).
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/wgmma_checks"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
pack() { (cd "$OUT" && tar czf wgmma_checks.tgz wgmma_checks && ls -la wgmma_checks.tgz); }
trap pack EXIT
step0() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; timeout "$limit" "$@"; echo "=== rc=$?"; }
OUT="$D" step0 90 bash tools/gpu/probe_wgmma_mix.sh
source tools/gpu/device_setup.sh
# step's own lines go to stderr (the log): its stdout is redirected into the JSON files below,
# which must hold only the JSON (they once began with the "=== ..." line).
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)" >&2; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s" >&2; return $rc; }
step 110 python3 -m viz.cli validate tools/gpu/wgmma_cases/*.toml --json > "$D/validate.json"
python3 - "$D/validate.json" <<'PY'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))
except Exception as err:
    print("validate: no JSON:", err); sys.exit()
for r in rows:
    print(f"validate {r['label']}: match={r['match']} {r.get('error') or ''}")
    for x in r["rows"]:
        if "gmma" in x["metric"] or not x["match"]:
            print(f"    {x['metric']}: model {x['model']} ncu {x['hardware']} {'ok' if x['match'] else 'DIFFERS'}")
PY
step 120 python3 -m viz.cli trace tests/data/wgmma/triton35_matmul_128x128x64.launch.toml --validate --json \
  --out "$D/matmul.wvtrace" > "$D/trace.json"
python3 - "$D/trace.json" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as err:
    print("trace: no JSON:", err); sys.exit()
v = doc.get("validation") or {}
print("trace complete:", doc["trace"]["complete"], "ten match:", v.get("match"))
for r in v.get("rows", []) + v.get("other", []):
    print(f"    {r['metric']}: trace {r['model']} ncu {r['hardware']} {'ok' if r['match'] else 'DIFFERS'}")
PY
