# The whole GPU work in one device call (run from the repo root on the device machine):
#   bash tools/gpu/device_run.sh [quick|full]
# Writes under $OUT: log.txt (everything), validate.json, h100.json (the results file),
# sass.txt (memory instructions of some kernels), and pycuda-built-cp312.tar.gz on the
# first call. Each step has its own time limit so one hang cannot eat the whole call.
set -u
MODE=${1:-full}
OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total,power.limit,clocks_event_reasons.active --format=csv
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)" >&2; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s" >&2; }
if [ "$MODE" = quick ]; then
  step 240 python3 -m viz.cli validate coalesced vector-int4 transpose-tile-pad reduction-tree float3-whole char-shared --random 6 --seed 3
  step 240 python3 -m viz.cli bench coalesced vector-int4 transpose-tile-pad --no-sweeps --out "$OUT/quick.json"
  step 200 python3 -m pytest -m gpu -x -q -p no:cacheprovider tests/test_gpu_device.py -k "spread or fault or write"
elif [ "$MODE" = tests ]; then
  step 300 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_device.py
  step 200 python3 -m viz.cli validate --random 60 --seed 23 --json > "$OUT/validate-random.json"
else
  LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), CUDA 13.0, measured $(date -u +%F) with warpviz bench --all"
  step 300 python3 -m viz.cli bench --all --out "$OUT/h100.json" --label "$LABEL"
  step 120 python3 -m viz.cli validate --random 100 --seed 11 --json > "$OUT/validate.json"
  python3 -c "import json; v=json.load(open('$OUT/validate.json')); print('random scenarios matching:', sum(r['match'] is True for r in v), 'of', len(v))"
  step 60 python3 tools/probes/shared_wide_phases.py --json "$OUT/probes.json"
  step 240 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_device.py
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
fi
python3 - <<'PY' > "$OUT/sass.txt" 2>&1
from viz.scenario import load
from viz.gpu.codegen import generate
from viz.toolchain.compile import compile_cubin, sass_memory_instructions
from viz.gpu import handwritten
for n in ["vector-int4", "float3-whole", "transpose-tile-pad", "reduction-tree", "shared-stride-2", "double-tile"]:
    print("==", n)
    print("\n".join(sass_memory_instructions(compile_cubin(generate(load(n)).source)) or ["(no cuobjdump)"]))
for f in ["copy.cu", "transpose.cu", "gemm.cu"]:
    print("== kernels/" + f)
    print("\n".join(sass_memory_instructions(compile_cubin(handwritten.file_source(f))) or ["(no cuobjdump)"]))
PY
ls -la "$OUT"
