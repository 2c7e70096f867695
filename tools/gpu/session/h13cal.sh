#!/bin/bash
# h13cal device run: `warpviz calibrate` twice (stability), the noisy bench entries
# re-timed with the old and the new timing method, and the calibrate -m gpu test.
# Run from the repo root on the device machine:  bash tools/gpu/session/h13cal.sh
# Expected time: about 2.5 minutes with the carried PyCUDA build (setup 15 s, each
# calibrate 15-30 s, retime 60 s, test 30 s); every step has its own timeout and the
# steps' limits add up to 230 s beyond setup (3.8 minutes at worst).
# Writes $OUT/h13cal/: log.txt, calib-1.json, calib-2.json (calibration files),
# calib-1.txt, calib-2.txt (tables), retime.json, smi-*.csv.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/h13cal"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
smi() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv > "$R/smi-$1.csv" 2>&1; cat "$R/smi-$1.csv"; }
smi before
LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), measured $(date -u +%F) with warpviz calibrate"
step 50 python3 -m viz.cli calibrate --out "$R/calib-1.json" --label "$LABEL" > "$R/calib-1.txt"; cat "$R/calib-1.txt"
step 50 python3 -m viz.cli calibrate --out "$R/calib-2.json" --label "$LABEL" > "$R/calib-2.txt"; cat "$R/calib-2.txt"
smi mid
step 85 python3 tools/gpu/retime.py --out "$R/retime.json" copy_guarded copy_grid_stride reduce_interleaved \
  shared_stride@shared-stride-8 shared_stride@shared-stride-1 char-stride-4 pad-tile-64x64-pad copy_float4 transpose-tile
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
step 45 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_calibrate.py
smi after
ls -la "$R"
