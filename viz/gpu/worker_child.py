"""The GPU worker's child process: ``python -m viz.gpu.worker_child FD PARENT_PID``.

``viz.gpu.worker.ProcessSession`` starts this module as a process of its own (not a
``multiprocessing`` "spawn" child): the caller's ``__main__`` is never imported again here,
so a plain script that calls ``warpviz.trace_triton(...)`` at module level, a notebook and
the CLI all start the same child.

The parent hands over one end of a ``multiprocessing.Pipe`` by inheritance: on POSIX a
socket file descriptor (``subprocess.Popen(pass_fds=...)``), on Windows a pipe handle
(``STARTUPINFO``'s handle list); ``FD`` is its number. Over it come, first,
``("start", sys_path, child)`` (the parent's ``sys.path``, so that a ``child`` class named
by the caller imports here as it does there, and which session class to serve), then the
calls. The child ends when the parent closes the pipe, sends ``close``, or dies (a thread
watches the parent process).
"""

from __future__ import annotations

import os
import sys
import threading
import traceback


def _session_class(child: str | None):
    if not child:
        from .runner import Session

        return Session
    import importlib

    module, _, name = child.partition(":")
    return getattr(importlib.import_module(module), name)


def _serve(conn, child: str | None = None) -> None:
    from . import GpuUnavailable
    from .runner import KernelFault

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


def _watch_parent(parent_pid: int) -> None:
    """End this process when the parent process has gone (even in the middle of a call:
    a hung kernel must not outlive the program that started it)."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        import _winapi

        try:
            handle = _winapi.OpenProcess(_winapi.SYNCHRONIZE, False, parent_pid)
        except OSError:
            os._exit(1)
        _winapi.WaitForSingleObject(handle, _winapi.INFINITE)
        os._exit(1)
    import time

    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(1)


def _connection(fd: int):
    from multiprocessing import connection

    if sys.platform == "win32":  # pragma: no cover - Windows
        return connection.PipeConnection(fd)
    return connection.Connection(fd)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        fd, parent_pid = int(argv[0]), int(argv[1])
    except (IndexError, ValueError):
        print("usage: python -m viz.gpu.worker_child FD PARENT_PID (started by viz.gpu.worker.ProcessSession)",
              file=sys.stderr)
        return 2
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="warpviz-parent-watch").start()
    conn = _connection(fd)
    try:
        what, sys_path, child = conn.recv()
    except (EOFError, OSError, ValueError, TypeError):
        return 1
    if what != "start":
        return 1
    parent_path = [p for p in sys_path if isinstance(p, str)] if isinstance(sys_path, list) else []
    sys.path[:] = parent_path + [p for p in sys.path if p not in parent_path]
    try:
        _serve(conn, child)
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
