#!/bin/bash
# Trace an unmodified CUTLASS 3 (CuTe) Hopper GEMM with host-built tensor maps on the GPU
# machine, and compare every counter with Nsight Compute (run from the repo root; carry
# .real/cutlass and .gpu-wheels):
#   bash tools/gpu/cutlass_gemm.sh
# The GEMM is CUTLASS's examples/cute/tutorial/hopper/wgmma_tma_sm90.cu (TMA loads of A and B
# through CUtensorMaps encoded on the host with cuTensorMapEncodeTiled and passed inside
# __grid_constant__ Copy_Atom structures; wgmma m64n64k16 from swizzled shared memory), fetched
# from github:NVIDIA/cutlass into the git-ignored .real/cutlass (BSD-3-Clause, its LICENSE.txt
# beside it), compiled as CUTLASS says (nvcc -arch=sm_90a --expt-relaxed-constexpr -std=c++17).
#  1. build the program as it is (shared CUDA runtime) and tools/gpu/launch_capture.cpp;
#  2. run the program with the capture library preloaded: its first gemm_device launch (NT:
#     m=512 n=256 k=1024, the tutorial's defaults) is written down with its buffers and
#     the arguments of every cuTensorMapEncodeTiled call;
#  3. tools/gpu/capture_to_launch.py writes a format 2 launch file of it (.real/cutlass/*.launch.toml);
#  4. warpviz trace LAUNCH --validate (Nsight Compute on the plain kernel, TMA and gmma rows too).
# First, while CUTLASS builds, kernels/format2/tma_struct_param.launch.toml (a host-encoded map
# inside a struct passed by value, our own small kernel) is traced with --validate (35 s at most).
# About 2 minutes (the CUTLASS trace is cut at 100 s from the start; only NT is traced). Writes
# $OUT/cutlass_gemm.tgz.
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/cutlass_gemm"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
T0=$(date +%s)
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}; export PATH="$CUDA_ROOT/bin:$PATH"
C=.real/cutlass
SRC=examples/cute/tutorial/hopper/wgmma_tma_sm90.cu
[ -f "$C/$SRC" ] || { echo "no $C/$SRC: carry .real/cutlass"; exit 1; }
FLAGS="-arch=sm_90a --expt-relaxed-constexpr -std=c++17 -I$C/include -I$C/tools/util/include"
# 1. the program (only its launch is used: its device code is built quickly, -Xptxas -O0), its
#    PTX (for the parameters' alignment) and the capture library, side by side
( nvcc $FLAGS -O1 -Xptxas -O0 -cudart shared -o /tmp/wgmma_tma_sm90 "$C/$SRC" > "$D/build_program.txt" 2>&1; echo "program rc=$?" >> "$D/build_program.txt" ) &
( nvcc $FLAGS -O3 -lineinfo -ptx -o /tmp/wgmma_tma_sm90.ptx "$C/$SRC" > "$D/build_ptx.txt" 2>&1; echo "ptx rc=$?" >> "$D/build_ptx.txt" ) &
g++ -shared -fPIC -O2 -I"$CUDA_ROOT/include" tools/gpu/launch_capture.cpp -o /tmp/liblaunch_capture.so \
  -ldl > "$D/build_capture.txt" 2>&1; echo "capture library rc=$?"; cat "$D/build_capture.txt"
source tools/gpu/device_setup.sh
# 0. while CUTLASS builds: the smallest case of the mechanism (our own kernel: a map inside a struct)
step 35 python3 -m viz.cli trace kernels/format2/tma_struct_param.launch.toml --validate \
  --out "$D/tma_struct_param.wvtrace" > "$D/trace_tma_struct_param.txt" 2>&1
tail -45 "$D/trace_tma_struct_param.txt"
wait
cat "$D/build_program.txt" "$D/build_ptx.txt" | tail -20
echo "built in $(( $(date +%s) - T0 )) s"
# 2.-4. NT (the tutorial's default)
for v in "nt N T"; do
  set -- $v; name=$1; ta=$2; tb=$3
  cap="$C/capture_$name"; rm -rf "$cap"; mkdir -p "$cap"
  step 60 env WV_CAPTURE_DIR="$cap" WV_CAPTURE_MATCH=gemm_device LD_PRELOAD=/tmp/liblaunch_capture.so \
    /tmp/wgmma_tma_sm90 512 256 1024 $ta $tb
  cp "$cap/launch.json" "$D/capture_$name.json" 2>/dev/null
  L="$C/cutlass_wgmma_tma_$name.launch.toml"
  step 30 python3 tools/gpu/capture_to_launch.py "$cap" /tmp/wgmma_tma_sm90.ptx "$L" --source "$SRC" \
    --include include --include tools/util/include --arch-specific --relaxed-constexpr \
    --title "CUTLASS CuTe tutorial wgmma_tma_sm90 ($name), m=512 n=256 k=1024" || continue
  cp "$L" "$D/"
  left=$(( 100 - ($(date +%s) - T0) ))
  [ "$left" -lt 20 ] && left=20
  step "$left" python3 -m viz.cli trace "$L" --validate --out "$D/cutlass_wgmma_tma_$name.wvtrace" \
    > "$D/trace_$name.txt" 2>&1
  tail -60 "$D/trace_$name.txt"
  [ -f "$D/cutlass_wgmma_tma_$name.wvtrace" ] && timeout 8 python3 -m viz.cli analyze "$D/cutlass_wgmma_tma_$name.wvtrace" \
    --json > "$D/analyze_$name.json" 2>&1
done
echo "cutlass_gemm: $(( $(date +%s) - T0 )) s"
tar czf "$OUT/cutlass_gemm.tgz" -C "$OUT" cutlass_gemm
ls -la "$OUT/cutlass_gemm.tgz"
