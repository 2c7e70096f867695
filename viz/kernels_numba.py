"""The per-warp counting rules of docs/memory-model.md, compiled with numba (cached on disk).

Inputs are one instruction's byte addresses and active masks for a set of blocks
(``addr[b, t]``, ``mask[b, t]``, t = thread index in the block); outputs are one row of
figures per (block, warp). Threads beyond the block size do not exist, so a partial last
warp simply has fewer lanes.
"""

from __future__ import annotations

import os

from .cachedir import numba_dir

# The package folder may be read-only (a wheel in a system site-packages), so the compiled
# functions are cached in the platform's cache folder instead (viz.cachedir: XDG_CACHE_HOME,
# WARPVIZ_CACHE; numba's own NUMBA_CACHE_DIR wins when set).
os.environ.setdefault("NUMBA_CACHE_DIR", str(numba_dir()))

import threading  # noqa: E402

import numpy as np  # noqa: E402

_COMPILE = threading.RLock()


class LazyJit:
    """``numba.njit(**options)(fn)``, made on the first call: importing numba costs about
    0.6 s, which the app no longer pays before its first window (the first analysis, on a
    worker thread, pays it). Other lazily jitted functions that ``fn`` calls (its globals)
    are made first and put in its globals, so numba compiles ``fn`` against the real
    dispatchers. Called from Python, it is the dispatcher: the cache on disk (``cache=True``,
    ``NUMBA_CACHE_DIR`` above) works as before."""

    def __init__(self, fn, options: dict):
        self.py_func = fn
        self.options = options
        self._real = None
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__doc__, self.__module__, self.__wrapped__ = fn.__doc__, fn.__module__, fn

    def dispatcher(self):
        real = self._real
        if real is None:
            with _COMPILE:
                if self._real is None:
                    g = self.py_func.__globals__
                    for name in self.py_func.__code__.co_names:
                        other = g.get(name)
                        if isinstance(other, LazyJit):
                            g[name] = other.dispatcher()
                    import numba

                    self._real = numba.njit(**self.options)(self.py_func)
                real = self._real
        return real

    def __call__(self, *args, **kwargs):
        return self.dispatcher()(*args, **kwargs)


def njit(*args, **options):
    """``numba.njit``'s decorator, lazily (``LazyJit``): ``@njit(cache=True, nogil=True)``."""
    if args and callable(args[0]) and not options:
        return LazyJit(args[0], {})
    return lambda fn: LazyJit(fn, options)


# The rules come from the GPU description (viz.gpus: assets/gpus/, the reference's); numba
# compiles these module globals in as constants, so the code is the same as with literals.
from .gpus import BANK_MASK, LINE_SHIFT, PHASE_8, PHASE_16, SECTOR_SHIFT, WARP, WORD_SHIFT  # noqa: E402

QUADS = WARP // 4                  # aligned lane quads of a warp
MERGED_WORDS = WARP * 4            # a merged phase: up to 32 lanes x 2 words or 16 x 4 (room for 32 x 4)


@njit(cache=True, nogil=True)
def _insert_sorted(buf, n, v):
    j = n
    while j > 0 and buf[j - 1] > v:
        buf[j] = buf[j - 1]
        j -= 1
    buf[j] = v


@njit(cache=True, nogil=True)
def _agree(addr, mask, b, nt, t, u):
    """Lanes t and u ask for the same address, or one of them is inactive or missing."""
    if t >= nt or u >= nt or not mask[b, t] or not mask[b, u]:
        return True
    return addr[b, t] == addr[b, u]


@njit(cache=True, nogil=True)
def paired_quads(addr, mask, b, w, nt):
    """Every aligned lane quad repeats its addresses in pairs: lanes (0,1) and (2,3) agree,
    or lanes (0,2) and (1,3) agree."""
    for k in range(QUADS):
        t = w * WARP + 4 * k
        side = _agree(addr, mask, b, nt, t, t + 1) and _agree(addr, mask, b, nt, t + 2, t + 3)
        cross = _agree(addr, mask, b, nt, t, t + 2) and _agree(addr, mask, b, nt, t + 1, t + 3)
        if not (side or cross):
            return False
    return True


