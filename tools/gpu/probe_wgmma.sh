#!/bin/bash
# wgmma reads of shared memory on Hopper, measured with Nsight Compute (run from the repo root
# on the device machine; needs only nvcc, cuobjdump and ncu, no PyCUDA, no carried files):
#   bash tools/gpu/probe_wgmma.sh
# tools/gpu/probe_wgmma.cu: one warpgroup issues wgmma.mma_async m64nNk16 f32.f16.f16 with
# matrix descriptors built on the device from each launch's parameters; 354 launches in two
# Nsight Compute processes (part 1: every kernel and swizzle mode canonical, loop-count check,
# LBO/SBO sweeps without swizzle; part 2: swizzled start offsets, SBO, LBO, base offsets).
# About 2 to 3 minutes. Writes $OUT/probe_wgmma.tgz holding probe_wgmma/: log.txt,
# query-metrics.txt (+ query-gmma.txt), metrics.txt, table-{1,2}.csv (the config of every
# launch, in launch order = Nsight Compute's ID), ncu-{1,2}.csv, ncu-{1,2}.err, sass.txt,
# sass-hgmma.txt, summary.txt.
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/probe_wgmma"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
export PATH="${CUDA_ROOT:-/usr/local/cuda}/bin:$PATH"
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
pack() { (cd "$OUT" && tar czf probe_wgmma.tgz probe_wgmma && ls -la probe_wgmma.tgz); }
trap pack EXIT
BIN=/tmp/probe_wgmma
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
echo "ncu: $NCU"; "$NCU" --version | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

step 120 nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -o "$BIN" tools/gpu/probe_wgmma.cu || exit 1
cuobjdump -sass "$BIN" > "$D/sass.txt"
grep -E "Function|HGMMA|WARPGROUP|LDS|STS" "$D/sass.txt" > "$D/sass-hgmma.txt"
grep -oE "HGMMA[.A-Z0-9_x]*" "$D/sass.txt" | sort | uniq -c

step 40 bash -c "'$NCU' --query-metrics --chip gh100 > '$D/query-metrics.txt' 2>&1"
grep -iE 'gmma|tensor' "$D/query-metrics.txt" > "$D/query-gmma.txt"; cat "$D/query-gmma.txt"
python3 - "$D/query-metrics.txt" "$D/metrics.txt" <<'PY'
import sys
have = {line.split()[0] for line in open(sys.argv[1], errors="replace") if line.strip() and not line.startswith(" ")}
want = ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma",
        "sm__sass_data_bytes_mem_shared_op_gmma", "sm__inst_executed_pipe_tensor_op_gmma",
        "smsp__inst_executed", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st", "l1tex__data_pipe_lsu_wavefronts_mem_shared",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared", "smsp__inst_executed_op_shared_ld",
        "smsp__inst_executed_op_shared_st", "l1tex__data_bank_reads", "l1tex__data_bank_writes"]
extra = sorted(h for h in have if "gmma" in h and h not in want)[:8]
use = ([w for w in want if w in have] if want[0] in have else want) + extra
print("metrics missing from the query:", [w for w in want if have and w not in have])
print("extra gmma metrics:", extra)
open(sys.argv[2], "w").write(",".join(m + ".sum" for m in use))
PY
cat "$D/metrics.txt"; echo

step 60 "$BIN" all "$D/table-plain.csv" || echo "PLAIN RUN FAILED (a fault shows here, before the profiler)"
"$BIN" count x

prof() {
  local part=$1 lim=$2
  step "$lim" "$NCU" --metrics "$(cat "$D/metrics.txt")" --csv --page raw --print-units base \
    "$BIN" "$part" "$D/table-$part.csv" > "$D/ncu-$part.csv" 2> "$D/ncu-$part.err"
  echo "part $part: $(grep -c '^"[0-9]' "$D/ncu-$part.csv") profiled rows"; tail -3 "$D/ncu-$part.err"
}
prof 1 150
prof 2 110

python3 - "$D" > "$D/summary.txt" <<'PY'
import csv, sys, os
d = sys.argv[1]
for part in ("1", "2"):
    try:
        table = list(csv.DictReader(open(os.path.join(d, f"table-{part}.csv"))))
        lines = [l for l in open(os.path.join(d, f"ncu-{part}.csv")) if l.startswith('"')]
        rows = list(csv.DictReader(lines))
    except OSError as err:
        print("part", part, err); continue
    rows = [r for r in rows if r.get("ID", "").isdigit()]
    print(f"part {part}: {len(table)} launches in the table, {len(rows)} ncu rows")
    keys = [k for k in (rows[0].keys() if rows else []) if "__" in k]
    short = {k: k.replace("l1tex__data_pipe_lsu_wavefronts_mem_shared", "wf").replace(
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared", "cf").replace("sm__sass_data_bytes_mem_shared", "bytes")
        .replace("sm__inst_executed_pipe_tensor", "inst").replace(".sum", "") for k in keys}
    print("  ".join(["launch", "group", "kernel", "a(off,lbo,sbo,swz,base)", "b(off,lbo,sbo,swz,base)", "loops"]
                    + [short[k] for k in keys]))
    for t, r in zip(table, rows):
        a = f"({t['a_off']},{t['a_lbo']},{t['a_sbo']},{t['a_swz']},{t['a_base']})"
        b = f"({t['b_off']},{t['b_lbo']},{t['b_sbo']},{t['b_swz']},{t['b_base']})"
        print("  ".join([t["launch"], t["group"], t["kernel"], a, b, t["loops"]] + [r[k] for k in keys]))
PY
head -40 "$D/summary.txt"
