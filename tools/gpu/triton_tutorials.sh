#!/bin/bash
# Trace Triton's matmul (03) and fused-attention (06) tutorials as published with
# warpviz.trace_triton(..., validate=True) on the GPU machine (run from the repo root; carry
# .real/triton_tutorials and .gpu-wheels):
#   bash tools/gpu/triton_tutorials.sh
# The tutorial files are unmodified copies in the git-ignored .real/triton_tutorials/ (Triton's
# history as release/3.6.x was cut; MIT licence beside them); tools/gpu/triton_tutorials.py loads
# their definitions without running their tests or benchmarks and traces, in this order: 06
# causal forward with host TensorDescriptors (CUtensorMap parameters), 03 matmul (the autotuner's
# choice), 06 non-causal with host descriptors, 06 causal with warp_specialize=True (device
# descriptors). About 3-4 minutes. Writes $OUT/triton_tutorials.tgz.
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/triton_tutorials"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
T0=$(date +%s)
[ -f .real/triton_tutorials/tutorial_06_fused_attention.py ] || { echo "no .real/triton_tutorials: carry it"; exit 1; }
source tools/gpu/device_setup.sh
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
left=$(( 225 - ($(date +%s) - T0) ))
timeout $(( left + 20 )) python3 tools/gpu/triton_tutorials.py "$D" "$left"
echo "triton_tutorials: $(( $(date +%s) - T0 )) s"
tar czf "$OUT/triton_tutorials.tgz" -C "$OUT" triton_tutorials
ls -la "$OUT/triton_tutorials.tgz"
