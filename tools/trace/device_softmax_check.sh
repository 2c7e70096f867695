# Re-trace softmax_row on the H100 and validate it against Nsight Compute, at the shipped
# launch and at block sizes where its max loop's unrolled body runs (run from the repo root
# on the device machine; `warpviz trace --validate` on each, through device_trace.sh):
#
#   run:  command "bash tools/trace/device_softmax_check.sh", carry [".gpu-wheels"]
#         (here, once: bash tools/gpu/fetch_wheels.sh; about 3 minutes, PyCUDA is built
#         the first time)
#
# kernels/trace/softmax_row.launch.toml (6 blocks x 128 threads, n = 1000) is traced as
# shipped, then the same kernel with 5, 8, 16 and 32 warps a block (softmax_row_wN).
# Expected, from the plain kernel's SASS (tests/data/sass/softmax_row.gp.sass): ptxas
# unrolled nvcc's 4-way unrolled loops again into copies of 4, 2 and 1 iterations. The sum
# loop reads each iteration's partial[4j..4j+3] with one LDS.128 (2 wavefronts: every lane
# reads the same 16 bytes); the max loop (from w = 1) reads the aligned 16 bytes before each
# iteration and the last float with an LDS of its own per copy. Shared-load instructions /
# wavefronts for the whole launch (6 blocks):
#
#   warps a block   H100 (SASS reading)   trace after the SASS mapping   max loop body runs
#   4 (shipped)     120 / 144             120 / 144  match=True          no
#   5               150 / 210             210 / 240  match=False         1 iteration
#   8               384 / 528             480 / 576  match=False         1 iteration
#   16              1,248 / 1,920         1,920 / 2,304  match=False     3 iterations
#   32              4,224 / 7,104         7,680 / 9,216  match=False     7 iterations
#
# For 5 to 32 warps the trace must say "not certain" on exactly the max loop's 4 unrolled
# loads (PTX lines 144-151, source line 17) and differ in the two shared-load metrics only;
# the sum loop's 4 loads are "fused" in every launch. Where the H100's numbers equal the
# first column, the SASS reading above holds and the max loop could be mapped per copy.
# $OUT gets log.txt and traces.tar.gz (NAME.wvtrace + NAME.json per launch), and
# softmax_check.txt: each launch's ten metrics beside the expected figures.
set -u
OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT"
S=/tmp/wv-softmax; mkdir -p "$S"
cp kernels/trace/softmax_row.cu "$S/"
L=(kernels/trace/softmax_row.launch.toml)
for w in 5 8 16 32; do
  sed -e "s/^block = \[128\]/block = [$((32 * w))]/" \
      -e "s/^title = .*/title = \"softmax_row, $w warps a block\"/" \
      kernels/trace/softmax_row.launch.toml > "$S/softmax_row_w$w.launch.toml"
  grep -q "^block = \[$((32 * w))\]" "$S/softmax_row_w$w.launch.toml" || { echo "could not set the block of $w warps"; exit 1; }
  L+=("$S/softmax_row_w$w.launch.toml")
done
bash tools/trace/device_trace.sh "${L[@]}"
python3 - "$OUT/softmax_check.txt" <<'PY'
import json, sys
from pathlib import Path
expect = {"softmax_row": ((120, 144), (120, 144)), "softmax_row_w5": ((150, 210), (210, 240)),
          "softmax_row_w8": ((384, 528), (480, 576)), "softmax_row_w16": ((1248, 1920), (1920, 2304)),
          "softmax_row_w32": ((4224, 7104), (7680, 9216))}
LD, WF = "smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
out = []
for name, (hw, tr) in expect.items():
    p = Path("/tmp/wv-traces") / f"{name}.json"
    try:
        d = json.loads(p.read_text())
    except Exception as err:          # noqa: BLE001 - say it and go on
        out.append(f"{name}: no JSON ({err})")
        continue
    v = d.get("validation") or {}
    rows = {r["metric"]: r for r in v.get("rows", [])}
    got = lambda k, w: rows.get(k, {}).get(w)    # noqa: E731
    smap = (d.get("trace") or {}).get("sass_map") or {}
    out.append(f"{name}: match={v.get('match')} shared loads: ncu {got(LD, 'hardware')} (expected {hw[0]}), trace "
               f"{got(LD, 'model')} (expected {tr[0]}); wavefronts: ncu {got(WF, 'hardware')} (expected {hw[1]}), "
               f"trace {got(WF, 'model')} (expected {tr[1]}); fused {smap.get('fused')}, not certain "
               f"{smap.get('uncertain')}")
    out += [f"    {k}: trace {r['model']} ncu {r['hardware']}" for k, r in rows.items() if not r["match"]]
Path(sys.argv[1]).write_text("\n".join(out) + "\n")
print("\n".join(out))
PY
