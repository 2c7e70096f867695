# The GPU tests (-m gpu, the files without Qt) three times in a row on the GPU machine, in one
# device call of under 9 minutes (run from the repository root there, carrying .gpu-wheels):
#   bash tools/gpu/gpu_tests_repeat.sh          (RUNS=2 bash ...: two rounds)
# Each round is one pytest process with its own step limit (170 s); its output goes to
# round-K.txt and the pass/fail line to the log; everything is packed into
# $OUT/gpu_tests_repeat.tgz. A round's failures are listed with their assertion messages.
set -u
source tools/gpu/steps.sh
steps_begin gpu_tests_repeat
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
FILES="tests/test_gpu_calibrate.py tests/test_gpu_device.py tests/test_trace.py tests/test_trace_bench.py
       tests/test_trace_kernels.py tests/test_trace_ptx_input.py tests/test_trace_pyargs.py tests/test_trace_recorder.py
       tests/test_worker_process.py"
for k in $(seq 1 "${RUNS:-3}"); do
  step 170 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:randomly -o addopts="" $FILES > "$W/round-$k.txt" 2>&1
  echo "round $k: $(tail -1 "$W/round-$k.txt")"
  grep -E "^(FAILED|ERROR)|^E  " "$W/round-$k.txt" | head -20
done
echo "done in $(elapsed) s"
