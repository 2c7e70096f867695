"""The GPU worker's child process (``viz.gpu.worker``): started as ``python -m
viz.gpu.worker_child``, it never imports the caller's ``__main__``, so a plain script that
traces at module level (no ``if __name__ == "__main__"`` guard), a notebook cell and the CLI
all work. Without a GPU the child serves ``fake_gpu.ReplaySession``; with ``-m gpu`` a plain
script calls the real trace API.

A script's standard output is inherited by the GPU child, so reading it to the end (EOF)
means the script *and* its child have both ended: the tests wait on that, not on time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fake_gpu import TRACES
from helpers import HAVE_NVCC, have_pycuda
from viz.gpu import GpuUnavailable
from viz.gpu.runner import KernelFault
from viz.gpu.worker import ProcessSession

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
FAKE = "fake_gpu:ReplaySession"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _ends(pid: int, timeout: float = 60) -> bool:
    """Wait for the process to end (its pidfd becomes readable then); False if it still runs
    after ``timeout`` seconds. Its standard output closes a moment before it has ended."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def _env(**extra) -> dict[str, str]:
    env = dict(os.environ)
    rest = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), *rest])
    for k in ("WARPVIZ_FAKE_HANG", "WARPVIZ_FAKE_FAULT"):
        env.pop(k, None)
    env["WARPVIZ_FAKE_TRACE"] = str(TRACES / "reduce_shfl.wvtrace")
    env.update(extra)
    return env


def _run_script(tmp_path: Path, body: str, timeout: float = 240, **env) -> subprocess.CompletedProcess:
    script = tmp_path / "plain_script.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(**env), capture_output=True,
                          text=True, timeout=timeout)


def test_a_plain_script_starting_the_worker_at_module_level_runs_once(tmp_path):
    """The script has no ``__main__`` guard: a "spawn" child would import it again (and
    print twice, then fail in the bootstrapping phase)."""
    r = _run_script(tmp_path, """
        from viz.gpu.worker import ProcessSession

        s = ProcessSession(child="fake_gpu:ReplaySession")
        got = s.trace_record({"kernel": "reduce_shfl"})
        print("ran", s.pid != __import__("os").getpid(), s.limits().sm_count, got["executed"], s.info["name"],
              flush=True)
        s.close()
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ran True 132 "), r.stdout
    assert "bootstrapping" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
def test_a_plain_script_calling_the_trace_api_at_module_level_runs_once(tmp_path):
    """``warpviz.trace_launch`` as a user's script calls it, the GPU replayed (the script only
    points the pipeline at the replaying child): real nvcc, pipe, write and analysis."""
    launch = ROOT / "kernels" / "trace" / "reduce_shfl.launch.toml"
    r = _run_script(tmp_path, f"""
        import functools
        import viz.gpu.trace_pipeline as tp
        tp.record_trace = functools.partial(tp.record_trace, child="fake_gpu:ReplaySession")
        import warpviz

        t = warpviz.trace_launch({str(launch)!r}, out="r.wvtrace")
        print("traced", t.records, warpviz.open_trace("r.wvtrace").records == t.records, flush=True)
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    shipped = __import__("warpviz").open_trace(TRACES / "reduce_shfl.wvtrace").records
    assert lines == [f"traced {shipped} True"], r.stdout
    assert "bootstrapping" not in r.stderr


def test_the_child_ends_when_the_script_ends_without_closing_it(tmp_path):
    r = _run_script(tmp_path, """
        from viz.gpu.worker import ProcessSession

        s = ProcessSession(child="fake_gpu:ReplaySession")
        print(s.pid, flush=True)
    """)
    assert r.returncode == 0, r.stderr
    (pid,) = [int(x) for x in r.stdout.split()]
    assert _ends(pid)                                 # the atexit hook killed it


def test_a_hung_child_ends_when_the_script_is_gone_without_exit_handlers(tmp_path):
    """The script dies (``os._exit``: no atexit) while its child runs a kernel that never ends:
    the child sees its parent gone and ends too (the script's stdout closes only then)."""
    r = _run_script(tmp_path, """
        import os
        from viz.gpu.worker import ProcessSession

        s = ProcessSession(child="fake_gpu:ReplaySession")

        def progress(stage):
            print(stage, s.pid, flush=True)
            os._exit(3)

        s.trace_record({"kernel": "reduce_shfl"}, progress=progress)
        print("not reached")
    """, WARPVIZ_FAKE_HANG="1")
    assert r.returncode == 3, r.stderr
    stage, pid = r.stdout.split()
    assert stage == "record" and _ends(int(pid))


@pytest.fixture
def fake_env(monkeypatch):
    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(TRACES / "reduce_shfl.wvtrace"))
    monkeypatch.delenv("WARPVIZ_FAKE_HANG", raising=False)
    monkeypatch.delenv("WARPVIZ_FAKE_FAULT", raising=False)
    return monkeypatch


