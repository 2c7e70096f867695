# A GPU's shipped figures, measured on it in one device call of under 9 minutes (run from the
# repository root on the GPU machine, carrying .gpu-wheels):
#   bash tools/gpu/calibrate_bench_all.sh
# 1. `warpviz calibrate --runs 3` (three GPU processes; nothing is written when a figure is
#    implausible by the GPU's own description or its runs differ by more than 5%: --json keeps
#    the document), installed where the cost model reads it (assets/calibration/<slug>.json of
#    this copy) when it was written;
# 2. `warpviz bench --all` with Nsight Compute (the counters of every built-in and kernels/
#    entry, and the bottleneck of every timed launch) and the sweeps: every launch predicted
#    with that calibration on the device before it is timed;
# 3. the accuracy of those predictions (within 20%, the spreads), printed.
# Ship $OUT/calibrate_bench_all/calibration.json as assets/calibration/<slug>.json and
# measurements.json as assets/measurements/<gpu>.json (e.g. h200.json). The held-out set is
# tools/gpu/heldout.sh, a second call (it predicts with the installed calibration).
# Expected: setup 15 s, calibrate about 45 s, bench --all 330-450 s (limit 460 s).
set -u
source tools/gpu/steps.sh
steps_begin calibrate_bench_all
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv | tee "$W/smi-before.csv"
DEV=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
DRV=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
SLUG=$(python3 -c "from viz.gpu.calibration import slug; import sys; print(slug(sys.argv[1]))" "$DEV")
WHERE="$DEV on the workplace device machine, driver $DRV, CUDA 13.0"

step 150 python3 -m viz.cli calibrate --runs 3 --json --out "$W/calibration.json" \
  --label "$WHERE, measured $(date -u +%F) with warpviz calibrate --runs 3" > "$W/calibration.doc.json" 2> "$W/calibration.err"
echo "calibrate: exit $?"; grep -v "^calibrate: " "$W/calibration.err" | tail -3
python3 -m viz.cli calibrate --show "$W/calibration.doc.json" > "$W/calibration.txt" 2>&1; cat "$W/calibration.txt"
if [ -s "$W/calibration.json" ]; then
  cp "$W/calibration.json" "assets/calibration/$SLUG.json" && echo "installed assets/calibration/$SLUG.json"
else
  echo "calibration NOT written (see above): predicting with the checkout's assets/calibration/$SLUG.json" \
       "$( [ -f "assets/calibration/$SLUG.json" ] && echo present || echo ABSENT)"
fi

step 460 python3 -m viz.cli bench --all --out "$W/measurements.json" \
  --label "$WHERE, measured $(date -u +%F) with warpviz bench --all" > "$W/bench.txt" 2> "$W/bench.err"
tail -4 "$W/bench.err"; head -3 "$W/bench.txt"
python3 - "$W/measurements.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as err:
    sys.exit(f"no results file: {err}")
rows = []
for sec in ("scenarios", "kernels"):
    for n, e in d.get(sec, {}).items():
        t = e.get("timing") or {}
        p = (t.get("predicted") or {}).get("ms")
        if t.get("median_ms") and p:
            rows.append((t["median_ms"] / p, f"{sec}:{n}", t.get("spread", 0), (t.get("predicted") or {}).get("bound")))
for sw, v in (d.get("sweeps") or {}).items():
    for pt in v.get("points", []):
        if pt.get("median_ms") and pt.get("predicted_ms"):
            rows.append((pt["median_ms"] / pt["predicted_ms"], f"sweep:{sw}:{pt.get('label')}", 0, ""))
ok = [r for r in rows if abs(1 / r[0] - 1) <= 0.2]
print(f"{len(ok)} of {len(rows)} timed entries predicted within 20% (measured/predicted "
      f"{min(r[0] for r in rows):.2f}-{max(r[0] for r in rows):.2f})")
for r in sorted(rows):
    if abs(1 / r[0] - 1) > 0.2 or r[2] >= 0.05:
        print(f"  {r[1]:<45} measured/predicted {r[0]:.3f} spread {100 * r[2]:.1f}% bound {r[3]}")
print("counters:", sum(1 for s in ("scenarios", "kernels") for e in d.get(s, {}).values() if e.get("match")), "match,",
      sum(1 for s in ("scenarios", "kernels") for e in d.get(s, {}).values() if e.get("match") is False), "differ")
PY
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv > "$W/smi-after.csv"
echo "done in $(elapsed) s"
