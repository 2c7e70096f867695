# Why the 8-byte-a-lane loads, the stride-2 reads and the grid-stride loop move on a GPU
# other than the H100: on the GPU machine (the H200 since 2026-11-29), in one device call of
# about 5 minutes (limits add up to under 8), from the repository root, carrying .gpu-wheels:
#   bash tools/gpu/h200_breakdown.sh
# 1. `warpviz calibrate --runs 3` twice: is every figure stable within 5% from one call to
#    the next (the L2-write figure first), is every figure plausible by this GPU's own
#    description (assets/gpus/), and the loaded-latency curve calibrate now measures;
#    the first calibration is then installed where the cost model reads it
#    (assets/calibration/<slug>.json of this copy of the tree) for the predictions below.
# 2. tools/probes/loaded_latency.py: the curve as the H100's was measured.
# 3. The launches: the miss family (stride-2, aos-float3-r, vector-int2 scenarios and the
#    kernels/ entries read_strided@stride-2, read_aos_r, copy_float2, copy_int2), two
#    well-predicted neighbours (copy_float, copy_float4 and their scenarios coalesced,
#    vector-int4) and grid-stride-loop (and copy_grid_stride), timed as `bench` times them
#    and predicted with the calibration of step 1 (bench.json, bench.txt).
# 4. Nsight Compute's full set (--set full) on exactly those timed launches (the
#    bottleneck machinery of viz/gpu/bottleneck.py: same cubins, grids and buffers), at the
#    GPU's own clocks: breakdown.raw.csv (every metric), breakdown.details.txt (sections),
#    bottlenecks.json (viz.gpu.ncu.summarize of each).
# Everything goes into $OUT/h200_breakdown.tgz (steps.sh packs it however the script ends).
set -u
source tools/gpu/steps.sh
steps_begin h200_breakdown
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv | tee "$W/smi-before.csv"
DEV=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
DRV=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
SLUG=$(python3 -c "from viz.gpu.calibration import slug; import sys; print(slug(sys.argv[1]))" "$DEV")
echo "device: $DEV (calibration slug $SLUG)"

# 1. calibrate --runs 3, twice (each writes nothing when implausible or unstable: --json keeps the document)
for r in a b; do
  step 200 python3 -m viz.cli calibrate --runs 3 --json --out "$W/cal-$r.json" \
    --label "$DEV on the workplace device machine, driver $DRV, measured $(date -u +%F) with warpviz calibrate --runs 3" \
    > "$W/cal-$r.doc.json" 2> "$W/cal-$r.err"
  echo "calibrate $r: exit $?"; grep -v "^calibrate: " "$W/cal-$r.err" | tail -4
  python3 -m viz.cli calibrate --show "$W/cal-$r.doc.json" > "$W/cal-$r.txt" 2>&1; cat "$W/cal-$r.txt"
done
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
try:
    a, b = (json.load(open(f"{w}/cal-{r}.doc.json"))["figures"] for r in "ab")
    for k in a:
        if k in b:
            d = abs(a[k]["value"] - b[k]["value"]) / max(abs(a[k]["value"]), 1e-12) * 100
            print(f"{k:<42} {a[k]['value']:>12g} {b[k]['value']:>12g}  {d:5.1f}% {'' if d < 5 else 'DIFFERS'}"
                  f"  runs a {a[k].get('run_values')} b {b[k].get('run_values')}")
except Exception as err:
    print("compare failed:", err)
PY
if [ -s "$W/cal-a.doc.json" ]; then
  cp "$W/cal-a.doc.json" "assets/calibration/$SLUG.json" && echo "installed cal-a as assets/calibration/$SLUG.json"
fi

# 2. the loaded-latency probe as the H100's curve was measured
step 60 python3 tools/probes/loaded_latency.py --json "$W/loaded_latency_probe.json" > "$W/loaded_latency_probe.txt" 2>&1
cat "$W/loaded_latency_probe.txt"

# 3 and 4: the chosen launches, timed and predicted, then profiled
cat > "$W/pick.py" <<'PY'
"""The launches of tools/gpu/h200_breakdown.sh: `bench` restricted to a few scenarios and
kernels/ entries (python3 pick.py bench OUT.json | prep DIR)."""
import json, sys
from pathlib import Path

SCENARIOS = ["stride-2", "aos-float3-r", "vector-int2", "coalesced", "vector-int4", "grid-stride-loop"]
KERNELS = {"read_strided@stride-2", "read_aos_r", "copy_float2", "copy_int2", "copy_float", "copy_float4",
           "copy_grid_stride", "copy_int", "copy_int4"}

from viz.gpu import handwritten
_all = handwritten.manifest
handwritten.manifest = lambda: [k for k in _all() if k.name in KERNELS]
from viz.scenario import load

items = [(n, load(n)) for n in SCENARIOS]
if sys.argv[1] == "bench":
    from viz.gpu.bench import bench
    from viz.gpu import results
    from viz.gpu.cli import format_bench
    doc = bench(items, with_counters=False, sweeps=False, label=sys.argv[3],
                progress=lambda f, t: print(f"[{f * 100:5.1f}%] {t}", file=sys.stderr, flush=True))
    results.save(doc, sys.argv[2])
    print(format_bench(doc))
else:
    from viz.gpu.bottleneck import prep
    from viz.gpu.runner import Session
    session = Session()          # the launches bench times here: this GPU's SMs, L2 and free memory
    limits = session.limits()
    session.close()
    print(f"limits: {limits}")
    s = prep(Path(sys.argv[2]), items=items, limits=limits)
    print(json.dumps(s["batches"]))
PY
step 150 python3 "$W/pick.py" bench "$W/bench.json" "$DEV, the h200_breakdown launches, $(date -u +%F)" > "$W/bench.txt" 2> "$W/bench.err"
tail -3 "$W/bench.err"; cat "$W/bench.txt"

B=/tmp/wv-h200-breakdown; rm -rf "$B"; mkdir -p "$B"
step 60 python3 "$W/pick.py" prep "$B" || exit 1
cp "$B/index.json" "$W/"
for spec in "$B"/batch-*.json; do
  b=$(basename "$spec" .json)
  step 240 ncu --set full --import-source no --target-processes all --kernel-name-base function --launch-skip 1 \
    --clock-control none --print-units base -f -o "$B/$b" python3 -m viz.gpu.ncu_driver "$spec" > "$W/$b.ncu.log" 2>&1
  tail -3 "$W/$b.ncu.log"
  [ -f "$B/$b.ncu-rep" ] || continue
  ncu -i "$B/$b.ncu-rep" --page raw --csv --print-units base > "$B/$b.raw.csv" 2>/dev/null
  cp "$B/$b.raw.csv" "$W/"
  ncu -i "$B/$b.ncu-rep" --page details --print-details all --print-units base > "$W/$b.details.txt" 2>/dev/null
  [ "$(stat -c %s "$B/$b.ncu-rep")" -lt 30000000 ] && cp "$B/$b.ncu-rep" "$W/"
done
step 40 python3 -m viz.gpu.bottleneck collect "$B" --out "$W/bottlenecks.json"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv > "$W/smi-after.csv"
gzip -f "$W"/*.raw.csv "$W"/*.details.txt 2>/dev/null
echo "done in $(elapsed) s"
