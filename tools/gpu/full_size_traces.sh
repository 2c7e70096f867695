# Two traced launches at their full size, traced, predicted and timed on the GPU
# machine in one device call of about 2 minutes (run from the repository root there; carry
# .gpu-wheels): the 16x16-tile SGEMM at 1024^3 (kernels/trace/sgemm_tile16.cu on a 64x64
# grid) and the AoS particle update over 1,048,576 structs of 28 and of 32 bytes
# (kernels/trace/particles_aos.cu, grid 8192). Their launch files are the shipped small ones
# scaled up, written into a temporary folder beside a copy of the source. Each is traced
# (its first blocks), predicted with no GPU before anything is timed (predicted.json), then
# timed and predicted by `warpviz bench --traces` (timed.json); everything goes into
# $OUT/full_size_traces.tgz.
set -u
source tools/gpu/steps.sh
steps_begin full_size_traces
mkdir -p "$W/traces" "$W/launch"
source tools/gpu/device_setup.sh
L="$W/launch"
cp kernels/trace/sgemm_tile16.cu kernels/trace/particles_aos.cu "$L/"
sed 's/grid = \[8, 8\]/grid = [64, 64]/; s/count = 16384/count = 1048576/; s/value = 128/value = 1024/; s/^title = .*/title = "Tiled SGEMM 1024^3, 16x16 tiles"/' \
  kernels/trace/sgemm_tile16.launch.toml > "$L/sgemm_tile16_1024.launch.toml"
n=1048576
for k in 28 32; do
  sed "s/grid = \[8\]/grid = [$((n / 128))]/; s/count = $((1000 * k / 4))\$/count = $((n * k / 4))/; s/value = 1000\$/value = $n/; s/^title = .*/title = \"AoS particle update, $k-byte struct, 1,048,576 particles\"/" \
    "kernels/trace/particles_aos$k.launch.toml" > "$L/particles_aos${k}_1m.launch.toml"
done
grep -H "grid\|count\|value = " "$L"/*.toml
PAIRS=()
for spec in sgemm_tile16_1024:0-63 particles_aos28_1m:0-1023 particles_aos32_1m:0-1023; do
  name=${spec%%:*}; blocks=${spec#*:}
  step 120 python3 -m viz.cli trace "$L/$name.launch.toml" --blocks "$blocks" --json --out "$W/traces/$name.wvtrace" \
    > "$W/$name.trace.json" 2> "$W/$name.trace.err" && PAIRS+=("$W/traces/$name.wvtrace" "$L/$name.launch.toml")
  tail -1 "$W/$name.trace.err"
done
[ "${#PAIRS[@]}" -gt 0 ] || exit 1
step 150 python3 -m viz.cli bench --traces "${PAIRS[@]}" --dry-run --json > "$W/predicted.json" 2> "$W/predict.err"
tail -1 "$W/predict.err"
step 150 python3 -m viz.cli bench --traces "${PAIRS[@]}" --no-counters --out "$W/timed.json" \
  --label "$(nvidia-smi --query-gpu=name --format=csv,noheader), full-size SGEMM and AoS traces, $(date -u +%F)" > "$W/bench.txt" 2> "$W/bench.err"
tail -2 "$W/bench.err"; cat "$W/bench.txt"
echo "done in $(elapsed) s"
