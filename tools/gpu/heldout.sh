# The held-out set on the GPU machine, in one device call of under 9 minutes (run from the
# repository root there; carry .gpu-wheels and .real):
#   bash tools/gpu/heldout.sh                       (HELDOUT_BATCHES=4 bash ...: only batch 4)
# 1. writes the held-out launch files (tools/gpu/heldout.py write: .real/heldout-*),
# 2. traces each launch's first blocks (warpviz trace --blocks, no Nsight Compute),
# 3. predicts every traced launch with no GPU and writes predicted.json BEFORE anything is
#    timed (warpviz bench --traces --dry-run),
# 4. times and predicts them (warpviz bench --traces ... --out heldout.json --label ...; the
#    predictions use the shipped calibration, as in step 3),
# then packs everything into $OUT/heldout.tgz (the machine returns at most 8 files).
# Each step runs under `timeout`; a step that fails or hangs costs only its own results.
# Expected: setup 30-60 s, traces 33 x 5-10 s, predictions 60-120 s, timings 60-120 s.
set -u
source tools/gpu/steps.sh
steps_begin heldout
mkdir -p "$W/traces" "$W/logs"
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
step 60 python3 tools/gpu/heldout.py write --real .real > "$W/logs/write.txt" || { cat "$W/logs/write.txt"; exit 1; }
python3 tools/gpu/heldout.py list --real .real ${HELDOUT_BATCHES:+--batches "$HELDOUT_BATCHES"} > "$W/list.tsv"
cp -r .real/triton "$W/triton-launch" 2>/dev/null
PAIRS=()
while IFS=$'\t' read -r name launch blocks expect; do
  [ "$(elapsed)" -gt 330 ] && { echo "skip $name: the trace budget (330 s) is spent"; continue; }
  cp "$launch" "$W/logs/" 2>/dev/null
  if step 150 python3 -m viz.cli trace "$launch" --blocks "$blocks" --json --out "$W/traces/$name.wvtrace" \
       > "$W/logs/$name.trace.json" 2> "$W/logs/$name.trace.err"; then
    PAIRS+=("$W/traces/$name.wvtrace" "$launch")
  else
    tail -3 "$W/logs/$name.trace.err"
  fi
done < "$W/list.tsv"
echo "traced ${#PAIRS[@]} files (pairs x 2) in $(elapsed) s"
[ "${#PAIRS[@]}" -gt 0 ] || { echo "nothing traced: no timing (bench --traces with no file would time the shipped traces)"; exit 1; }
# predicted before timing: no GPU is used here (nvcc for the resources, then the cost model)
step 120 python3 -m viz.cli bench --traces "${PAIRS[@]}" --dry-run --json > "$W/predicted.json" 2> "$W/logs/predict.err"
tail -2 "$W/logs/predict.err"
LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), held-out set (tools/gpu/heldout.py) measured $(date -u +%F) with warpviz bench --traces"
step 200 python3 -m viz.cli bench --traces "${PAIRS[@]}" --no-counters --out "$W/heldout.json" \
  --label "$LABEL" > "$W/bench.txt" 2> "$W/logs/bench.err"
tail -3 "$W/logs/bench.err"; cat "$W/bench.txt"
[ -f "$W/heldout.json" ] && python3 tools/gpu/heldout.py table "$W/heldout.json" --markdown | tee "$W/table.md"
echo "done in $(elapsed) s"
