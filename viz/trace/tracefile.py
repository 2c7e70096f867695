"""The trace file ``.wvtrace``: a zip archive holding ``header.json`` and numpy arrays.

``header.json`` (format ``warpviz-trace``, ``version`` 1) is self-contained: the launch
file's text, the CUDA source(s), the GPU, driver and compiler versions, the launch, the
recorded blocks and the table of static memory instructions (PTX text, kind, space,
width, source file and line). The arrays hold one row per recorded warp-level execution
of a memory instruction, ordered by block, then warp, then the warp's own order:

  instr, block, warp   uint32   static instruction id, linear block, warp in the block
  active, pred         uint32   lanes that executed it (activemask), lanes whose predicate held
  shared, global       uint32   lanes whose address is in shared / global memory
  base                 uint64   the smallest address of the record's active lanes
  offset               int32 (or int64) x 32   each lane's address - base (0 for lanes not active)
  flags                uint8    1: a skip record (a warp whose lanes all branched around a
                                shared load/store that ptxas may predicate; no lane on)

Arrays are stored with numpy's .npy format inside the deflated zip; addresses compress
well as small offsets. ``docs/trace-format.md`` is the reference.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..fileio import atomic_target
from . import TraceError

MAGIC = "warpviz-trace"
VERSION = 1
ARRAYS = ("instr", "block", "warp", "active", "pred", "shared", "global", "base", "offset", "flags")
OPTIONAL = {"flags"}  # absent in the first traces: all zero


@dataclass
class Trace:
    header: dict
    instr: np.ndarray
    block: np.ndarray
    warp: np.ndarray
    active: np.ndarray
    pred: np.ndarray
    shared: np.ndarray
    global_: np.ndarray
    base: np.ndarray
    offset: np.ndarray
    flags: np.ndarray = field(default=None)
    path: Path | None = field(default=None)

    def __post_init__(self):
        if self.flags is None:
            self.flags = np.zeros(self.instr.shape, np.uint8)

    @property
    def records(self) -> int:
        return int(self.instr.size)

    @property
    def instructions(self) -> list[dict]:
        return self.header["instructions"]

    def addresses(self, rows=slice(None)) -> np.ndarray:
        """(n, 32) int64 byte addresses (shared: offset in the shared window)."""
        return self.base[rows].astype(np.int64)[:, None] + self.offset[rows].astype(np.int64)

    def lane_accesses(self) -> int:
        return int(np.unpackbits(self.pred.view(np.uint8)).sum())


def from_records(header: dict, rec_header: np.ndarray, addr: np.ndarray) -> Trace:
    """A Trace from the recorder's raw rows (header words and 32 addresses per row)."""
    n = rec_header.shape[0]
    h = rec_header.astype(np.uint32, copy=False)
    order = np.lexsort((np.arange(n), h[:, 2], h[:, 1]))  # block, warp, then recording order
    h = h[order]
    addr = addr[order].astype(np.uint64, copy=False)
    active = h[:, 3]
    flags = (h[:, 7] & 1).astype(np.uint8)
    bits = ((active[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool) & (flags == 0)[:, None]
    a = addr.view(np.int64) if addr.dtype == np.uint64 else addr.astype(np.int64)
    big = np.iinfo(np.int64).max
    base = np.where(bits, a, big).min(axis=1) if n else np.zeros(0, np.int64)
    base = np.where(base == big, 0, base)
    off = np.where(bits, a - base[:, None], 0)
    if n and (off.min() < np.iinfo(np.int32).min or off.max() > np.iinfo(np.int32).max):
        off = off.astype(np.int64)
    else:
        off = off.astype(np.int32)
    return Trace(header, h[:, 0].copy(), h[:, 1].copy(), h[:, 2].copy(), active.copy(), h[:, 4].copy(),
                 h[:, 5].copy(), h[:, 6].copy(), base.astype(np.uint64), off, flags)


def save(trace: Trace, path: str | Path) -> Path:
    """Write atomically (a temporary file, then a rename)."""
    path = Path(path)
    header = dict(trace.header, format=MAGIC, version=VERSION, records=trace.records)
    with atomic_target(path) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            z.writestr("header.json", json.dumps(header, indent=1))
            for name in ARRAYS:
                arr = getattr(trace, "global_" if name == "global" else name)
                bio = io.BytesIO()
                np.lib.format.write_array(bio, np.ascontiguousarray(arr), allow_pickle=False)
                z.writestr(f"{name}.npy", bio.getvalue())
    return path


def _bad(path, problem: str, fix: str = "record the trace again with `warpviz trace LAUNCH.toml`") -> TraceError:
    return TraceError(path, "", problem, fix)


def load(path: str | Path) -> Trace:
    """Read a .wvtrace; TraceError (one paragraph) for a missing, corrupt, truncated or newer file."""
    path = Path(path)
    try:
        z = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise TraceError(path, "", "no such file", "check the path") from None
    except OSError as err:
        raise TraceError(path, "", f"cannot read the file: {err.strerror or err}", "check the path") from None
    except zipfile.BadZipFile:
        raise _bad(path, "not a warpviz trace, or a corrupt or truncated one (it is not a readable zip archive)") \
            from None
    with z:
        try:
            header = json.loads(z.read("header.json"))
        except KeyError:
            raise _bad(path, "not a warpviz trace: the archive has no header.json") from None
        except (zipfile.BadZipFile, ValueError, EOFError, OSError) as err:
            raise _bad(path, f"the trace's header is corrupt ({err})") from None
        if not isinstance(header, dict) or header.get("format") != MAGIC:
            raise _bad(path, "not a warpviz trace: its header does not say format = warpviz-trace")
        version = header.get("version")
        if not isinstance(version, int):
            raise _bad(path, "the trace's header has no format version")
        if version > VERSION:
            raise TraceError(path, "version", f"the trace is format version {version}, made by a newer warpviz; "
                             f"this warpviz reads version {VERSION} and older", "update warpviz to open it")
        arrays = {}
        for name in ARRAYS:
            try:
                arrays[name] = np.lib.format.read_array(io.BytesIO(z.read(f"{name}.npy")), allow_pickle=False)
            except KeyError:
                if name in OPTIONAL:
                    arrays[name] = np.zeros(arrays["instr"].shape, np.uint8)
                    continue
                raise _bad(path, f"the trace is incomplete: the array `{name}` is missing") from None
            except (zipfile.BadZipFile, ValueError, EOFError, OSError) as err:
                raise _bad(path, f"the trace's array `{name}` is corrupt or truncated ({err})") from None
    n = arrays["instr"].shape[0]
    for name in ARRAYS:
        a = arrays[name]
        want = (n, 32) if name == "offset" else (n,)
        if a.shape != want:
            raise _bad(path, f"the trace is inconsistent: array `{name}` has shape {a.shape}, expected {want}")
    ninstr = len(header.get("instructions", []))
    if n and int(arrays["instr"].max()) >= ninstr:
        raise _bad(path, "the trace is inconsistent: a record names a static instruction the header does not list")
    return Trace(header, arrays["instr"], arrays["block"], arrays["warp"], arrays["active"], arrays["pred"],
                 arrays["shared"], arrays["global"], arrays["base"], arrays["offset"], arrays["flags"], path)


__all__ = ["Trace", "save", "load", "from_records", "VERSION", "MAGIC"]


def shipped_dir() -> Path:
    """assets/traces: traces of the kernels/ launch files recorded on an H100."""
    from .. import assets

    return assets.root() / "traces"


def shipped() -> list[Path]:
    return sorted(shipped_dir().glob("*.wvtrace"))
