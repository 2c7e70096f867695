#!/bin/bash
# h12async, device run 2: `warpviz validate` of the cp.async / TMA / shared-atomic built-ins
# and of random scenarios of those kinds, against Nsight Compute on the H100.
# Run from the repo root on the device machine:  bash tools/gpu/session/h12async.sh
# Total run time: about 2 minutes expected, under 4 at worst (each step has its own
# `timeout`; the limits add up to 215 s after device_setup.sh).
# Writes under $OUT/h12async/: log.txt, validate-builtins.json, validate-random.json,
# sass-builtins.txt (the memory instructions of the built-ins' generated kernels).
# (Device run 1, the probe of the rules, is tools/gpu/session/h12async-probe.sh.)
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/h12async"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
T0=$(date +%s)
BUILTINS="cp-async-pipeline tma-swizzle-none tma-swizzle-32b tma-swizzle-64b tma-swizzle-128b shared-histogram-few-bins shared-histogram-many-bins"

step 80 python3 -m viz.cli validate $BUILTINS --json > "$D/validate-builtins.json"
python3 - "$D/validate-builtins.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for r in v:
    bad = [x for x in r["rows"] if not x["match"]]
    print(r["label"], "MATCH" if r["match"] else "MISMATCH", r["error"] or "", [(x["metric"], x["model"], x["hardware"]) for x in bad])
PY
step 110 python3 -m viz.cli validate --random 36 --seed 23 --kinds cp.async,atomic,tma.load --json > "$D/validate-random.json"
python3 - "$D/validate-random.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print("random kind scenarios matching:", sum(r["match"] is True for r in v), "of", len(v))
for r in v:
    if r["match"] is not True:
        bad = [x for x in r["rows"] if not x["match"]]
        print(" ", r["label"], r["error"] or "", [(x["metric"], x["model"], x["hardware"]) for x in bad])
PY
timeout 25 python3 - > "$D/sass-builtins.txt" 2>&1 <<'PY'
import re, subprocess, tempfile
from pathlib import Path
from viz.scenario import load
from viz.gpu.codegen import generate
from viz.gpu.compile import compile_cubin, find_tool
for n in ["cp-async-pipeline", "tma-swizzle-128b", "shared-histogram-many-bins"]:
    print("==", n)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "k.cubin"
        p.write_bytes(compile_cubin(generate(load(n)).source))
        out = subprocess.run([find_tool("cuobjdump"), "--dump-sass", str(p)], capture_output=True, text=True).stdout
    print("\n".join(ln.strip() for ln in out.splitlines()
                    if re.search(r"\b(LDGSTS|LDGDEPBAR|DEPBAR|ATOMS|RED|ATOM|UTMALDG|UBLKCP|SYNCS|LDS|STS|LDG|STG)\b", ln)))
PY
echo "h12async run 2: done in $(( $(date +%s) - T0 )) s"
ls -la "$D"
