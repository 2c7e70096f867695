#!/bin/bash
# `warpviz validate` of the cp.async / TMA / shared-atomic built-ins and of random scenarios of
# those kinds against Nsight Compute on the H100, then the probes' instruction counters
# (smsp__*) on a subset of kinds_probe.sh's cases. Made the `validate` part of
# assets/measurements/h100-kinds-2026-11-23.json.
# Run from the repo root on the device machine:  bash tools/gpu/session/kinds_validate.sh
# Device time: about 100 s expected, under 150 s with device_setup.sh: each step has its
# own `timeout` (50 + 40 s of validate; the probe step only if under 80 s have passed,
# and it ends by 115 s; then at most 10 + 5 s).
# Writes under $OUT/kinds_validate/: log.txt, validate.json and validate-tma.json (built-ins then
# random scenarios),
# probe-smsp.csv and probe-smsp.json (the probes' instruction counters), sass-builtins.txt.
# (The probe of the rules is tools/gpu/session/kinds_probe.sh.)
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/kinds_validate"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
T0=$(date +%s)
# Two Nsight Compute sessions, so that a fault in a TMA kernel cannot take the others with it.
step 50 python3 -m viz.cli validate cp-async-pipeline shared-histogram-few-bins shared-histogram-many-bins \
  --random 16 --seed 23 --kinds cp.async,atomic --json > "$D/validate.json"
step 40 python3 -m viz.cli validate tma-swizzle-none tma-swizzle-32b tma-swizzle-64b tma-swizzle-128b tma-ldmatrix-none tma-ldmatrix-128b \
  --random 8 --seed 23 --kinds tma.load --json > "$D/validate-tma.json"
python3 - "$D/validate.json" "$D/validate-tma.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    t = open(f).read()
    if "[" not in t:
        print(f, "no results"); continue
    v = json.loads(t[t.index("["):t.rindex("]") + 1])
    print(f, "matching:", sum(r["match"] is True for r in v), "of", len(v))
    for r in v:
        bad = [(x["metric"], x["model"], x["hardware"]) for x in r["rows"] if not x["match"]]
        print(" ", r["label"], "MATCH" if r["match"] else "MISMATCH", r["error"] or "", bad)
PY
# The probes' instruction counters (kinds_probe.sh could not list the smsp__ metrics in time).
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | tail -1)
if [ $(( $(date +%s) - T0 )) -lt 80 ]; then
  step 10 nvcc -arch=sm_90a -O3 -std=c++17 -o /tmp/kinds_probe tools/gpu/session/kinds_probe.cu
  python3 tools/gpu/session/kinds_probe.py cases /tmp/kinds_cases.txt "$D/cases.json" > /dev/null
  LEFT=$(( 115 - ($(date +%s) - T0) )); [ "$LEFT" -gt 25 ] && LEFT=25
  step "$LEFT" "$NCU" --metrics smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_shared_atom.sum,smsp__inst_executed.sum,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum \
    --csv --print-units base --kernel-name-base function /tmp/kinds_probe /tmp/kinds_cases.txt count tma2d,atomicadd_cpp,atom_u32 \
    > "$D/probe-smsp.csv" 2> "$D/probe-smsp.err"
  timeout 10 python3 tools/gpu/session/kinds_probe.py collect "$D/cases.json" /dev/null "$D/probe-smsp.json" "$D/probe-smsp.csv"
fi
timeout 5 python3 - > "$D/sass-builtins.txt" 2>&1 <<'PY'
import re, subprocess, tempfile
from pathlib import Path
from viz.scenario import load
from viz.gpu.codegen import generate
from viz.toolchain.compile import compile_cubin, find_tool
for n in ["cp-async-pipeline", "shared-histogram-many-bins"]:
    print("==", n)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "k.cubin"
        p.write_bytes(compile_cubin(generate(load(n)).source))
        out = subprocess.run([find_tool("cuobjdump"), "--dump-sass", str(p)], capture_output=True, text=True).stdout
    print("\n".join(ln.strip() for ln in out.splitlines()
                    if re.search(r"\b(LDGSTS|LDGDEPBAR|DEPBAR|ATOMS|RED|ATOM|UTMALDG|UBLKCP|SYNCS|LDS|STS|LDG|STG)\b", ln)))
PY
echo "kinds_validate: done in $(( $(date +%s) - T0 )) s"
ls -la "$D"
