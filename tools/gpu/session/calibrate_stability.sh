#!/bin/bash
# Is the calibration stable? `warpviz calibrate` twice (run to run stability and the
# plausibility checks), the calibrate -m gpu test, the SASS of the microbenchmarks (one LDS/LDG
# per load?), and reduce_tree re-timed with the old and the new timing method (docs/GPU.md,
# "Timing method" and "Calibration").
# Run from the repo root on the device machine:  bash tools/gpu/session/calibrate_stability.sh
# Expected time: about 45 s with the carried PyCUDA build (setup 10 s, each calibrate
# 6 s, test 10 s, SASS 3 s, retime 6 s); every step has its own timeout and the steps'
# limits add up to 120 s beyond setup.
# Writes $OUT/calibrate_stability/: log.txt, calib-1.json, calib-2.json (calibration files),
# calib-1.txt, calib-2.txt (tables), calibrate.sass (the microbenchmarks' SASS),
# retime.json, smi-*.csv.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/calibrate_stability"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
smi() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv > "$R/smi-$1.csv" 2>&1; cat "$R/smi-$1.csv"; }
smi before
LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), measured $(date -u +%F) with warpviz calibrate"
step 30 python3 -m viz.cli calibrate --out "$R/calib-1.json" --label "$LABEL" > "$R/calib-1.txt"; cat "$R/calib-1.txt"
step 30 python3 -m viz.cli calibrate --out "$R/calib-2.json" --label "$LABEL" > "$R/calib-2.txt"; cat "$R/calib-2.txt"
python3 - "$R" <<'PY'
import json, sys
r = sys.argv[1]
try:
    a, b = (json.load(open(f"{r}/calib-{i}.json"))["figures"] for i in (1, 2))
    for k in a:
        if k in b:
            d = abs(a[k]["value"] - b[k]["value"]) / max(abs(a[k]["value"]), 1e-12) * 100
            print(f"{k:<42} {a[k]['value']:>12g} {b[k]['value']:>12g}  {d:5.1f}% {'' if d < 5 else 'DIFFERS'}")
except Exception as err:
    print("compare failed:", err)
PY
step 30 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_calibrate.py
step 20 python3 -c "
from viz.gpu.calibrate import source
from viz.toolchain.compile import compile_cubin
open('/tmp/wv-calibrate.cubin', 'wb').write(compile_cubin(source()))"
cuobjdump -sass /tmp/wv-calibrate.cubin > "$R/calibrate.sass" 2>&1
for f in calibrate; do echo "== $f: memory instructions per function"
awk '/Function :/ {f=$3} /LDS|LDG|STG/ {split($0, a, ";"); n=split(a[1], w, " "); for (i=1;i<=n;i++) if (w[i] ~ /^(LDS|LDG|STG)/) c[f" "w[i]]++} END {for (k in c) print k, c[k]}' "$R/$f.sass" | sort; done
step 20 python3 tools/gpu/retime.py --out "$R/retime.json" reduce_tree
smi after
ls -la "$R"
