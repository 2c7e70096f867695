"""The per-lane checks of a trace's records (``tracefile.check_arrays``), compiled with numba
(cached on disk, like ``viz.kernels_numba``): one pass over the 32 lanes of every record
instead of a dozen whole-array numpy passes (4,000,000 records: 0.3 s instead of 6 s)."""

from __future__ import annotations

from ..kernels_numba import njit  # sets numba's cache folder; numba itself is imported on the first call

INACTIVE_OFFSET = 1     # a lane that is not active has an offset other than 0
OFFSET_RANGE = 2        # an active lane's offset is negative or above the address bound
NOT_SMALLEST = 3        # the record's smallest active offset is not 0 (or no lane is active and base is not 0)
MISALIGNED = 4          # a global lane's address is not a multiple of the access width


@njit(cache=True, nogil=True)
def first_bad_record(active, pred, shared_, global_, flags, base, offset, width, max_address):
    """(row, problem) of the first record whose lanes break a rule above, else (-1, 0).
    ``base``: int64 (checked to be at most ``max_address`` before); ``width``: each row's
    access width in bytes (a power of two)."""
    n = active.shape[0]
    for r in range(n):
        live = active[r] if flags[r] == 0 else 0
        glob = pred[r] & global_[r] & live
        w = width[r]
        b = base[r]
        smallest = max_address + 1
        for k in range(32):
            o = offset[r, k]
            if (live >> k) & 1:
                if o < 0 or o > max_address:
                    return r, OFFSET_RANGE
                if o < smallest:
                    smallest = o
                if w > 1 and (glob >> k) & 1 and ((b + o) & (w - 1)) != 0:
                    return r, MISALIGNED
            elif o != 0:
                return r, INACTIVE_OFFSET
        if live != 0:
            if smallest != 0:
                return r, NOT_SMALLEST
        elif b != 0:
            return r, NOT_SMALLEST
    return -1, 0
