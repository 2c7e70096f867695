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
                                shared load/store that ptxas may predicate; no lane on);
                                2: a TMA / bulk-copy record (viz.kinds.tma_copy): no lane
                                address; its operands are the next row of ``payload``
  payload              uint64 x 32   (optional) the operands of each flags-2 record, in order:
                                the tensor map's 128 bytes, coordinates, shared address ...

Arrays are stored with numpy's .npy format inside the deflated zip; addresses compress
well as small offsets. ``docs/trace-format.md`` is the reference.

A trace is hostile input until ``load`` has checked it: the file (a regular file of at
most ``MAX_FILE_BYTES``), the zip archive (its directory, each member's declared size
against a cap and against its ``.npy`` header, read with bounded reads), the header (the
schema of ``viz.trace.schema``) and every array value (``check_arrays``). What ``load``
returns can be trusted by the analysis, the picture and the cost model; every refusal is
a ``TraceError`` paragraph naming the file, the member or field, and the fix.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import struct
import tokenize
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..engine import Cancelled
from ..fileio import atomic_target, format_bytes as _size
from . import TraceError
from . import schema
from ..kinds import registry

MAGIC = "warpviz-trace"
VERSION = 1
ARRAYS = ("instr", "block", "warp", "active", "pred", "shared", "global", "base", "offset", "flags")
OPTIONAL = {"flags"}  # absent in the first traces: all zero

# What ``load`` takes on (docs/trace-format.md, "What `load` checks"). A trace ``warpviz trace`` writes
# stays inside every one of them.
MAX_FILE_BYTES = 1 << 30            # the .wvtrace file
MAX_HEADER_BYTES = 32 << 20         # header.json, uncompressed
MAX_RECORDS = 4_000_000             # warp-level executions: what the recorder writes at most (record.MAX_RECORDS)
MAX_MEMBERS = 64                    # entries of the zip archive
MAX_DIRECTORY_BYTES = 64 << 10      # the zip archive's central directory
MAX_NPY_HEADER = 4096               # bytes of an array's .npy header (numpy writes 128)
MAX_ADDRESS = 1 << 57               # a recorded base address or lane offset (GPUs use 49 bits)
HEADER_MEMBER = "header.json"
# dtype (kind, bytes) each array may have, as ``save`` writes it; values per row
DTYPES = {"instr": (("u", 4),), "block": (("u", 4),), "warp": (("u", 4),), "active": (("u", 4),),
          "pred": (("u", 4),), "shared": (("u", 4),), "global": (("u", 4),), "base": (("u", 8),),
          "offset": (("i", 4), ("i", 8)), "flags": (("u", 1),), "payload": (("u", 8),)}
ROW_VALUES = {"offset": 32, "payload": 32}
PAYLOAD = "payload"     # the payload records' operands (its own row count; TraceForm.payload: TMA and bulk copies)
PAYLOAD_FLAG = 2        # a payload record's flags
TMA_FLAG = PAYLOAD_FLAG  # the name it had when TMA copies were the only payload records
CHECK_ROWS = 1 << 16                # rows whose values are checked at a time (bounded temporaries)
READ_BYTES = 16 << 20               # bytes read from a member at a time
FIX = ("record the trace again with `warpviz trace LAUNCH.toml` (or `Record trace` in the app), or get an "
       "intact copy of the file")


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
    payload: np.ndarray = field(default=None)     # (flags-2 records, 32) uint64
    # a replayed trace (viz.trace.replay): the shared addresses its operand records name (a TMA box, a wgmma's
    # core matrices) are counted re-mapped by this ((int64 array) -> int64 array; TraceForm.replay); not saved
    shared_remap: Callable | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.flags is None:
            self.flags = np.zeros(self.instr.shape, np.uint8)
        if self.payload is None:
            self.payload = np.zeros((0, 32), np.uint64)

    def payload_rows(self, rows) -> np.ndarray:
        """The payload row of each of ``rows`` (records of flags 2): its rank among them."""
        rank = np.cumsum(self.flags == PAYLOAD_FLAG) - 1
        return rank[np.asarray(rows, np.int64)]

    @property
    def block_dim(self) -> tuple[int, int, int]:
        """The launch's block extents (three; ``load`` checked them against CUDA's limits)."""
        return _three(self.header["launch"]["block"])

    @property
    def grid_dim(self) -> tuple[int, int, int]:
        return _three(self.header["launch"]["grid"])

    @property
    def blocks(self) -> int:
        """Blocks in the launch's grid (a Python int: up to about 2**63)."""
        return math.prod(self.grid_dim)

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block_dim)

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // 32)

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


