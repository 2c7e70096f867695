"""The recorder behind the GPU panel's Record trace / Record and validate (Qt-free:
``viz.gpu.trace_pipeline.Recorder``), the same pipeline as `warpviz trace`.

Without a GPU the child process serves ``fake_gpu.ReplaySession`` (the records of a
shipped H100 trace) and Nsight Compute's counters are the ones shipped with that trace:
the stages, the cancel (the child process is killed), the failures' paragraphs and the
written trace are real. With the GPU (``-m gpu``) the same object records and validates
``kernels/trace/reduce_shfl.launch.toml`` for real: that is what the panel runs on the
device machine, where PySide6 is not installed.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from fake_gpu import TRACES, replayed_counters
from helpers import HAVE_NVCC, have_pycuda
from viz.engine import METRIC_NAMES
from viz.gpu.worker import Cancelled
from viz.trace import tracefile
from viz.trace.analysis import analyze_trace
from viz.gpu.trace_pipeline import STAGES, Recorder, RecordingFailed

ROOT = Path(__file__).resolve().parents[1]
REDUCE = ROOT / "kernels" / "trace" / "reduce_shfl.launch.toml"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
FAKE = "fake_gpu:ReplaySession"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def replay(monkeypatch):
    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(TRACES / "reduce_shfl.wvtrace"))
    monkeypatch.delenv("WARPVIZ_FAKE_HANG", raising=False)
    monkeypatch.delenv("WARPVIZ_FAKE_FAULT", raising=False)
    rec = Recorder(child=FAKE, counters=replayed_counters(TRACES / "reduce_shfl.wvtrace"))
    yield rec
    rec.close()


@nvcc
def test_record_and_validate_reports_every_stage_and_writes_the_trace(replay, tmp_path):
    seen = []
    out = tmp_path / "r.wvtrace"
    r = replay.record(REDUCE, validate=True, out=out, progress=lambda f, s: seen.append((f, s)))
    assert [s for s in dict.fromkeys(s for _f, s in seen)] == list(STAGES)
    assert r.stages == list(STAGES)
    fractions = [f for f, _s in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # the file written is the replayed H100 recording: its analysis equals the shipped one's
    shipped = analyze_trace(tracefile.load(TRACES / "reduce_shfl.wvtrace"))
    again = tracefile.load(out)
    assert again.records == shipped.trace.records == r.trace.records
    assert analyze_trace(again).metrics == shipped.metrics == r.analysis.metrics
    # validated: the ten against the counters, all equal, stored in the trace
    assert [row.metric for row in r.rows] == list(METRIC_NAMES) and r.match is True
    assert again.header["ncu"] == r.counters and again.header["launch_file"] == REDUCE.read_text()
    assert {o["metric"] for o in r.other} == set(again.header["ncu_other"]) and all(o["match"] for o in r.other)


@nvcc
def test_a_counter_that_differs_is_marked(monkeypatch, tmp_path):
    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(TRACES / "reduce_shfl.wvtrace"))
    key = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    rec = Recorder(child=FAKE, counters=replayed_counters(TRACES / "reduce_shfl.wvtrace", {key: 1}))
    try:
        r = rec.record(REDUCE, validate=True, out=tmp_path / "d.wvtrace")
    finally:
        rec.close()
    bad = [row.metric for row in r.rows if not row.match]
    assert bad == [key] and r.match is False


@nvcc
def test_cancel_kills_the_gpu_process_and_the_next_recording_works(replay, tmp_path, monkeypatch):
    monkeypatch.setenv("WARPVIZ_FAKE_HANG", "1")      # the child hangs in the recording run
    stop = threading.Event()
    pids = []

    def progress(_f, stage):
        if stage == "record":
            pids.append(replay.pid)
            stop.set()                                 # the user presses Cancel while it records

    with pytest.raises(Cancelled):
        replay.record(REDUCE, validate=False, out=tmp_path / "c.wvtrace", progress=progress, cancelled=stop.is_set)
    assert pids and pids[0] is not None and not _alive(pids[0])
    assert replay.pid is None and not (tmp_path / "c.wvtrace").exists()
    monkeypatch.delenv("WARPVIZ_FAKE_HANG")            # a fresh child for the next recording
    r = replay.record(REDUCE, validate=False, out=tmp_path / "ok.wvtrace")
    assert r.path.exists() and replay.pid not in (None, pids[0]) and r.rows is None


def test_a_bad_launch_file_is_the_clis_paragraph(replay, tmp_path):
    bad = tmp_path / "bad.launch.toml"
    bad.write_text(REDUCE.read_text().replace('kernel = "reduce_shfl"', 'kernel = "reduce_shfl"\nblocks = [2]'))
    with pytest.raises(RecordingFailed) as err:
        replay.record(bad, validate=False, out=tmp_path / "x.wvtrace")
    assert str(err.value).startswith(f"{bad} (blocks): unknown key `blocks`.") and "Fix: the keys are" in str(err.value)
    assert replay.pid is None                          # refused before any GPU process started


@nvcc
def test_a_source_that_does_not_compile_and_a_fault_are_paragraphs(replay, tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void reduce_shfl(const float* a, float* b, int n) { b[0] = a[0] +; }\n')
    launch = tmp_path / "k.launch.toml"
    launch.write_text(REDUCE.read_text().replace('source = "reduce_shfl.cu"', 'source = "k.cu"'))
    with pytest.raises(RecordingFailed) as err:
        replay.record(launch, validate=False, out=tmp_path / "x.wvtrace")
    assert str(err.value).startswith(f"{src.resolve()} (nvcc): the source does not compile: ") and "error" in str(err.value)
    monkeypatch.setenv("WARPVIZ_FAKE_FAULT", "1")
    replay.close()                                     # the next child faults
    with pytest.raises(RecordingFailed) as err:
        replay.record(REDUCE, validate=False, out=tmp_path / "y.wvtrace")
    text = str(err.value)
    assert text.startswith(f"{REDUCE}: the kernel `reduce_shfl` failed on the GPU: ") and "Fix: check" in text
    assert "illegal memory access" in text and not (tmp_path / "y.wvtrace").exists()


# ---------------------------------------------------------------------------- on the GPU



@pytest.mark.gpu
@pytest.mark.skipif(not (have_pycuda() and HAVE_NVCC and shutil.which("ncu")), reason="needs PyCUDA, a GPU, nvcc and ncu")
def test_the_panels_recorder_records_and_validates_reduce_shfl_on_the_gpu(tmp_path):
    rec = Recorder()
    seen = []
    try:
        assert rec.missing(validate=True) is None
        r = rec.record(REDUCE, validate=True, out=tmp_path / "r.wvtrace", progress=lambda f, s: seen.append((f, s)))
        assert [s for s in dict.fromkeys(s for _f, s in seen)] == list(STAGES)
        assert r.complete and r.match is True, r.validation()
        assert tracefile.load(r.path).header["ncu"] == r.counters
        assert r.analysis.metrics == analyze_trace(tracefile.load(TRACES / "reduce_shfl.wvtrace")).metrics
        # Cancel while the GPU process counts: it is killed; the next recording starts a new one
        stop = threading.Event()
        pids = []

        def progress(_f, stage):
            if stage == "count":
                pids.append(rec.pid)
                stop.set()

        with pytest.raises(Cancelled):
            rec.record(REDUCE, validate=False, out=tmp_path / "c.wvtrace", progress=progress, cancelled=stop.is_set)
        assert pids[0] is not None and not _alive(pids[0]) and rec.pid is None
        again = rec.record(REDUCE, validate=False, out=tmp_path / "again.wvtrace")
        assert again.analysis.metrics == r.analysis.metrics and rec.pid not in (None, pids[0])
    finally:
        rec.close()


def test_the_plain_launch_for_nsight_compute_carries_the_launch_files_buffers(tmp_path):
    """validate, bench --traces and tools/gpu/ncu_full.py build their ncu driver's launch with
    one function: the buffer as the launch file fills it, the kernel by its name or entry."""
    import numpy as np

    from viz.gpu.trace_pipeline import plain_launch
    from viz.trace.launch import load_launch
    from viz.trace.record import host_buffer

    la = load_launch(Path(__file__).resolve().parents[1] / "kernels" / "copy_float.launch.toml")
    d = plain_launch(la, b"cubin", tmp_path / "b.npy")
    assert d["name"] == la.function and d["block"] == list(la.block) and d["grid"] == list(la.grid)
    assert np.array_equal(np.load(d["buffer"]), host_buffer(la)) and d["offsets"] == la.buffer_offsets()
    assert plain_launch(la, b"cubin", tmp_path / "c.npy", "_Z4copyPfS_i")["name"] == "_Z4copyPfS_i"
