# Record and validate, on the H100, the kernels where ptxas fuses memory accesses (run from
# the repo root on the device machine; `warpviz trace --validate` on each):
#
#   kernels/trace/sgemm_tile16 (k loop unrolled: As[ty][k..k+3] -> LDS.128), its
#   #pragma unroll 1 control sgemm_tile16_rolled, quad_read (4 floats -> LDS.128),
#   quad_read_volatile (the control), pair_write (2 floats -> STS.64), the two shipped
#   traces the SASS mapping touches (sgemm_float4_scalar_sts, softmax_row) and gemm_tiled
#   (rolled, unchanged), and NVIDIA's matrixMul sample (MatrixMulCUDA<32> and <16>) when
#   .samples/matrixMul.cu is carried (it is not part of warpviz; see below).
#
# Expected: every launch prints match=True and "SASS, instruction N (fused): ptxas fused ..."
# for the fused ones; sgemm_tile16 (64 blocks of 16x16, N = 128): 81,920 shared load
# instructions and 98,304 wavefronts, the rolled one 131,072 / 131,072; softmax_row
# match=False in exactly the two shared-load metrics, with its 8 loads "not certain".
#
# Run it with the device tool (about 4 minutes; PyCUDA is built the first time, ~2 min):
#   here, once:  bash tools/gpu/fetch_wheels.sh
#                mkdir -p .samples && git --git-dir=<cuda-samples mirror> show \
#                  HEAD:Samples/0_Introduction/matrixMul/matrixMul.cu > .samples/matrixMul.cu
#                echo /.samples/ >> .git/info/exclude
#   run:  command "bash tools/trace/device_fused_kernels.sh", carry [".gpu-wheels", ".samples"]
# $OUT gets log.txt and traces.tar.gz (NAME.wvtrace + NAME.json per launch): the new
# traces go to assets/traces/ (then drop their names from AWAITING_H100 in tests/test_trace.py).
set -u
OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT"
L=(kernels/trace/sgemm_tile16.launch.toml kernels/trace/sgemm_tile16_rolled.launch.toml
   kernels/trace/quad_read.launch.toml kernels/trace/quad_read_volatile.launch.toml
   kernels/trace/pair_write.launch.toml kernels/trace/sgemm_float4_scalar_sts.launch.toml
   kernels/trace/softmax_row.launch.toml kernels/gemm_tiled.launch.toml)
if [ -f .samples/matrixMul.cu ]; then
  M=/tmp/wv-matrixmul; mkdir -p "$M"
  python3 - "$M" <<'PY'
import sys
from pathlib import Path
out = Path(sys.argv[1])
src = Path(".samples/matrixMul.cu").read_text()
start = src.index("template <int BLOCK_SIZE> __global__ void MatrixMulCUDA")
body = src[start:src.index("\n}\n", start) + 3]
# the sample's kernel, unchanged, as a device function with a plain C entry per tile size
body = body.replace("__global__ void MatrixMulCUDA", "__device__ __forceinline__ void MatrixMulCUDA")
text = "// NVIDIA cuda-samples, Samples/0_Introduction/matrixMul (BSD-3-Clause): MatrixMulCUDA\n" + body
for bs in (16, 32):
    text += (f'extern "C" __global__ void matrixMul{bs}(float* C, float* A, float* B, int wA, int wB) '
             f'{{ MatrixMulCUDA<{bs}>(C, A, B, wA, wB); }}\n')
(out / "matrixMul.cu").write_text(text)
for bs in (16, 32):
    n = 128
    args = "".join(f'\n[[arg]]\ntype = "float*"\ncount = {n * n}\nfill = "{f}"\n' for f in ("zero", "random", "random"))
    args += f'\n[[arg]]\ntype = "int"\nvalue = {n}\n\n[[arg]]\ntype = "int"\nvalue = {n}\n'
    (out / f"matrixMul{bs}.launch.toml").write_text(
        f'title = "NVIDIA matrixMul sample, BLOCK_SIZE {bs}"\nsource = "matrixMul.cu"\nkernel = "matrixMul{bs}"\n'
        f"block = [{bs}, {bs}]\ngrid = [{n // bs}, {n // bs}]\n{args}")
PY
  L+=("$M/matrixMul32.launch.toml" "$M/matrixMul16.launch.toml")
  echo "matrixMul: expect 40 (BLOCK_SIZE 32) and 20 (16) shared load instructions per warp and tile step"
else
  echo "matrixMul: .samples/matrixMul.cu not carried, skipped"
fi
bash tools/trace/device_trace.sh "${L[@]}"
