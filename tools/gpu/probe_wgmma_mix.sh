#!/bin/bash
# wgmma beside other shared-memory traffic on the H200 (run from the repo root on the device
# machine; needs nvcc and ncu only):   bash tools/gpu/probe_wgmma_mix.sh
# tools/gpu/probe_wgmma_mix.cu: 14 launches of one block: 1, 2 or 4 warpgroups issuing wgmma
# together (on the same or on different bytes), and 1 or 2 warpgroups of wgmma while the other
# warpgroups run LDS / STS / LDS.128 / 32-way-conflicting LDS on the same banks. About 40 s.
# Writes $OUT/probe_wgmma_mix.tgz (probe_wgmma_mix/: log.txt, configs.csv, ncu.csv, sass.txt).
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/probe_wgmma_mix"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
export PATH="${CUDA_ROOT:-/usr/local/cuda}/bin:$PATH"
pack() { (cd "$OUT" && tar czf probe_wgmma_mix.tgz probe_wgmma_mix && ls -la probe_wgmma_mix.tgz); }
trap pack EXIT
BIN=/tmp/probe_wgmma_mix
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
"$NCU" --version | tail -1; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd tools/gpu && timeout 120 nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -o "$BIN" probe_wgmma_mix.cu) || exit 1
cuobjdump -sass "$BIN" | grep -E "Function|GMMA|LDS|STS" > "$D/sass.txt"
timeout 60 "$BIN" > "$D/configs.csv" || echo "PLAIN RUN FAILED"
M=sm__inst_executed_pipe_tensor_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum,sm__sass_data_bytes_mem_shared_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
timeout 150 "$NCU" --metrics "$M" --csv --page raw --print-units base --log-file "$D/ncu.csv" "$BIN" > /dev/null
echo "ncu rc=$?"
python3 - "$D" <<'PY'
import csv, sys
d = sys.argv[1]
cfg = list(csv.DictReader(open(f"{d}/configs.csv")))
rows = [r for r in csv.DictReader(l for l in open(f"{d}/ncu.csv") if l.startswith('"')) if r.get("ID", "").isdigit()]
keys = [k for k in (rows[0] if rows else {}) if k.endswith(".sum")]
print("launch threads gmma_groups stride mode | " + " ".join(k.replace("l1tex__data_pipe_lsu_wavefronts_mem_shared", "wf")
      .replace("l1tex__data_bank_conflicts_pipe_lsu_mem_shared", "cf").replace(".sum", "") for k in keys))
for c, r in zip(cfg, rows):
    print(c["launch"], c["block_threads"], c["gmma_groups"], c["stride"], c["mode"], "|", " ".join(r[k] for k in keys))
PY
