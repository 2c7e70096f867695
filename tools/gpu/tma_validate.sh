#!/bin/bash
# Trace Triton's TMA kernels and the attention forward with warpviz on the
# H200 and compare every counter with Nsight Compute (run from the repo root on the device
# machine; carry .gpu-wheels for PyCUDA):
#   bash tools/gpu/tma_validate.sh                 (everything, at most about 9 minutes)
#   bash tools/gpu/tma_validate.sh --traces-only   (steps 2 and 3 only, the cases of
#       WARPVIZ_TMA_CASES, by default copy2d_dev,copy2d_dev_st,oob2d,load3d,attention; under 4 minutes)
# 1. the one-copy CUDA probe again (tools/gpu/probe_tma_cases.cu: out-of-bounds boxes, several
#    lanes issuing, stores, reductions, bulk copies, element strides), each case checked alone
#    first so a faulting case cannot take the others down;
# 2. warpviz trace --validate of kernels/format2/tma_copy_triton.launch.toml (the trace shipped
#    in assets/traces);
# 3. pytest -m gpu tests/test_tma_gpu.py: trace_triton(..., validate=True) of copy2d_dev,
#    copy2d_dev_st, load3d, oob2d, matmul_tma, attention_tma, attention and matmul; each case's
#    validation JSON and trace go to $OUT/tma_validate/traces/, and a summary of the counters
#    that differ is printed.
# PyCUDA is built from the sdist the first time (~2 min); the pytest step gets what is left of
# the budget (540 s, or 220 s with --traces-only), so cases at the end may not run.
# Writes $OUT/tma_validate.tgz.
set -u
source tools/gpu/steps.sh
steps_begin tma_validate
D="$W"; mkdir -p "$D/cases"
BUDGET=540; PROBE=1
if [ "${1:-}" = --traces-only ]; then
  BUDGET=220; PROBE=0
  export WARPVIZ_TMA_CASES=${WARPVIZ_TMA_CASES:-copy2d_dev,copy2d_dev_st,oob2d,load3d,attention}
fi
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}; export PATH="$CUDA_ROOT/bin:$PATH"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
M="l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum,l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum,l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum,l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum,l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_red.sum,sm__inst_executed_pipe_tma.sum,sm__inst_executed_pipe_tma_pred_on_any.sum,l1tex__tmain_requests.sum,sm__sass_inst_executed_op_tma_ld.sum,sm__sass_inst_executed_op_tma_st.sum,sm__sass_inst_executed_op_tma_red.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__m_xbar2l1tex_read_sectors_pipe_tma.sum,l1tex__m_l1tex2xbar_write_sectors_pipe_tma.sum,l1tex__m_xbar2l1tex_read_bytes_pipe_tma.sum"

# 1. the CUDA probe: every case alone first, then the ones that ran under ncu in one process
B=/tmp/probe_tma_cases
if [ "$PROBE" = 1 ] && step 60 nvcc -arch=sm_90a -O2 -std=c++17 -lineinfo -o "$B" tools/gpu/probe_tma_cases.cu; then
  cuobjdump -sass "$B" > "$D/cases/probe.sass" 2>&1
  n=$(grep -c "cs.push_back" tools/gpu/probe_tma_cases.cu)
  good=""
  for i in $(seq 0 $((n - 1))); do
    if timeout 20 "$B" "$D/cases/one-$i.json" $i $i > /dev/null 2>> "$D/cases/alone.txt"; then good="$good $i"; else echo "case $i failed alone" >> "$D/cases/alone.txt"; fi
  done
  echo "cases that run: $good"
  # the bulk copies first (the first run reached case 45 of 54 in its time), then the rest
  order="$(for i in $good; do [ "$i" -ge 46 ] && echo -n "$i "; done)$(for i in $good; do [ "$i" -lt 46 ] && echo -n "$i "; done)"
  for i in $order; do
    timeout 30 "$NCU" --metrics "$M" --csv --print-units base --kernel-name tma_case "$B" "$D/cases/ncu-$i.json" $i $i \
      > "$D/cases/ncu-$i.csv" 2>/dev/null
    [ $(( $(date +%s) - T0 )) -gt 90 ] && { echo "stopping the probe at case $i: time"; break; }
  done
fi
source tools/gpu/device_setup.sh
# 2. warpviz on the shipped launch file (its trace is for assets/traces); 3. trace_triton on each case
step 120 python3 -m viz.cli trace kernels/format2/tma_copy_triton.launch.toml --validate \
  --out "$D/tma_copy_triton.wvtrace" > "$D/tma_copy_triton.txt" 2>&1
tail -40 "$D/tma_copy_triton.txt"
export WARPVIZ_TMA_OUT="$D/traces"
left=$(( BUDGET - $(elapsed) ))      # the whole script stays under the device's 600 s
step $(( left > 60 ? left : 60 )) python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_tma_gpu.py --no-header -rA 2>&1 | tail -60
python3 - "$D/traces" <<'PY'
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    d = json.loads(p.read_text()); v = d["validation"] or {}
    bad = [r for r in v.get("rows", []) + v.get("other", []) if not r["match"]]
    print(f"{d['case']}: match={v.get('match')} {len(v.get('rows', [])) + len(v.get('other', []))} counters, {len(bad)} differ")
    for r in bad:
        print(f"    {r['metric']}: model {r['model']} ncu {r['hardware']}")
PY
echo "tma_validate: $(elapsed) s"
