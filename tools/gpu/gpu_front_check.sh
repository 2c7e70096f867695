# The GPU's front door and its named driver calls (viz/gpu/front.py, viz/gpu/driver.py) on the
# GPU machine, in one device call of about 4 minutes (run from the repository root there,
# carrying .gpu-wheels):   bash tools/gpu/gpu_front_check.sh
# 1. the -m gpu tests of the modules whose driver calls moved (the runner's timing and faults,
#    the recording runs, the calibration, the worker, the door itself);
# 2. `warpviz validate transpose-tile` (front.validate: Nsight Compute counters vs the model);
# 3. `warpviz calibrate --quick --runs 1 --json` into $W (front.calibrate: every microbenchmark
#    through Driver/Kernel; written to $W only, never to assets/);
# 4. `warpviz trace` of reduce_shfl with --validate (front.record: the recording runs of
#    viz/trace/record.py through the driver, and the ncu driver).
# Everything goes into $OUT/gpu_front_check.tgz (log.txt, one file per step).
set -u
source tools/gpu/steps.sh
steps_begin gpu_front_check
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
FILES="tests/test_gpu_front.py tests/test_gpu_driver.py tests/test_gpu_runner.py tests/test_gpu_device.py
       tests/test_trace_recorder.py tests/test_worker_process.py"
step 150 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:randomly -o addopts="" $FILES > "$W/pytest-gpu.txt" 2>&1
echo "pytest -m gpu: $(tail -1 "$W/pytest-gpu.txt")"
grep -E "^(FAILED|ERROR)|^E  " "$W/pytest-gpu.txt" | head -20
step 60 python3 -m viz.cli validate transpose-tile > "$W/validate.txt" 2>&1
tail -3 "$W/validate.txt"
step 90 python3 -m viz.cli calibrate --quick --runs 1 --json --out "$W/calibration.json" > "$W/calibrate.json" 2> "$W/calibrate.err"
tail -3 "$W/calibrate.err"
step 60 python3 -m viz.cli trace kernels/trace/reduce_shfl.launch.toml --validate --out "$W/reduce_shfl.wvtrace" > "$W/trace.txt" 2>&1
grep -iE "metrics|equal|error|fault" "$W/trace.txt" | head -5
echo "done in $(elapsed) s"
