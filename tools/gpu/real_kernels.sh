# Trace real kernels on the GPU machine and compare with Nsight Compute (run from the
# repository root there; carry .real/ and .gpu-wheels/ with the run):
#   bash tools/gpu/real_kernels.sh [cuda|ship|python|all]
# cuda: the CUDA samples and the held-out C++ kernels (21 launches, each with Nsight Compute);
# ship: kernels/format2's launch files, whose traces go to assets/traces (real/shipped/);
# python: Triton, CuPy and Numba kernels through warpviz's Python API, then the format 2 tests
# that need PyTorch, CuPy or the GPU. Each part fits one device call (10 minutes).
# Writes under $OUT: real/ (traces, launch files, PTX launch folders, summary.md and .json),
# real-log.txt, and real.tar.gz (all of real/). See tools/gpu/real_kernels.py.
set -u
PART=${1:-all}
OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/real-log.txt") 2>&1
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "cu++filt: $(command -v cu++filt || echo none)"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.is_available())" || true
python3 -c "import cupy; print('cupy', cupy.__version__)" || true
python3 -c "import numba; print('numba', numba.__version__)" || true
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
if [ "$PART" = cuda ] || [ "$PART" = all ]; then
  step 560 python3 tools/gpu/real_kernels.py --real .real --out "$OUT/real" --only cuda,own
fi
if [ "$PART" = ship ] || [ "$PART" = all ]; then
  step 300 python3 tools/gpu/real_kernels.py --real .real --out "$OUT/real" --only ship
fi
if [ "$PART" = python ] || [ "$PART" = all ]; then
  step 400 python3 tools/gpu/real_kernels.py --real .real --out "$OUT/real" --only triton,cupy,numba
  step 150 python3 -m pytest -q -p no:cacheprovider -m "gpu or not gpu" tests/test_trace_pyargs.py \
    tests/test_trace_ptx_input.py -k "gpu or torch or cupy"
fi
[ -f "$OUT/real/summary.md" ] && cat "$OUT/real/summary.md"
tar czf "$OUT/real.tar.gz" -C "$OUT" real 2>/dev/null
ls -la "$OUT"
