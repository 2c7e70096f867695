"""Atomic writes: every file warpviz writes appears whole or not at all (no Qt).

A temporary file of its own beside the target (``tempfile.mkstemp``: unique per writer,
so two threads or processes writing one path never share it), given the mode the target
has or, for a new file, what the umask makes of 0666 (mkstemp makes it private, 0600);
written, then renamed over the target. On any failure the temporary file is removed and
the target is untouched. ``viz.export`` builds its exports on ``temp_beside``; results
files, calibrations, traces and the compile cache use ``write_atomic`` / ``atomic_target``.
"""

from __future__ import annotations

import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

_UMASK: int | None = None
_UMASK_LOCK = threading.Lock()


def umask() -> int:
    """The process umask (read once: os.umask can only be read by setting it)."""
    global _UMASK
    with _UMASK_LOCK:
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


def temp_beside(path: Path, prefix: str | None = None, suffix: str = ".tmp", folder: Path | None = None) -> Path:
    """A new, empty temporary file in ``folder`` (default: ``path``'s folder), named
    ``.<name>.XXXX<suffix>`` unless ``prefix`` is given, with the mode ``path`` has or would
    get. Raises OSError."""
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=folder if folder is not None else path.parent,
                                prefix=prefix if prefix is not None else f".{path.name}.", suffix=suffix)
    mode = (os.stat(path).st_mode & 0o777) if path.exists() else (0o666 & ~umask())
    try:
        os.fchmod(fd, mode)
    except OSError:
        pass
    os.close(fd)
    return Path(name)


@contextmanager
def atomic_target(path: str | Path):
    """``with atomic_target(path) as tmp:`` write ``tmp`` (by name); leaving the block
    renames it over ``path``, an exception removes it and leaves ``path`` as it was."""
    path = Path(path)
    tmp = temp_beside(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Writes ``data`` (text as UTF-8) to ``path`` atomically, making its folder if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


__all__ = ["umask", "temp_beside", "atomic_target", "write_atomic"]