def _three(dims) -> tuple[int, int, int]:
    d = tuple(int(x) for x in dims)
    return (d + (1, 1, 1))[:3]


def from_records(header: dict, rec_header: np.ndarray, addr: np.ndarray) -> Trace:
    """A Trace from the recorder's raw rows (header words and 32 addresses per row)."""
    n = rec_header.shape[0]
    h = rec_header.astype(np.uint32, copy=False)
    order = np.lexsort((np.arange(n), h[:, 2], h[:, 1]))  # block, warp, then recording order
    h = h[order]
    addr = addr[order].astype(np.uint64, copy=False)
    active = h[:, 3]
    flags = (h[:, 7] & 3).astype(np.uint8)
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
    payload = np.ascontiguousarray(addr[flags == PAYLOAD_FLAG].astype(np.uint64)).reshape(-1, 32)
    return Trace(header, h[:, 0].copy(), h[:, 1].copy(), h[:, 2].copy(), active.copy(), h[:, 4].copy(),
                 h[:, 5].copy(), h[:, 6].copy(), base.astype(np.uint64), off, flags, payload=payload)


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
            if trace.payload.shape[0]:
                bio = io.BytesIO()
                np.lib.format.write_array(bio, np.ascontiguousarray(trace.payload, np.uint64), allow_pickle=False)
                z.writestr(f"{PAYLOAD}.npy", bio.getvalue())
    return path


# ---------------------------------------------------------------------------- reading (hostile input)

# What a damaged archive or member can raise while it is read: each becomes a TraceError.
READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, struct.error, NotImplementedError,
               RuntimeError, OverflowError, IndexError, KeyError, TypeError, MemoryError)


def _bad(path, problem: str, fix: str = FIX, where: str = "") -> TraceError:
    return TraceError(path, where, problem, fix)


def _corrupt(path, what: str, err: BaseException | None = None, where: str = "") -> TraceError:
    why = f" ({str(err)[:200] or type(err).__name__})" if err is not None else ""
    return _bad(path, f"{what} is corrupt or truncated{why}", where=where)


_FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
               (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def _open_regular(path: Path):
    """The file, opened for reading: TraceError unless it is a regular file of at most
    MAX_FILE_BYTES. Opened without blocking and checked on the open descriptor, so a FIFO
    put in its place cannot hang the reader."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TraceError(path, "", "no such file", "check the path") from None
    except (OSError, ValueError) as err:     # ValueError: a NUL in the name
        why = getattr(err, "strerror", None) or str(err)
        raise TraceError(path, "", f"cannot read the file: {why}", "check the path and its permissions") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = next((w for test, w in _FILE_KINDS if test(st.st_mode)), "not a regular file")
            raise TraceError(path, "", f"this is {what}, not a trace file", "open a .wvtrace file")
        if st.st_size > MAX_FILE_BYTES:
            raise TraceError(path, "", f"the file has {_size(st.st_size)}, more than the {_size(MAX_FILE_BYTES)} "
                             "warpviz reads as a trace", "record fewer blocks (`warpviz trace --blocks 0-15`)")
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return f, st.st_size


def _check_directory(path: Path, f, size: int) -> None:
    """The zip archive's end record, read before ``zipfile`` parses the directory it points
    to: at most MAX_MEMBERS entries in MAX_DIRECTORY_BYTES, no zip64 (a trace never needs it).
    Finds the end record where ``zipfile`` does (the last 22 bytes, else the last
    signature in the last 64 KiB)."""
    not_zip = "not a warpviz trace, or a corrupt or truncated one (it is not a readable zip archive)"
    tail_len = min(size, 22 + 65535)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    if len(tail) >= 22 and tail[-22:-18] == b"PK\x05\x06" and tail[-2:] == b"\0\0":
        at = len(tail) - 22
    else:
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise _bad(path, not_zip)
    _sig, _d, _dcd, _nd, entries, cd_size, _off, _c = struct.unpack("<4s4H2LH", tail[at:at + 22])
    where = size - tail_len + at
    zip64 = False
    if where >= 20:
        f.seek(where - 20)
        zip64 = f.read(4) == b"PK\x06\x07"
    if zip64 or entries > MAX_MEMBERS or cd_size > MAX_DIRECTORY_BYTES:
        raise _bad(path, f"the zip archive's directory lists {entries:,} entries in {_size(cd_size)}"
                   f"{' (zip64)' if zip64 else ''}; a trace has at most {MAX_MEMBERS} entries in "
                   f"{_size(MAX_DIRECTORY_BYTES)}", where="zip directory")
    f.seek(0)


def _member_cap(name: str) -> int:
    if name == HEADER_MEMBER:
        return MAX_HEADER_BYTES
    return MAX_NPY_HEADER + MAX_RECORDS * ROW_VALUES.get(name, 1) * max(b for _k, b in DTYPES[name])


def _members(path: Path, z: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The archive's entries by name, each checked before anything is read: not twice, not
    encrypted, stored or deflated, and a declared (uncompressed) size under its cap."""
    out: dict[str, zipfile.ZipInfo] = {}
    wanted = {HEADER_MEMBER} | {f"{n}.npy" for n in ARRAYS + (PAYLOAD,)}
    for info in z.infolist():
        name = info.filename
        if name in out:
            raise _bad(path, f"the archive holds `{name[:80]}` twice", where=name[:80])
        out[name] = info
        if name not in wanted:
            continue
        if info.flag_bits & 0x1:
            raise _bad(path, f"`{name}` is encrypted; a trace is not", where=name)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _bad(path, f"`{name}` is compressed with zip method {info.compress_type}; a trace is deflated "
                       "(method 8) or stored", where=name)
        cap = _member_cap(name[:-len(".npy")] if name.endswith(".npy") else name)
        if info.file_size > cap:
            raise _bad(path, f"`{name}` declares {_size(info.file_size)} uncompressed, more than the "
                       f"{_size(cap)} a trace's `{name}` can have", where=name)
    return out


def _read_exact(path: Path, f, n: int, buf: memoryview, name: str) -> None:
    """Read exactly ``n`` bytes of member ``name`` into ``buf``, ``READ_BYTES`` at a time;
    then the member must end (its CRC is checked there)."""
    pos = 0
    while pos < n:
        chunk = f.read(min(READ_BYTES, n - pos))
        if not chunk:
            raise _bad(path, f"`{name}` is truncated: {_size(pos)} of the {_size(n)} it declares", where=name)
        buf[pos:pos + len(chunk)] = chunk
        pos += len(chunk)
    if f.read(1):
        raise _bad(path, f"`{name}` is longer than it declares", where=name)


def _read_member(path: Path, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    buf = bytearray(info.file_size)
    try:
        with z.open(info) as f:
            _read_exact(path, f, info.file_size, memoryview(buf), info.filename)
    except TraceError:
        raise
    except READ_ERRORS as err:
        raise _corrupt(path, f"the trace's `{info.filename}`", err, where=info.filename) from None
    return bytes(buf)


def _finite(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"the number {text[:40]} is out of range")
    return v


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse_header(path: Path, data: bytes) -> dict:
    """header.json's bytes -> the checked header (``viz.trace.schema.HEADER``, defaults
    filled in). TraceError names the field."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _bad(path, f"header.json is not UTF-8 text (byte {err.start:,})", where=HEADER_MEMBER) from None
    try:
        header = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise _bad(path, f"header.json nests lists or tables more than {schema.MAX_DEPTH} deep",
                   where=HEADER_MEMBER) from None
    except ValueError as err:
        raise _bad(path, f"the trace's header is corrupt ({str(err)[:200]})", where=HEADER_MEMBER) from None
    if not isinstance(header, dict) or header.get("format") != MAGIC:
        raise _bad(path, "not a warpviz trace: its header does not say format = warpviz-trace")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _bad(path, "the trace's header has no format version", where="header.json: version")
    if version > VERSION:
        raise TraceError(path, "version", f"the trace is format version {version}, made by a newer warpviz; "
                         f"this warpviz reads version {VERSION} and older", "update warpviz to open it")
    return check_header(path, header)


def check_header(path, header: dict) -> dict:
    """The header checked against ``viz.trace.schema.HEADER`` and the cross-field rules
    (instruction ids are table positions; skip regions name listed instructions); returns
    it with the defaults filled in. TraceError names the field and its problem."""
    try:
        header = schema.check(schema.HEADER, header)
    except RecursionError:
        raise _bad(path, f"header.json nests lists or tables more than {schema.MAX_DEPTH} deep",
                   where=HEADER_MEMBER) from None
    except schema.SchemaError as err:
        raise _bad(path, f"the header's `{err.where}` {err.problem}", where=f"header.json: {err.where}") from None
    for k, ins in enumerate(header["instructions"]):
        if ins["id"] != k:
            raise _bad(path, f"the header's `instructions[{k}].id` is {ins['id']}; entry {k} of the instruction "
                       f"table must have id {k}", where=f"header.json: instructions[{k}].id")
    split: dict = {}
    for ins in header["instructions"]:
        # an inline-asm instruction's .loc is its asm statement's last line: show its mnemonic's
        ins["line"] = schema.mnemonic_line(header, ins, split)
    n = len(header["instructions"])
    for k, ins in enumerate(header["instructions"]):
        info = ins.get("sass")
        if not info:
            continue
        refs = [("group", j, i) for j, i in enumerate(info["group"])]
        if info["first"] is not None:
            refs.append(("first", None, info["first"]))
        for key, j, i in refs:
            if i >= n:
                at = f"instructions[{k}].sass.{key}" + (f"[{j}]" if j is not None else "")
                raise _bad(path, f"the header's `{at}` is {i}; the instruction table has ids 0 to {n - 1}",
                           where=f"header.json: {at}")
    for k, r in enumerate(header.get("skip_regions") or []):
        for j, i in enumerate(r.get("instructions") or []):
            if i >= n:
                raise _bad(path, f"the header's `skip_regions[{k}].instructions[{j}]` is {i}; the instruction "
                           f"table has ids 0 to {n - 1}", where=f"header.json: skip_regions[{k}].instructions[{j}]")
    return header


def _array_header(path: Path, f, info: zipfile.ZipInfo, name: str) -> tuple[np.dtype, tuple]:
    """An array member's .npy header, checked against ``DTYPES`` and against the member's
    declared size: (dtype, shape). Nothing of the data is read."""
    member = info.filename
    try:
        major, _minor = np.lib.format.read_magic(f)
        if major == 1:
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_NPY_HEADER)
        elif major == 2:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_NPY_HEADER)
        else:
            raise _bad(path, f"`{member}` is a .npy file of format version {major}; a trace's arrays are version 1",
                       where=member)
        start = f.tell()
    except TraceError:
        raise
    except (*READ_ERRORS, SyntaxError, tokenize.TokenError) as err:    # numpy tokenizes the header's text
        raise _corrupt(path, f"the trace's array `{name}`", err, where=member) from None
    if dtype.fields is not None or dtype.subdtype is not None or (dtype.kind, dtype.itemsize) not in DTYPES[name]:
        want = " or ".join(np.dtype(f"{k}{b}").name for k, b in DTYPES[name])
        raise _bad(path, f"the trace's array `{name}` has dtype {dtype.str}; it must be {want}", where=member)
    if fortran:
        raise _bad(path, f"the trace's array `{name}` is in Fortran order; a trace's arrays are in C order",
                   where=member)
    per_row = ROW_VALUES.get(name)
    ok = len(shape) == (2 if per_row else 1) and all(isinstance(x, int) and x >= 0 for x in shape) \
        and (per_row is None or shape[1] == per_row)
    if not ok:
        want = f"(records, {per_row})" if per_row else "(records,)"
        raise _bad(path, f"the trace's array `{name}` has shape {shape}; it must be {want}", where=member)
    if shape[0] > MAX_RECORDS:
        raise _bad(path, f"the trace's array `{name}` declares {shape[0]:,} records, more than the {MAX_RECORDS:,} "
                   "warpviz analyses (what `warpviz trace` records at most)",
                   "record fewer blocks (`warpviz trace --blocks 0-15`)", where=member)
    data = math.prod(shape) * dtype.itemsize
    if info.file_size != start + data:
        raise _bad(path, f"the trace's array `{name}` is inconsistent: its .npy header declares {shape} x "
                   f"{dtype.itemsize} bytes ({_size(start + data)} with the header), but the archive declares "
                   f"{_size(info.file_size)}", where=member)
    return dtype, shape


def _read_array(path: Path, z: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, records: int | None) -> np.ndarray:
    member = info.filename
    try:
        with z.open(info) as f:
            dtype, shape = _array_header(path, f, info, name)
            if records is not None and shape[0] != records:
                want = (records, 32) if name == "offset" else (records,)
                raise _bad(path, f"the trace is inconsistent: array `{name}` has shape {shape}, expected {want}",
                           where=member)
            arr = np.empty(shape, dtype)
            if arr.size:
                _read_exact(path, f, arr.nbytes, memoryview(arr.reshape(-1).view(np.uint8)), member)
            elif f.read(1):
                raise _bad(path, f"`{member}` is longer than it declares", where=member)
    except TraceError:
        raise
    except READ_ERRORS as err:
        raise _corrupt(path, f"the trace's array `{name}`", err, where=member) from None
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


@contextmanager
def _archive(path: Path):
    """(zip archive, its members by name, the checked header) of a trace file, open while
    the ``with`` block runs."""
    f, size = _open_regular(path)
    with f:
        try:
            _check_directory(path, f, size)
            z = zipfile.ZipFile(f)
        except TraceError:
            raise
        except READ_ERRORS:
            raise _bad(path, "not a warpviz trace, or a corrupt or truncated one (it is not a readable zip "
                       "archive)") from None
        with z:
            members = _members(path, z)
            if HEADER_MEMBER not in members:
                raise _bad(path, "not a warpviz trace: the archive has no header.json")
            header = parse_header(path, _read_member(path, z, members[HEADER_MEMBER]))
            yield z, members, header


def read_header(path: str | Path) -> dict:
    """Only the checked header of a trace file (the arrays are not read): what the library
    lists. TraceError as for ``load``."""
    with _archive(Path(path)) as (_z, _members_, header):
        return header


def load(path: str | Path, progress: Callable[[float, str], None] | None = None,
         cancelled: Callable[[], bool] | None = None) -> Trace:
    """Read a .wvtrace, checking everything before use (see the module docstring); TraceError
    (one paragraph naming the file, the member or field, and the fix) for a missing,
    unreadable, oversized, corrupt, truncated, inconsistent or newer file. ``progress``
    (fraction, stage) hears of each array read and each checked chunk; ``cancelled`` is asked
    between them, and ``viz.engine.Cancelled`` ends the load when it says yes (the app's
    Open of a large trace runs off the GUI thread and can be cancelled)."""
    path = Path(path)
    report = progress or (lambda fraction, text: None)
    stop = cancelled or (lambda: False)
    with _archive(path) as (z, members, header):
        arrays: dict[str, np.ndarray] = {}
        n = None
        for k, name in enumerate(ARRAYS):
            if stop():
                raise Cancelled()
            report(0.5 * k / len(ARRAYS), "read")
            info = members.get(f"{name}.npy")
            if info is None:
                if name in OPTIONAL:
                    arrays[name] = np.zeros(n or 0, np.uint8)
                    continue
                raise _bad(path, f"the trace is incomplete: the array `{name}` is missing")
            arrays[name] = _read_array(path, z, info, name, n)
            n = arrays[name].shape[0]
        info = members.get(f"{PAYLOAD}.npy")
        payload = _read_array(path, z, info, PAYLOAD, None) if info is not None else None
    records = header.get("records")
    if records is not None and records != n:
        raise _bad(path, f"the trace is inconsistent: the header's `records` is {records:,}, but the arrays hold "
                   f"{n:,} records", where="header.json: records")
    trace = Trace(header, arrays["instr"], arrays["block"], arrays["warp"], arrays["active"], arrays["pred"],
                  arrays["shared"], arrays["global"], arrays["base"], arrays["offset"], arrays["flags"], path, payload)
    check_arrays(trace, path, lambda f: report(0.5 + 0.5 * f, "check"), stop)
    return trace


def check(trace: Trace, path: str | Path | None = None) -> Trace:
    """Check a trace made in memory (``from_records``: the recorder's rows) as ``load``
    checks a file: the header against the schema (defaults filled in), the arrays' dtypes,
    shapes and values. Returns the trace; TraceError otherwise."""
    where = path if path is not None else (trace.path or "<trace>")
    trace.header = check_header(where, {"format": MAGIC, "version": VERSION, **trace.header})
    n = trace.instr.shape[0] if trace.instr.ndim == 1 else -1
    for name in ARRAYS:
        a = getattr(trace, "global_" if name == "global" else name)
        want = (n, 32) if name == "offset" else (n,)
        if a.shape != want or (a.dtype.kind, a.dtype.itemsize) not in DTYPES[name]:
            raise _bad(where, f"the trace is inconsistent: array `{name}` is {a.dtype.name} {a.shape}, expected "
                       f"{' or '.join(np.dtype(f'{k}{b}').name for k, b in DTYPES[name])} {want}")
    if n > MAX_RECORDS:
        raise _bad(where, f"the trace has {n:,} records, more than the {MAX_RECORDS:,} warpviz analyses",
                   "record fewer blocks (`warpviz trace --blocks 0-15`)")
    check_arrays(trace, where)
    return trace


def _check_payload_rows(trace: Trace, lo: int, hi: int, tma_kind: np.ndarray) -> tuple[str, str] | None:
    """The payload records (flags 2) of rows lo..hi are of instructions whose form has payload
    records (``TraceForm.payload``: TMA and bulk copies) and those instructions have no other
    records; a payload record's `shared` mask is its issuing lane (one lane whose predicate
    held, or none) and its `global` mask is empty."""
    flags = trace.flags[lo:hi]
    is_tma = tma_kind[trace.instr[lo:hi]]
    wrong = (flags == PAYLOAD_FLAG) != is_tma
    if bool(wrong.any()):
        r = lo + int(np.flatnonzero(wrong)[0])
        return (f"record {r:,} has flags {int(trace.flags[r])} but its instruction is a "
                f"{trace.instructions[int(trace.instr[r])]['kind']}; TMA and bulk copies have flags 2, no other", "flags")
    t = flags == PAYLOAD_FLAG
    sh, pred, gl = trace.shared[lo:hi], trace.pred[lo:hi], trace.global_[lo:hi]
    bad = t & (((sh & (sh - np.uint32(1))) != 0) | ((sh & ~pred) != 0) | (gl != 0))
    if bool(bad.any()):
        r = lo + int(np.flatnonzero(bad)[0])
        return (f"record {r:,} is a TMA record whose issuing lane is not one lane whose predicate held", "shared")
    return None


def lane_bits(m: np.ndarray) -> np.ndarray:
    """(n,) lane masks -> (n, 32) bool, lane k = bit k."""
    m = np.ascontiguousarray(m, dtype="<u4")
    return np.unpackbits(m.view(np.uint8).reshape(-1, 4), axis=1, bitorder="little").view(bool)


def check_arrays(trace: Trace, path, progress: Callable[[float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> None:
    """Every array value against the header and the recorder's rules, ``CHECK_ROWS`` rows at a
    time: instruction ids listed in the header; blocks inside the grid; warps inside the
    block; flags 0 or 1; records in block, then warp order; pred, shared and global lanes
    among the active ones, none both shared and global, no active lane beyond the block's
    threads; base and offsets below MAX_ADDRESS, each record's smallest active offset 0 and
    inactive lanes' 0; every global lane's address a multiple of its access width."""
    n = trace.records
    if not n:
        return
    ninstr = len(trace.instructions)
    nb, tpb, nw = trace.blocks, trace.threads_per_block, trace.warps_per_block

    def bad(problem: str, array: str) -> TraceError:
        return _bad(path, f"the trace is inconsistent: {problem}", where=f"{array}.npy")

    def first(mask: np.ndarray, lo: int) -> int:
        return lo + int(np.flatnonzero(mask)[0])

    from . import lanecheck     # numba: only where arrays are checked (not for a header alone)

    width = np.asarray([ins["width"] for ins in trace.instructions] or [1], np.int64)
    payload_kinds = set(registry.payload_kinds())
    tma_kind = np.asarray([ins["kind"] in payload_kinds for ins in trace.instructions] or [False], bool)
    m = int((trace.flags == PAYLOAD_FLAG).sum())
    if trace.payload.ndim != 2 or trace.payload.shape[0] != m or trace.payload.shape[1] != 32:
        raise bad(f"{m:,} records are TMA records (flags 2) but the array `payload` has shape "
                  f"{trace.payload.shape}, expected ({m}, 32)", PAYLOAD)
    tail = tpb - (nw - 1) * 32                       # lanes of the block's last warp
    tail_mask = np.uint32(0xFFFFFFFF if tail >= 32 else (1 << tail) - 1)
    prev_key = -1
    for lo in range(0, n, CHECK_ROWS):
        if cancelled is not None and cancelled():
            raise Cancelled()
        if progress is not None:
            progress(lo / n)
        hi = min(n, lo + CHECK_ROWS)
        instr, block, warp = trace.instr[lo:hi], trace.block[lo:hi], trace.warp[lo:hi]
        if int(instr.max()) >= ninstr:
            r = first(instr >= ninstr, lo)
            listed = f"lists {ninstr} (ids 0 to {ninstr - 1})" if ninstr else "lists none"
            raise bad(f"record {r:,} names static instruction {int(trace.instr[r])}, but the header {listed}",
                      "instr")
        if int(block.max()) >= nb:
            r = first(block >= nb, lo)
            raise bad(f"record {r:,} is of block {int(trace.block[r]):,}, outside the grid's {nb:,} blocks", "block")
        if int(warp.max()) >= nw:
            r = first(warp >= nw, lo)
            raise bad(f"record {r:,} is of warp {int(trace.warp[r])}, but a block of {tpb} threads has {nw} warps",
                      "warp")
        flags = trace.flags[lo:hi]
        if int(flags.max()) > PAYLOAD_FLAG:
            r = first(flags > PAYLOAD_FLAG, lo)
            raise bad(f"record {r:,} has flags {int(trace.flags[r])}; flags are 0, 1 or 2", "flags")
        problem = _check_payload_rows(trace, lo, hi, tma_kind)
        if problem:
            raise bad(*problem)
        key = block.astype(np.int64) * nw + warp.astype(np.int64)
        if key[0] < prev_key or (key.size > 1 and bool((key[1:] < key[:-1]).any())):
            r = lo if key[0] < prev_key else first(key[1:] < key[:-1], lo + 1)
            raise bad(f"record {r:,} is out of order: records are sorted by block, then warp", "block")
        prev_key = int(key[-1])
        active = trace.active[lo:hi]
        for name, m in (("pred", trace.pred[lo:hi]), ("shared", trace.shared[lo:hi]),
                        ("global", trace.global_[lo:hi])):
            if bool((m & ~active).any()):
                r = first((m & ~active) != 0, lo)
                raise bad(f"record {r:,} has `{name}` lanes that are not active", name)
        both = trace.shared[lo:hi] & trace.global_[lo:hi]
        if bool(both.any()):
            raise bad(f"record {first(both != 0, lo):,} has lanes in both shared and global memory", "shared")
        partial = (warp == nw - 1) & ((active & ~tail_mask) != 0)
        if bool(partial.any()):
            raise bad(f"record {first(partial, lo):,} has active lanes beyond the block's {tpb} threads", "active")
        base = trace.base[lo:hi]
        if int(base.max()) > MAX_ADDRESS:
            raise bad(f"record {first(base > MAX_ADDRESS, lo):,} has a base address above 2**57", "base")
        r, problem = lanecheck.first_bad_record(active, trace.pred[lo:hi], trace.shared[lo:hi],
                                                trace.global_[lo:hi], flags, base.view(np.int64),
                                                trace.offset[lo:hi], width[instr], MAX_ADDRESS)
        if r >= 0:
            r += lo
            raise bad(f"record {r:,}: " + {
                lanecheck.INACTIVE_OFFSET: "a lane that is not active has an offset other than 0",
                lanecheck.OFFSET_RANGE: "a lane offset is negative or above 2**57",
                lanecheck.NOT_SMALLEST: "the base address is not the smallest active lane's address (its offset "
                                        "is not 0), or a record with no active lane has a base",
                lanecheck.MISALIGNED: "a global lane's address is not a multiple of its instruction's access "
                                      f"width ({int(width[trace.instr[r]])} bytes)"}[problem],
                      "offset" if problem != lanecheck.NOT_SMALLEST else "base")


__all__ = ["Trace", "save", "load", "read_header", "check", "check_header", "check_arrays", "parse_header", "from_records",
           "VERSION", "MAGIC", "MAX_FILE_BYTES", "MAX_HEADER_BYTES", "MAX_RECORDS", "MAX_ADDRESS"]


def shipped_dir() -> Path:
    """assets/traces: traces of the kernels/ launch files recorded on an H100."""
    from .. import assets

    return assets.root() / "traces"


def shipped() -> list[Path]:
    return sorted(shipped_dir().glob("*.wvtrace"))
