"""A GPU session in a child process: a kernel that faults, hangs or is cancelled takes
down only the child, and the next call starts a fresh one.

CUDA documents that after an illegal-address fault "the process must be terminated and
relaunched" before CUDA works again, so a faulting kernel must not live in the app's (or
the CLI's) own process. ``ProcessSession`` has ``runner.Session``'s methods; each call is
sent over a pipe to a child process that owns the CUDA context. While waiting, the
parent polls ``cancelled()`` and a time limit; either kills the child. A call may report
progress: the child sends ``("progress", stage)`` messages before its answer, handed to the
caller's ``progress`` callback (the trace recorder says when counting ends and recording
starts).

The child is ``python -m viz.gpu.worker_child`` started with ``subprocess`` (see that
module), not a ``multiprocessing`` "spawn" child: spawn imports the caller's ``__main__``
again in the child, so a plain script calling ``warpviz.trace_triton(...)`` at module level
ran itself once more per child and every trace failed ("An attempt has been made to start
a new process before the current process has finished its bootstrapping phase"). The pipe
is a ``multiprocessing.Pipe`` whose child end the child inherits (a socket on POSIX, a pipe
handle on Windows). The child stops when the parent closes the pipe or exits (an ``atexit``
hook kills children still running, and the child watches its parent).

``child`` names the session class the child serves (``"module:Class"``, default
``viz.gpu.runner.Session``): tests serve a replaying session so that the app's real
worker, pipe and cancel path run without a GPU.
"""

from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import subprocess
import sys
import time
import weakref
from pathlib import Path

from . import GpuUnavailable
from .runner import MIN_RUNS, MEMCPY_BYTES, KernelFault

START_TIMEOUT_S = 120
CALL_TIMEOUT_S = 600
CHILD_MODULE = "viz.gpu.worker_child"
CHILD_FLAG = "--warpviz-gpu-worker"   # a frozen app (packaging/entry_*.py) runs the child when given this first


class Cancelled(Exception):
    """The caller cancelled; the child process was stopped."""


def _unavailable(payload) -> GpuUnavailable:
    """The child's GpuUnavailable again (its template, kind and fields)."""
    template, kind, *rest = payload
    return GpuUnavailable(template, kind, **(rest[0] if rest else {}))


_LIVE: "weakref.WeakSet[ProcessSession]" = weakref.WeakSet()


@atexit.register
def _kill_children() -> None:
    """The parent is exiting: no GPU child outlives it (a hung kernel included)."""
    for session in list(_LIVE):
        proc = session._proc              # not _stop(): a thread may be waiting on this session
        if proc is not None and proc.poll() is None:
            try:
                proc.kill()
                proc.wait(5)
            except Exception:  # pragma: no cover - already gone
                pass


def _child_env() -> dict[str, str]:
    """The child's environment: this one, with the folder holding this ``viz`` package first
    on PYTHONPATH, so that ``-m viz.gpu.worker_child`` imports the same ``viz`` as the parent."""
    env = dict(os.environ)
    top = str(Path(__file__).resolve().parents[2])
    rest = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = top + (os.pathsep + rest if rest else "")
    return env


def _popen(child_end) -> subprocess.Popen:
    """Start ``python -m viz.gpu.worker_child`` holding ``child_end`` of the pipe."""
    handle = child_end.fileno()
    if getattr(sys, "frozen", False):   # PyInstaller: the executable is warpviz itself, not python
        cmd = [sys.executable, CHILD_FLAG, str(handle), str(os.getpid())]
    else:
        cmd = [sys.executable, "-m", CHILD_MODULE, str(handle), str(os.getpid())]
    if sys.platform == "win32":  # pragma: no cover - Windows: the handle is inherited through STARTUPINFO
        os.set_handle_inheritable(handle, True)
        info = subprocess.STARTUPINFO()
        info.lpAttributeList = {"handle_list": [handle]}
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=_child_env(), close_fds=True, startupinfo=info)
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=_child_env(), pass_fds=(handle,))


