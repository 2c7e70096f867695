"""The per-warp counting rules of MEMORY_MODEL.md, compiled with numba (cached on disk).

Inputs are one instruction's byte addresses and active masks for a set of blocks
(``addr[b, t]``, ``mask[b, t]``, t = thread index in the block); outputs are one row of
figures per (block, warp). Threads beyond the block size do not exist, so a partial last
warp simply has fewer lanes.
"""

from __future__ import annotations

import os
from pathlib import Path


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "warpviz" / "numba")


# The package folder may be read-only (a wheel in a system site-packages), so the compiled
# functions are cached in the user's cache folder instead.
os.environ.setdefault("NUMBA_CACHE_DIR", _cache_dir())

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402


@njit(cache=True, nogil=True)
def _insert_sorted(buf, n, v):
    j = n
    while j > 0 and buf[j - 1] > v:
        buf[j] = buf[j - 1]
        j -= 1
    buf[j] = v


@njit(cache=True, nogil=True)
def shared_counts(addr, mask, size, wavefronts, phases, active):
    """Wavefronts: per phase, the most distinct 32-bit words any one bank must deliver.

    Phases: one for 1/2/4-byte accesses, two half-warps for 8 bytes, four quarter-warps for
    16 bytes; a phase with no active lane costs nothing. Lanes reading (or writing) the same
    word share it, sub-word accesses in one word included.
    """
    nb, nt = addr.shape
    nw = (nt + 31) // 32
    lanes_per_phase = 32 if size <= 4 else (16 if size == 8 else 8)
    nphase = 32 // lanes_per_phase
    words_per_lane = 1 if size <= 4 else size // 4
    buf = np.empty(32, np.int64)
    per_bank = np.zeros(32, np.int32)
    for b in range(nb):
        for w in range(nw):
            total = 0
            used = 0
            act = 0
            for p in range(nphase):
                n = 0
                for k in range(lanes_per_phase):
                    t = w * 32 + p * lanes_per_phase + k
                    if t >= nt:
                        break
                    if not mask[b, t]:
                        continue
                    act += 1
                    word = addr[b, t] >> 2
                    for q in range(words_per_lane):
                        _insert_sorted(buf, n, word + q)
                        n += 1
                if n == 0:
                    continue
                used += 1
                for q in range(32):
                    per_bank[q] = 0
                most = 0
                for j in range(n):
                    if j == 0 or buf[j] != buf[j - 1]:
                        bank = buf[j] & 31
                        per_bank[bank] += 1
                        if per_bank[bank] > most:
                            most = per_bank[bank]
                total += most
            wavefronts[b, w] = total
            phases[b, w] = used
            active[b, w] = act


@njit(cache=True, nogil=True)
def global_counts(addr, mask, sectors, lines, active):
    """Sectors: the distinct 32-byte sectors the active lanes touch; lines: distinct 128-byte lines.

    Accesses are at most 16 bytes and aligned to their size, so each lane's bytes lie in
    one sector.
    """
    nb, nt = addr.shape
    nw = (nt + 31) // 32
    buf = np.empty(32, np.int64)
    for b in range(nb):
        for w in range(nw):
            n = 0
            for k in range(32):
                t = w * 32 + k
                if t >= nt:
                    break
                if mask[b, t]:
                    _insert_sorted(buf, n, addr[b, t] >> 5)
                    n += 1
            ns = 0
            nl = 0
            for j in range(n):
                if j == 0 or buf[j] != buf[j - 1]:
                    ns += 1
                if j == 0 or (buf[j] >> 2) != (buf[j - 1] >> 2):
                    nl += 1
            sectors[b, w] = ns
            lines[b, w] = nl
            active[b, w] = n
