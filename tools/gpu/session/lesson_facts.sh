#!/bin/bash
# Device facts for the lessons' wording: assets/measurements/h100-lessons-2026-11-26.json and
# docs/GPU.md (ptxas's never-true LDS before an LDGSTS). Run from the repo root on the device machine:
#   bash tools/gpu/session/lesson_facts.sh
# 1. ncu's metric names for STSM, LDSM and LDGSTS (query-metrics, --chip gh100);
# 2. tools/gpu/session/lesson_facts.cu under Nsight Compute: STSM / LDGSTS counters, shared
#    atomics (result used on one address, 16 x 2, a weighted and a +1 histogram of 8 bins),
#    and the SASS of each kernel (where the never-true LDS stand, what nvcc made of atomicAdd);
# 3. TMA boxes whose first byte is not a multiple of 16 (tools/gpu/session/kinds_probe.cu,
#    one process each): do they fault, where do the elements land, how many sectors.
# Writes $OUT/lesson_facts/: log.txt, metrics.txt, sass.txt, ncu.csv, tma.txt. About a minute.
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/lesson_facts"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
export PATH=/usr/local/cuda/bin:$PATH
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
echo "ncu: $NCU"; "$NCU" --version | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
timeout 60 "$NCU" --query-metrics --query-metrics-mode all --chip gh100 > /tmp/qm.txt 2>&1 || \
  timeout 60 "$NCU" --query-metrics --query-metrics-mode all > /tmp/qm.txt 2>&1
grep -E "stsm|ldsm|ldgsts" /tmp/qm.txt | awk '{print $1}' | sort -u > "$D/metrics.txt"
echo "metric names with stsm/ldsm/ldgsts: $(wc -l < "$D/metrics.txt")"; cat "$D/metrics.txt"
timeout 60 nvcc -arch=sm_90a -O3 -o /tmp/lesson_facts tools/gpu/session/lesson_facts.cu || exit 1
/tmp/lesson_facts
cuobjdump -sass /tmp/lesson_facts > "$D/sass.txt"
grep -E "Function|LDS|STS|ATOMS|LDGSTS|STSM|REDUX|VOTE|POPC|SHFL|MATCH|RED" "$D/sass.txt" | grep -v "^\s*$" | head -150
WANT="l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum
smsp__inst_executed_op_shared_atom.sum smsp__inst_executed_op_shared_ld.sum smsp__inst_executed_op_shared_st.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum
smsp__inst_executed_op_ldgsts.sum sm__sass_inst_executed_op_ldgsts.sum
smsp__inst_executed_op_shared_stsm.sum sm__inst_executed_op_shared_stsm.sum sm__sass_inst_executed_op_shared_stsm.sum
smsp__sass_inst_executed_op_shared_stsm.sum"
OK=""; for m in $WANT; do b=${m%.sum}; if grep -qx "$b" "$D/metrics.txt" || grep -q "^$b\b" /tmp/qm.txt; then OK="$OK,$m"; else echo "not listed: $m"; fi; done
OK=${OK#,}; echo "asking: $OK"
timeout 120 "$NCU" --metrics "$OK" --csv --print-units base /tmp/lesson_facts > "$D/ncu.csv" 2> /tmp/ncu.err; echo "ncu rc=$?"; tail -3 /tmp/ncu.err
python3 - "$D/ncu.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if r and r[0].strip('"').isdigit()]
by = collections.defaultdict(dict)
for r in rows:
    by[r[4]][r[-3]] = r[-1]
for k, v in by.items():
    print(k.split("(")[0])
    for m, x in sorted(v.items()):
        print(f"   {m} = {x}")
PY
# 3. TMA boxes starting off a 16-byte boundary (one process each: a fault ends its process only)
BIN=/tmp/kinds_probe
timeout 60 nvcc -arch=sm_90a -O3 -std=c++17 -o "$BIN" tools/gpu/session/kinds_probe.cu || exit 1
Z=$(python3 -c "print(' '.join(['0'] * 64))")
: > "$D/tma.txt"
for spec in "2 0 32 8 1 0" "2 0 32 8 8 0" "4 0 16 8 3 0" "4 0 16 8 4 2" "2 3 64 8 1 0" "2 0 32 8 0 0"; do
  set -- $spec
  echo "0 tma2d 0 $1 $2 $3 $4 $5 $6 1 $Z" > /tmp/case.txt
  echo "== esize $1 swz $2 box ${3}x$4 at ($5,$6)" | tee -a "$D/tma.txt"
  timeout 20 "$BIN" /tmp/case.txt place > /tmp/place.txt 2>&1; echo "rc=$?" | tee -a "$D/tma.txt"
  grep -E "^CASE|FATAL" /tmp/place.txt | tee -a "$D/tma.txt"
  python3 - /tmp/place.txt $spec <<'PY' | tee -a "$D/tma.txt"
import sys
lines = [l for l in open(sys.argv[1]) if l.startswith("PLACE")]
es, swz, bw, bh, x0, y0 = map(int, sys.argv[2:])
if not lines:
    print("no tile read back"); sys.exit()
words = [int(w, 16) for w in lines[0].split()[3:]]
raw = b"".join(w.to_bytes(4, "little") for w in words)
vals = [int.from_bytes(raw[i:i + es], "little") for i in range(0, bw * bh * es, es)]
want = [((y0 + r) * 256 + x0 + c) & (0xFFFF if es == 2 else 0xFFFFFFFF) for r in range(bh) for c in range(bw)]
if swz:
    print("swizzled: first 8 values", vals[:8], "want (unswizzled)", want[:8], "found anywhere:", sum(v in set(vals) for v in want), "of", len(want))
else:
    print("elements where a box at (x0, y0) puts them:", sum(a == b for a, b in zip(vals, want)), "of", len(want), "first", vals[:4], "want", want[:4])
PY
  timeout 60 "$NCU" --metrics l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum --csv "$BIN" /tmp/case.txt count 2>/dev/null | grep -E "tma_ld" | tail -1 | tee -a "$D/tma.txt"
done
echo done
