"""A GPU session in a child process: a kernel that faults, hangs or is cancelled takes
down only the child, and the next call starts a fresh one.

CUDA documents that after an illegal-address fault "the process must be terminated and
relaunched" before CUDA works again, so a faulting kernel must not live in the app's (or
the CLI's) own process. ``ProcessSession`` has ``runner.Session``'s methods; each call is
sent over a pipe to a spawned child that owns the CUDA context. While waiting, the
parent polls ``cancelled()`` and a time limit; either kills the child. A call may report
progress: the child sends ``("progress", stage)`` messages before its answer, handed to the
caller's ``progress`` callback (the trace recorder says when counting ends and recording
starts).

``child`` names the session class the child serves (``"module:Class"``, default
``viz.gpu.runner.Session``): tests serve a replaying session so that the app's real
worker, pipe and cancel path run without a GPU.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback

from . import GpuUnavailable
from .runner import MIN_RUNS, MEMCPY_BYTES, KernelFault

START_TIMEOUT_S = 120
CALL_TIMEOUT_S = 600


class Cancelled(Exception):
    """The caller cancelled; the child process was stopped."""


def _session_class(child: str | None):
    if not child:
        from .runner import Session

        return Session
    import importlib

    module, _, name = child.partition(":")
    return getattr(importlib.import_module(module), name)


def _unavailable(payload) -> GpuUnavailable:
    """The child's GpuUnavailable again (its template, kind and fields)."""
    template, kind, *rest = payload
    return GpuUnavailable(template, kind, **(rest[0] if rest else {}))


def _serve(conn, child: str | None = None) -> None:
    try:
        session = _session_class(child)()
    except GpuUnavailable as err:
        conn.send(("unavailable", err.payload()))
        return
    except Exception as err:  # pragma: no cover - reported to the parent as is
        conn.send(("unavailable", GpuUnavailable("the GPU session did not start: {detail}", detail=err).payload()))
        return
    conn.send(("ok", session.info))
    while True:
        try:
            method, args, kwargs = conn.recv()
        except (EOFError, OSError):
            break
        if method == "close":
            break
        if kwargs.pop("_progress", False):
            kwargs["progress"] = lambda stage: conn.send(("progress", stage))
        try:
            conn.send(("ok", getattr(session, method)(*args, **kwargs)))
        except KernelFault as err:
            conn.send(("fault", str(err)))
            break  # CUDA is unusable in this process now
        except GpuUnavailable as err:
            conn.send(("unavailable", err.payload()))
        except Exception:
            conn.send(("error", traceback.format_exc(limit=8)))
    try:
        session.close()
    except Exception:
        pass


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
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _start(self, cancelled=None) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self.child), daemon=True, name="warpviz-gpu")
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        kind, payload = self._wait(START_TIMEOUT_S, cancelled, "starting the GPU session")
        if kind == "unavailable":
            self._stop()
            raise _unavailable(payload)
        self.info = payload

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(5)
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
                if not self._proc.is_alive():
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
        if self._proc is None or not self._proc.is_alive():
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

    def trace_plain(self, req, cancelled=None):
        return self._call("trace_plain", req, cancelled=cancelled)

    def time_launch(self, spec, sets: int = 1, min_runs: int = MIN_RUNS, cancelled=None, initial=None):
        if initial is None:
            return self._call("time_launch", spec, sets, min_runs, cancelled=cancelled)
        return self._call("time_launch", spec, sets, min_runs, cancelled=cancelled, initial=initial)

    def time_memcpy(self, nbytes: int = MEMCPY_BYTES, runs: int = MIN_RUNS, cancelled=None):
        return self._call("time_memcpy", nbytes, runs, cancelled=cancelled)

    def calibrate(self, quick: bool = False, verbose: bool = False, cancelled=None):
        return self._call("calibrate", quick=quick, verbose=verbose, cancelled=cancelled)

    def close(self) -> None:
        if self._conn is not None and self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(("close", (), {}))
                self._proc.join(10)
            except (OSError, BrokenPipeError):
                pass
        self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["ProcessSession", "Cancelled"]