class ProcessSession:
    """``runner.Session``'s interface, served by a child process (see the module doc)."""

    def __init__(self, call_timeout_s: float = CALL_TIMEOUT_S, child: str | None = None, cancelled=None):
        self.call_timeout_s = call_timeout_s
        self.child = child
        self._proc = None
        self._conn = None
        self.info: dict = {}
        self._start(cancelled)

    @property
    def pid(self) -> int | None:
        """The child process's id while it runs (None once stopped)."""
        return self._proc.pid if self._alive() else None

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _start(self, cancelled=None) -> None:
        parent, child = mp.Pipe()
        try:
            proc = _popen(child)
        except OSError as err:
            parent.close()
            raise GpuUnavailable("the GPU session did not start: {detail}", detail=err) from None
        finally:
            child.close()
        self._proc, self._conn = proc, parent
        _LIVE.add(self)
        try:
            parent.send(("start", list(sys.path), self.child))
        except OSError:
            pass                                   # the child died at once: _wait says so
        kind, payload = self._wait(START_TIMEOUT_S, cancelled, "starting the GPU session")
        if kind == "unavailable":
            self._stop()
            raise _unavailable(payload)
        self.info = payload

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a kill the system has not carried out yet
                pass
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def _wait(self, timeout: float, cancelled, what: str, progress=None):
        deadline = time.monotonic() + timeout
        while True:
            while True:
                if cancelled is not None and cancelled():    # first: a cancel that came before the call
                    self._stop()
                    raise Cancelled(f"{what}: cancelled")
                if self._conn.poll(0.05):
                    break
                if time.monotonic() > deadline:
                    self._stop()
                    raise KernelFault(f"{what} ran longer than {timeout:.0f} s and was stopped")
                if self._proc.poll() is not None:
                    self._stop()
                    raise KernelFault(f"{what}: the GPU process died")
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                self._stop()
                raise KernelFault(f"{what}: the GPU process died") from None
            if message[0] != "progress":
                return message
            if progress is not None:
                progress(message[1])

    def _call(self, method: str, *args, cancelled=None, timeout: float | None = None, progress=None, **kwargs):
        if not self._alive():
            self._stop()
            self._start(cancelled)
        if progress is not None:
            kwargs["_progress"] = True
        self._conn.send((method, args, kwargs))
        kind, payload = self._wait(timeout or self.call_timeout_s, cancelled, method.replace("_", " "), progress)
        if kind == "ok":
            return payload
        if kind == "fault":
            self._stop()
            raise KernelFault(payload)
        if kind == "unavailable":
            raise _unavailable(payload)
        raise RuntimeError(f"the GPU process failed in {method}:\n{payload}")

    # -- Session's interface ------------------------------------------------

    def limits(self, cancelled=None):
        return self._call("limits", cancelled=cancelled)

    def run_once(self, spec, initial, cancelled=None):
        return self._call("run_once", spec, initial, cancelled=cancelled)

    def trace_record(self, req, cancelled=None, progress=None):
        """Count, then record (``progress("record")`` between the two, from the child)."""
        return self._call("trace_record", req, cancelled=cancelled, progress=progress)

    def trace_check(self, req, cancelled=None, timeout=None):
        return self._call("trace_check", req, cancelled=cancelled, timeout=timeout)

    def time_launch(self, spec, sets: int = 1, min_runs: int = MIN_RUNS, cancelled=None, initial=None):
        if initial is None:
            return self._call("time_launch", spec, sets, min_runs, cancelled=cancelled)
        return self._call("time_launch", spec, sets, min_runs, cancelled=cancelled, initial=initial)

    def time_memcpy(self, nbytes: int = MEMCPY_BYTES, runs: int = MIN_RUNS, cancelled=None):
        return self._call("time_memcpy", nbytes, runs, cancelled=cancelled)

    def calibrate(self, quick: bool = False, verbose: bool = False, cancelled=None):
        return self._call("calibrate", quick=quick, verbose=verbose, cancelled=cancelled)

    def close(self) -> None:
        if self._conn is not None and self._alive():
            try:
                self._conn.send(("close", (), {}))
                self._proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["ProcessSession", "Cancelled"]