def test_a_call_past_its_time_limit_stops_the_child_and_the_next_call_starts_another(fake_env):
    fake_env.setenv("WARPVIZ_FAKE_HANG", "1")
    s = ProcessSession(call_timeout_s=1, child=FAKE)
    try:
        first = s.pid
        stages = []
        with pytest.raises(KernelFault, match=r"^trace record ran longer than 1 s and was stopped$"):
            s.trace_record({"kernel": "reduce_shfl"}, progress=stages.append)
        assert stages == ["record"] and s.pid is None and not _alive(first)
        fake_env.delenv("WARPVIZ_FAKE_HANG")
        assert s.trace_record({"kernel": "reduce_shfl"})["executed"] > 0
        assert s.pid not in (None, first)
    finally:
        s.close()
    assert s.pid is None


def test_a_child_class_that_does_not_import_is_gpu_unavailable(fake_env):
    with pytest.raises(GpuUnavailable, match="the GPU session did not start: No module named 'no_such_module_here'"):
        ProcessSession(child="no_such_module_here:Session")


def test_a_notebook_cell_starts_the_worker(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    for k, v in _env().items():
        monkeypatch.setenv(k, v)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from viz.gpu.worker import ProcessSession\n"
        "s = ProcessSession(child='fake_gpu:ReplaySession')\n"
        "print(s.limits().sm_count, s.trace_record({'kernel': 'reduce_shfl'})['executed'] > 0)\n"
        "s.close()")])
    nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outs = nb.cells[0].outputs
    assert [o.output_type for o in outs] == ["stream"], outs
    assert outs[0].text == "132 True\n"


# ---------------------------------------------------------------------------- on the GPU

GPU_READY = have_pycuda() and HAVE_NVCC


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_READY, reason="needs PyCUDA, a GPU and nvcc")
def test_gpu_a_plain_script_traces_at_module_level_once(tmp_path):
    launch = ROOT / "kernels" / "trace" / "reduce_shfl.launch.toml"
    r = _run_script(tmp_path, f"""
        import warpviz

        t = warpviz.trace_launch({str(launch)!r}, out="r.wvtrace")
        again = warpviz.trace_launch({str(launch)!r})
        print("traced", t.records, again.records == t.records, flush=True)
    """, timeout=600)
    assert r.returncode == 0, r.stderr
    ours = [line for line in r.stdout.splitlines() if line.startswith("traced ")]   # the script ran once
    assert len(ours) == 1, r.stdout
    assert int(ours[0].split()[1]) > 0 and ours[0].split()[2] == "True"
    assert "bootstrapping" not in r.stderr and (tmp_path / "r.wvtrace").is_file()


@pytest.mark.gpu
def test_gpu_a_plain_script_traces_triton_at_module_level_once(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    if not GPU_READY:
        pytest.skip("needs PyCUDA, a GPU and nvcc")
    r = _run_script(tmp_path, f"""
        import sys
        import torch
        sys.path.insert(0, {str(ROOT / "kernels" / "format2")!r})
        import triton_kernels as TK
        import warpviz

        fn, grid, args, meta = TK.case_softmax(torch)
        t = warpviz.trace_triton(fn, grid, args, **meta)
        print("traced", t.header["kernel"], t.records > 0, flush=True)
    """, timeout=600)
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stdout.splitlines() if line.startswith("traced")] == ["traced softmax_kernel True"], \
        r.stdout
    assert "bootstrapping" not in r.stderr


@pytest.mark.skipif(os.name != "posix", reason="the stand-in executable is a shell script")
def test_a_frozen_app_runs_the_child_through_its_own_executable(tmp_path):
    """PyInstaller: ``sys.executable`` is warpviz itself; the child is that executable with
    ``--warpviz-gpu-worker`` (packaging/entry_cli.py serves it). A shell script stands in for
    the frozen executable, running the real entry point."""
    exe = tmp_path / "warpviz-frozen"
    import shlex

    entry = shlex.quote(str(ROOT / "packaging" / "entry_cli.py"))
    exe.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {entry} "$@"\n')
    exe.chmod(0o755)
    r = _run_script(tmp_path, f"""
        import sys
        sys.frozen = True
        sys.executable = {str(exe)!r}
        from viz.gpu.worker import ProcessSession

        s = ProcessSession(child="fake_gpu:ReplaySession")
        print("frozen", s.limits().sm_count, open(f"/proc/{{s.pid}}/cmdline").read().split("\\0")[1:3], flush=True)
        s.close()
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"frozen 132 ['{ROOT / 'packaging' / 'entry_cli.py'}', '--warpviz-gpu-worker']"]