@njit(cache=True, nogil=True)
def wide_load_phases(addr, mask, b, w, nt, size, starts, lengths):
    """Phases of one warp's shared load; returns their number (lane ranges in starts/lengths).

    docs/memory-model.md: one phase for 1/2/4-byte accesses, half-warps for 8 bytes, quarter-warps
    for 16 bytes. Measured on the H100 (docs/GPU.md: 87 probes, 200 random scenarios),
    8- and 16-byte *loads* take half as many phases when the warp repeats addresses in lane
    pairs: if every lane quad has lanes (0,1) and (2,3) on one address each, or lanes (0,2)
    and (1,3), an 8-byte load is one 32-lane phase and a 16-byte load two 16-lane phases.
    Stores keep the fixed phases.
    """
    base = w * WARP
    per = WARP if size <= 4 else (PHASE_8 if size == 8 else PHASE_16)
    if size > 4 and paired_quads(addr, mask, b, w, nt):
        per *= 2
    n = WARP // per
    for p in range(n):
        starts[p] = base + p * per
        lengths[p] = per
    return n


@njit(cache=True, nogil=True)
def shared_counts(addr, mask, size, is_load, wavefronts, phases, active, paired, deepest):
    """Wavefronts: per phase, the most distinct 32-bit words any one bank must deliver.

    Phases: see ``wide_load_phases``; a phase with no active lane costs nothing. Lanes
    reading (or writing) the same word share it, sub-word accesses in one word included.
    ``paired``: 1 where an issued wide load took half the phases (its lanes repeat
    addresses in pairs); ``deepest``: the most wavefronts any one of the warp's phases took.
    """
    nb, nt = addr.shape
    nw = (nt + WARP - 1) // WARP
    words_per_lane = 1 if size <= 4 else size >> WORD_SHIFT
    buf = np.empty(MERGED_WORDS, np.int64)
    per_bank = np.zeros(BANK_MASK + 1, np.int32)
    starts = np.zeros(4, np.int64)
    lengths = np.zeros(4, np.int64)
    for b in range(nb):
        for w in range(nw):
            nominal = WARP // (WARP if size <= 4 else (PHASE_8 if size == 8 else PHASE_16))
            if is_load:
                nphase = wide_load_phases(addr, mask, b, w, nt, size, starts, lengths)
            else:
                per = WARP if size <= 4 else (PHASE_8 if size == 8 else PHASE_16)
                nphase = WARP // per
                for p in range(nphase):
                    starts[p] = w * WARP + p * per
                    lengths[p] = per
            total = 0
            used = 0
            act = 0
            deep = 0
            for p in range(nphase):
                n = 0
                for t in range(starts[p], starts[p] + lengths[p]):
                    if t >= nt:
                        break
                    if not mask[b, t]:
                        continue
                    act += 1
                    word = addr[b, t] >> WORD_SHIFT
                    for q in range(words_per_lane):
                        _insert_sorted(buf, n, word + q)
                        n += 1
                if n == 0:
                    continue
                used += 1
                for q in range(BANK_MASK + 1):
                    per_bank[q] = 0
                most = 0
                for j in range(n):
                    if j == 0 or buf[j] != buf[j - 1]:
                        bank = buf[j] & BANK_MASK
                        per_bank[bank] += 1
                        if per_bank[bank] > most:
                            most = per_bank[bank]
                total += most
                if most > deep:
                    deep = most
            wavefronts[b, w] = total
            phases[b, w] = used
            active[b, w] = act
            paired[b, w] = 1 if (act > 0 and nphase < nominal) else 0
            deepest[b, w] = deep


@njit(cache=True, nogil=True)
def global_counts(addr, mask, sectors, lines, active, distinct):
    """Sectors: the distinct 32-byte sectors the active lanes touch; lines: distinct 128-byte lines;
    distinct: the distinct addresses the active lanes ask for.

    Accesses are at most 16 bytes and aligned to their size, so each lane's bytes lie in
    one sector, and two lanes' bytes are either the same or disjoint.
    """
    nb, nt = addr.shape
    nw = (nt + WARP - 1) // WARP
    buf = np.empty(WARP, np.int64)
    for b in range(nb):
        for w in range(nw):
            n = 0
            for k in range(WARP):
                t = w * WARP + k
                if t >= nt:
                    break
                if mask[b, t]:
                    _insert_sorted(buf, n, addr[b, t])
                    n += 1
            ns = 0
            nl = 0
            nd = 0
            for j in range(n):
                if j == 0 or buf[j] != buf[j - 1]:
                    nd += 1
                if j == 0 or (buf[j] >> SECTOR_SHIFT) != (buf[j - 1] >> SECTOR_SHIFT):
                    ns += 1
                if j == 0 or (buf[j] >> LINE_SHIFT) != (buf[j - 1] >> LINE_SHIFT):
                    nl += 1
            sectors[b, w] = ns
            lines[b, w] = nl
            active[b, w] = n
            distinct[b, w] = nd
