"""Where warpviz caches what it compiles, and how big that may grow (no Qt, no GPU).

The cache folder is the platform's (``platformdirs.user_cache_path("warpviz")``):
``$XDG_CACHE_HOME/warpviz`` or ``~/.cache/warpviz`` on Linux, ``~/Library/Caches/warpviz``
on macOS, ``%LOCALAPPDATA%\\warpviz\\Cache`` on Windows; ``WARPVIZ_CACHE=DIR`` puts it in DIR.
Inside it:

- ``numba/``: the counting rules compiled by numba (``viz.kernels_numba``; numba's own
  ``NUMBA_CACHE_DIR``, when set, wins). Numba keeps one entry per function and signature,
  a few MB in all, so it is not trimmed here.
- ``cubin/``: nvcc's cubins, ptxas' resource reports and SASS profiles of the generated
  kernels and traced launches (``viz.toolchain.compile``, ``viz.toolchain.sass``,
  ``viz.gpu.tracebench``). Every write is followed by ``trim``: while the files warpviz
  wrote there hold more than ``MAX_CUBIN_CACHE_BYTES`` (256 MiB; ``WARPVIZ_CACHE_MAX_MB=N``
  sets another cap, 0 keeps nothing), the least recently used entries are removed (an
  entry: the files of one key, e.g. a cubin and ptxas' report of it). A cache hit
  ``touch``-es its file, so "recently used" is the newest modification time of an entry's files. Only files
  named as warpviz names its entries (``<32 hex digits>.<kind>``, regular files, not links)
  are counted or removed: anything else in the folder is left alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MAX_CUBIN_CACHE_BYTES = 256 * 2**20
MAX_CACHE_MB_LIMIT = 2**20          # WARPVIZ_CACHE_MAX_MB: at most 1 TiB
# the names of the entries warpviz writes in cubin/: the key, then what the entry is
ENTRY = re.compile(r"[0-9a-f]{32}\.(cubin|usage\.json|trace\.cubin|trace\.json|sass[0-9A-Za-z_.-]{0,40}\.json)")


def root() -> Path:
    """The cache folder (not created)."""
    if os.environ.get("WARPVIZ_CACHE"):
        return Path(os.environ["WARPVIZ_CACHE"])
    import platformdirs

    return platformdirs.user_cache_path("warpviz", appauthor=False)


def numba_dir() -> Path:
    return root() / "numba"


def cubin_dir() -> Path:
    """The compile cache's folder, created when missing."""
    d = root() / "cubin"
    d.mkdir(parents=True, exist_ok=True)
    return d


def max_bytes() -> int:
    """The compile cache's cap: ``WARPVIZ_CACHE_MAX_MB`` (whole MiB, 0 to 1048576) or 256 MiB.
    A value that is not such a number is ignored (the default applies)."""
    text = os.environ.get("WARPVIZ_CACHE_MAX_MB", "").strip()
    if text.isdigit() and len(text) <= 8 and int(text) <= MAX_CACHE_MB_LIMIT:
        return int(text) * 2**20
    return MAX_CUBIN_CACHE_BYTES


def touch(path: Path) -> None:
    """Mark a cache entry as used now (its modification time), so ``trim`` keeps it longest."""
    try:
        os.utime(path)
    except OSError:
        pass                        # a read-only cache is still a cache


def entries(folder: Path) -> list[tuple[float, int, list[Path]]]:
    """The entries warpviz wrote in ``folder``, least recently used first: (last use, size,
    files), the files of one key (a cubin and ptxas' report of it) counting as one entry."""
    groups: dict[str, list] = {}
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return []
    for e in listing:
        if not ENTRY.fullmatch(e.name):
            continue
        try:
            if not e.is_file(follow_symlinks=False):
                continue
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        g = groups.setdefault(e.name[:32], [0.0, 0, []])
        g[0] = max(g[0], st.st_mtime)
        g[1] += st.st_size
        g[2].append(Path(e.path))
    found = [(used, size, sorted(files)) for used, size, files in groups.values()]
    found.sort(key=lambda t: (t[0], t[2][0].name))
    return found


def trim(folder: Path | None = None, limit: int | None = None) -> list[Path]:
    """Remove the least recently used entries of the compile cache until those left hold at
    most ``limit`` bytes (default ``max_bytes()``); returns the files removed."""
    folder = cubin_dir() if folder is None else folder
    limit = max_bytes() if limit is None else limit
    found = entries(folder)
    total = sum(size for _, size, _ in found)
    removed = []
    for _, size, files in found:
        if total <= limit:
            break
        for path in files:
            try:
                path.unlink()
            except FileNotFoundError:
                pass                # another warpviz removed it first
            except OSError:
                continue
            removed.append(path)
        total -= size
    return removed
