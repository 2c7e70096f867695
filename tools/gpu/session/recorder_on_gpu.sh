#!/usr/bin/env bash
# The app's GPU panel recorder (viz.gpu.trace_pipeline.Recorder: Record trace / Record and
# validate, the same pipeline as `warpviz trace`) on the H100, without Qt (PySide6 is not on
# the device machine; the panel runs this object on its worker thread). docs/GPU.md, "The app's
# GPU panel" (the stage times).
# Run from the repo root on the device machine:  bash tools/gpu/session/recorder_on_gpu.sh
# Total run time: about 80 s with the carried PyCUDA build (device time budget: 150 s);
# hard limits per step: 60 + 30 + 50 s, most important first.
# Writes $OUT/recorder_on_gpu/: log.txt, junit.xml (the -m gpu tests of tests/test_trace_recorder.py;
# tests/test_app_record.py skips without PySide6), junit-cli.xml (three `warpviz trace` GPU tests),
# stages.json (seconds per stage of one Record and validate of kernels/trace/reduce_shfl,
# the ten metrics trace vs Nsight Compute, the others, records and file size).
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/recorder_on_gpu"
mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
export QT_QPA_PLATFORM=offscreen
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout -k 5 "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return 0; }
T0=$(date +%s)
step 60 python3 -m pytest -m gpu -q -p no:cacheprovider -rs --junitxml "$R/junit.xml" tests/test_trace_recorder.py tests/test_app_record.py
cat > /tmp/recorder_stages.py <<'PY'
import json, sys, time
from pathlib import Path
from viz.gpu.trace_pipeline import Recorder


def main():  # a function: the GPU child process is spawned and re-imports this file
    out = Path(sys.argv[1])
    t0 = time.monotonic()
    marks = []
    rec = Recorder()
    try:
        r = rec.record("kernels/trace/reduce_shfl.launch.toml", validate=True, out="/tmp/recorder-reduce_shfl.wvtrace",
                       progress=lambda f, s: marks.append((round(time.monotonic() - t0, 3), round(f, 3), s)))
        t_end = time.monotonic() - t0
        first = {}
        for t, _f, s in marks:
            first.setdefault(s, t)
        names = list(first)
        stages = {s: round((first[names[k + 1]] if k + 1 < len(names) else t_end) - first[s], 3)
                  for k, s in enumerate(names)}
        doc = {"launch": "kernels/trace/reduce_shfl.launch.toml", "total_s": round(t_end, 3), "stages_s": stages,
               "progress": marks, "match": r.match, "complete": r.complete, "records": r.trace.records,
               "lane_accesses": int(r.trace.lane_accesses()), "file_bytes": r.path.stat().st_size,
               "rows": [row.as_dict() for row in r.rows], "other": r.other, "note": r.note,
               "gpu": r.trace.header.get("gpu", {}).get("name")}
    finally:
        rec.close()
    out.write_text(json.dumps(doc, indent=1))
    print(json.dumps({k: doc[k] for k in ("total_s", "stages_s", "match", "records", "file_bytes")}))


if __name__ == "__main__":
    main()
PY
step 30 python3 /tmp/recorder_stages.py "$R/stages.json"
# `warpviz trace` now runs the same pipeline (viz.gpu.trace_pipeline.record_trace): three of its GPU tests
step 50 python3 -m pytest -m gpu -q -p no:cacheprovider -rs --junitxml "$R/junit-cli.xml" tests/test_trace.py -k "reduce_shfl or size_limit or faulting"
echo "recorder_on_gpu: total $(( $(date +%s) - T0 )) s after device_setup"
ls -la "$R"
