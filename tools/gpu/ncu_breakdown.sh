# Nsight Compute's own breakdown (L2 / LSU / pipes / stalls) of the launches the cost model
# misses or nearly misses, on the GPU machine, in one device call of a few minutes (run from
# the repository root there; needs nvcc and ncu, nothing carried):
#   bash tools/gpu/ncu_breakdown.sh [CASE ...]
# CASEs (tools/gpu/ncu_breakdown.cu): triton_matmul_2048 sgemm_tile16_128
# sgemm_tile16_rolled_128 sgemm_tile16_1024 wv_read_l2 wv_l2_scatter wv_l2_cpasync_64
# wv_l2_cpasync_128 (default: these; the L2 ones first), and on request wv_l2_partial,
# wv_st_S_F (F scalar stores a thread into S-word structs: how many L1 merges before L2)
# and aos28_1m / aos32_1m (the AoS particle update over 1 M structs).
# For each: the launch timed back to back (median of 20 samples), then Nsight Compute's full
# set on its 6th launch (--page raw: every metric, CSV; --page details: the sections as text;
# the SASS with per-instruction stall samples), at the GPU's own clocks. The L2-resident
# launches (the sgemm at 128, the calibration kernels) keep their data in L2 between passes
# (--cache-control none, as bench's timed loop does); the Triton matmul and the 1024 sgemm are
# profiled with caches flushed (their timed launches read from DRAM).
# Everything goes into $OUT/ncu_breakdown.tgz (the machine returns at most 8 files).
set -u
source tools/gpu/steps.sh
steps_begin ncu_breakdown
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
export PATH="$CUDA_ROOT/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
which nvcc ncu; ncu --version | tail -1
B=/tmp/wv-ncu; mkdir -p "$B"
step 120 nvcc -O2 -o "$B/ncu_breakdown" tools/gpu/ncu_breakdown.cu -L"$CUDA_ROOT/lib64/stubs" -L"$CUDA_ROOT/targets/x86_64-linux/lib/stubs" -lcuda || exit 1
step 60 nvcc -ptx -arch=sm_90 -o "$B/sgemm_tile16.ptx" kernels/trace/sgemm_tile16.cu || exit 1
step 60 nvcc -ptx -arch=sm_90 -o "$B/calibrate.ptx" kernels/calibrate/calibrate.cu || exit 1
step 60 nvcc -ptx -arch=sm_90 -o "$B/extra.ptx" tools/gpu/ncu_breakdown_kernels.cu || exit 1
step 60 nvcc -ptx -arch=sm_90 -o "$B/aos.ptx" kernels/trace/particles_aos.cu || exit 1
ptx_of() {
  case "$1" in
    triton_*) echo tests/data/ptx/triton_matmul.ptx ;;
    sgemm_*) echo "$B/sgemm_tile16.ptx" ;;
    wv_l2_cpasync_*|wv_st_*) echo "$B/extra.ptx" ;;
    aos*) echo "$B/aos.ptx" ;;
    wv_*) echo "$B/calibrate.ptx" ;;
  esac
}
kernel_of() {
  case "$1" in
    triton_*) echo matmul_kernel ;;
    sgemm_tile16_rolled*) echo sgemm_tile16_rolled ;;
    sgemm_*) echo sgemm_tile16 ;;
    wv_l2_cpasync_*) echo wv_l2_cpasync ;;
    wv_st_*) echo wv_st_fields ;;
    aos28*) echo particles_aos28 ;;
    aos32*) echo particles_aos32 ;;
    *) echo "$1" ;;
  esac
}
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(triton_matmul_2048 wv_l2_cpasync_64 wv_l2_cpasync_128 wv_read_l2 wv_l2_scatter
                                 sgemm_tile16_128 sgemm_tile16_rolled_128 sgemm_tile16_1024)
for c in "${CASES[@]}"; do
  step 60 "$B/ncu_breakdown" "$c" "$(ptx_of "$c")" | tee -a "$W/timings.txt"
done
for c in "${CASES[@]}"; do
  cache=none
  case "$c" in triton_*|*_1024) cache=all ;; esac
  k=$(kernel_of "$c")
  step 240 ncu --set full --import-source no --cache-control "$cache" --clock-control none \
    -k "regex:^${k}\$" --launch-skip 5 --launch-count 1 -o "$B/$c" -f \
    "$B/ncu_breakdown" "$c" "$(ptx_of "$c")" 1 > "$W/$c.ncu.log" 2>&1
  tail -3 "$W/$c.ncu.log"
  # the L2's requests, sectors and partition-crossing (ltcfabric) traffic by source, L1's traffic to
  # and from L2, DRAM sectors, and the L2 throughput (named: ncu's metric regexes did not match here)
  step 120 ncu --cache-control "$cache" --clock-control none -k "regex:^${k}\$" --launch-skip 5 --launch-count 1 --csv \
    --metrics "lts__t_sectors.sum,lts__t_requests.sum,lts__t_tag_requests.sum,lts__t_sectors_op_write.sum,lts__t_sectors_lookup_hit.sum,lts__t_sectors_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_requests_srcunit_ltcfabric.sum,lts__d_sectors.sum,lts__d_sectors_fill_device.sum,l1tex__m_l1tex2xbar_write_sectors.sum,l1tex__m_l1tex2xbar_write_bytes.sum,l1tex__m_xbar2l1tex_read_sectors.sum,dram__sectors_read.sum,dram__sectors_write.sum,gpu__time_duration.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed" \
    "$B/ncu_breakdown" "$c" "$(ptx_of "$c")" 1 > "$W/$c.l2.csv" 2> "$W/$c.l2.err"
  tail -2 "$W/$c.l2.err"
  [ -f "$B/$c.ncu-rep" ] || continue
  ncu -i "$B/$c.ncu-rep" --page raw --csv > "$W/$c.raw.csv" 2>/dev/null
  ncu -i "$B/$c.ncu-rep" --page details --print-details all > "$W/$c.details.txt" 2>/dev/null
  ncu -i "$B/$c.ncu-rep" --page source --print-source sass --csv > "$W/$c.sass.csv" 2>/dev/null
  echo "$c: $(wc -c < "$W/$c.raw.csv") bytes raw, $(wc -l < "$W/$c.sass.csv") SASS lines"
done
ncu --query-metrics --chip gh100 > "$W/query-metrics-gh100.txt" 2>&1
echo "done in $(elapsed) s"
