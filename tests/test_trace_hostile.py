"""Trace files are hostile input (docs/trace-format.md, "What `load` checks").

Explicit regressions for what a review sent at ``viz.trace.tracefile.load``: an array that
declares 10^12 elements, a zip member that inflates to 2 GiB (and one whose header lies
about its size), corrupt deflate data, deep JSON, every header field the code reads
missing or mistyped, NaN / strings / negative / out-of-range array values, a pickled
array, non-regular files, a 2^27-block grid. Then hypothesis fuzzing of the shipped traces
(bit flips, truncations, header-field and array mutations, lying zip sizes): ``load``
either refuses with a TraceError or returns a trace that the analysis, the picture and the
cost model take without any other exception, and nothing large is allocated.

The fuzz tests are derandomized (the same examples every run: the suite never flakes);
``WARPVIZ_FUZZ_EXAMPLES=5000 ./run-tests tests/test_trace_hostile.py`` explores more.
"""

from __future__ import annotations

import atexit
import copy
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from viz.cli import main
from viz.frames import Cursor
from viz.trace import TraceError, schema, tracefile
from viz.trace.analysis import HEAT_MAP_WARPS, analyze_trace, heat_map_blocks, source_lines, to_json, to_table
from viz.trace.detail import TraceSource, TraceTimeline

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
# small shipped traces that between them have every kind of record: cp.async + events +
# ldmatrix, generic + atomics + skip records, stmatrix, a partial-warp guard, shuffles
SEEDS = ["ldmatrix_cpasync", "cpasync_double", "generic_atomic", "stmatrix_frag", "copy_guarded", "reduce_shfl"]
EXAMPLES = int(os.environ.get("WARPVIZ_FUZZ_EXAMPLES", "40"))
# the same examples every run unless more are asked for (then new ones each run)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="WARPVIZ_FUZZ_EXAMPLES" not in os.environ,
                database=None, suppress_health_check=list(HealthCheck))
PEAK = 128 << 20        # what loading and analysing one of these small files may allocate at most


# ---------------------------------------------------------------------------- building hostile files


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def write_zip(path: Path, parts: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, blob in parts.items():
            z.writestr(name, blob)
    return path


def npy(arr: np.ndarray, allow_pickle: bool = False) -> bytes:
    bio = io.BytesIO()
    np.lib.format.write_array(bio, arr, allow_pickle=allow_pickle)
    return bio.getvalue()


def npy_header(descr: str, shape: tuple) -> bytes:
    """A version 1.0 .npy header alone (what a lying array starts with)."""
    d = repr({"descr": descr, "fortran_order": False, "shape": shape})
    pad = 64 - (10 + len(d) + 1) % 64
    text = (d + " " * pad + "\n").encode("latin1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def seed(name: str) -> Path:
    return TRACES / f"{name}.wvtrace"


def mutated(tmp: Path, name: str, header=None, arrays: dict | None = None, drop=()) -> Path:
    """A copy of shipped trace ``name`` with a new header (a dict, or bytes as they are),
    some arrays replaced (name -> ndarray, or bytes as they are) or members dropped."""
    parts = members(seed(name))
    if header is not None:
        parts["header.json"] = header if isinstance(header, bytes) else json.dumps(header).encode()
    for k, v in (arrays or {}).items():
        parts[f"{k}.npy"] = v if isinstance(v, bytes) else npy(v)
    for k in drop:
        parts.pop(k, None)
    return write_zip(tmp / f"{name}-mutated.wvtrace", parts)


def raw_zip(entries) -> bytes:
    """A zip archive written by hand: (name, method, crc, compressed size, size, data) per
    entry, the sizes as given (a lying header says what it likes)."""
    out, cd = bytearray(), bytearray()
    for name, method, crc, csize, usize, data in entries:
        off, nb = len(out), name.encode()
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, csize, usize, len(nb), 0)
        out += nb + data
        cd += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, csize, usize, len(nb),
                          0, 0, 0, 0, 0, off) + nb
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(cd), len(out), 0)
    return bytes(out + cd + eocd)


def deflated_zeros(head: bytes, mib: int) -> bytes:
    """Raw deflate data of ``head`` followed by ``mib`` MiB of zero bytes (about 1 KB per MiB)."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = co.compress(head) + co.flush(zlib.Z_FULL_FLUSH)
    zeros = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = zeros.compress(bytes(1 << 20)) + zeros.flush(zlib.Z_FULL_FLUSH)
    return first + block * mib + b"\x03\x00"


def entries_of(path: Path, replace: dict | None = None) -> list:
    """The (name, method, crc, csize, size, data) entries of a trace, deflated, with some
    replaced by hand-made ones."""
    out = []
    for name, blob in members(path).items():
        if replace and name in replace:
            out.append(replace[name])
            continue
        co = zlib.compressobj(6, zlib.DEFLATED, -15)
        data = co.compress(blob) + co.flush()
        out.append((name, 8, zlib.crc32(blob), len(data), len(blob), data))
    return out


# ---------------------------------------------------------------------------- using a file as the app would


def use(path: Path) -> str:
    """Load ``path``; a trace that loads is analysed, reported, drawn (the first warps'
    pictures) and modelled. Returns "refused" or "loaded"; any exception other than a
    TraceError from ``load`` fails the test."""
    try:
        trace = tracefile.load(path)
    except TraceError as err:
        text = str(err)
        assert text.startswith(str(path)) and "Fix:" in text and "\n" not in text, text
        return "refused"
    an = analyze_trace(trace)
    json.dumps(to_json(an))
    to_table(an)
    source_lines(an)
    pw = an.per_warp()
    assert pw.size <= HEAT_MAP_WARPS and pw.shape[1] == trace.warps_per_block
    if trace.instructions:
        an.per_warp(0)
    src = TraceSource(trace)
    tl = TraceTimeline(src)
    for b in src.recorded_blocks[:2]:
        for w in range(min(src.warps, 2)):
            c = tl.clamp(Cursor(0, b, w))
            tl.frames(c)
            tl.step(c, "frame", 1)
    if trace.records <= 2000:
        from viz.gpu import tracemodel

        tracemodel.workload(trace, an)
    return "loaded"


def use_bounded(path: Path) -> str:
    """``use`` with what it allocates traced: at most PEAK bytes at any time."""
    tracemalloc.start()
    try:
        got = use(path)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK, f"{path.name}: {peak:,} bytes allocated"
    return got


def refused(path: Path, *words: str) -> str:
    with pytest.raises(TraceError) as err:
        tracefile.load(path)
    text = str(err.value)
    for w in words:
        assert w in text, text
    return text


# ---------------------------------------------------------------------------- the file itself


def test_every_shipped_trace_passes_every_check():
    for p in tracefile.shipped():
        t = tracefile.load(p)
        assert t.records == t.header["records"] and len(t.block_dim) == len(t.grid_dim) == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "pipe.wvtrace"
    os.mkfifo(fifo)
    refused(fifo, "named pipe (FIFO)", "Fix:")
    assert main(["analyze", str(fifo)]) == 2
    assert "pipe.wvtrace" in capsys.readouterr().err


def test_a_folder_and_a_device_are_refused(tmp_path, capsys):
    folder = tmp_path / "folder.wvtrace"
    folder.mkdir()
    refused(folder, "a folder")
    if Path("/dev/zero").exists():
        refused(Path("/dev/zero"), "a device")
        link = tmp_path / "zero.wvtrace"
        link.symlink_to("/dev/zero")
        assert main(["analyze", str(link)]) == 2
        assert "a device" in capsys.readouterr().err


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.wvtrace"
    with open(big, "wb") as f:
        f.truncate(tracefile.MAX_FILE_BYTES + 1)           # sparse: nothing is written
    refused(big, f"{tracefile.MAX_FILE_BYTES + 1:,} bytes", "--blocks")


def test_a_zip_directory_with_too_many_entries_is_refused_before_zipfile_reads_it(tmp_path):
    blob = raw_zip([(f"x{k}", 0, 0, 0, 0, b"") for k in range(tracefile.MAX_MEMBERS + 1)])
    p = tmp_path / "many.wvtrace"
    p.write_bytes(blob)
    refused(p, f"{tracefile.MAX_MEMBERS + 1:,} entries")


# ---------------------------------------------------------------------------- sizes: arrays and zip members


def test_an_array_declaring_10_to_the_12_elements_is_refused_without_allocating(tmp_path, capsys):
    p = mutated(tmp_path, "copy_guarded", arrays={"instr": npy_header("<u4", (10**12,)) + bytes(64)})
    assert p.stat().st_size < 16_000
    tracemalloc.start()
    try:
        text = refused(p, "1,000,000,000,000 records", f"{tracefile.MAX_RECORDS:,}", "instr.npy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    assert main(["analyze", str(p)]) == 2 and capsys.readouterr().err.strip() == f"warpviz: {text}"


def test_an_array_whose_npy_header_and_zip_size_disagree_is_refused(tmp_path):
    t = tracefile.load(seed("copy_guarded"))
    lying = npy_header("<u4", (t.records * 4,)) + t.instr.tobytes()      # declares 4x the data it has
    refused(mutated(tmp_path, "copy_guarded", arrays={"instr": lying}), "inconsistent", "instr.npy")


ZIP_BOMB = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))     # 1 GiB of address space in all
from viz.trace import TraceError, tracefile
from viz.trace.analysis import analyze_trace
try:
    analyze_trace(tracefile.load(sys.argv[1]))
    print("loaded")
except TraceError as err:
    print("refused:", err)
"""


def _run_bounded(path: Path) -> str:
    """Load (and analyse) ``path`` in a child process limited to 1 GiB of address space."""
    r = subprocess.run([sys.executable, "-c", ZIP_BOMB, str(path)], capture_output=True, text=True, timeout=300,
                       cwd=ROOT)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    return r.stdout.strip()


@pytest.mark.skipif(sys.platform == "win32", reason="resource limits")
def test_a_2_gib_zip_bomb_is_refused_by_its_declared_size(tmp_path):
    head = npy_header("<u4", ((2 << 30) // 4,))
    data = deflated_zeros(head, 2048)
    size = len(head) + (2 << 30)
    bomb = ("instr.npy", 8, zlib.crc32(head), len(data), size, data)     # (the CRC is never reached)
    p = tmp_path / "bomb.wvtrace"
    p.write_bytes(raw_zip(entries_of(seed("copy_guarded"), {"instr.npy": bomb})))
    assert p.stat().st_size < 3 << 20
    refused(p, "instr.npy", "declares 2.00 GiB (2,147,483,776 bytes)")
    assert _run_bounded(p).startswith("refused:")


@pytest.mark.skipif(sys.platform == "win32", reason="resource limits")
def test_a_member_that_inflates_past_its_declared_size_is_read_only_as_far_as_declared(tmp_path):
    """The zip header says the size of the real array; the deflate data goes on to 2 GiB:
    only the declared bytes are ever inflated (and they are a valid array)."""
    t = tracefile.load(seed("copy_guarded"))
    head = npy_header("<u4", (t.records,))
    declared = head + bytes(4 * t.records)
    data = deflated_zeros(head, 2048)
    lying = ("instr.npy", 8, zlib.crc32(declared), len(data), len(declared), data)
    p = tmp_path / "lying.wvtrace"
    p.write_bytes(raw_zip(entries_of(seed("copy_guarded"), {"instr.npy": lying})))
    assert use_bounded(p) == "loaded"              # instruction 0 for every record: a valid trace
    assert _run_bounded(p) == "loaded"


def test_corrupt_deflate_data_is_a_trace_error(tmp_path):
    blob = members(seed("copy_guarded"))["offset.npy"]
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    data = bytearray(co.compress(blob) + co.flush())
    data[: len(data) // 2] = bytes([0xFF]) * (len(data) // 2)       # "invalid block type"
    with pytest.raises(zlib.error):
        zlib.decompress(bytes(data), -15)
    bad = ("offset.npy", 8, zlib.crc32(blob), len(data), len(blob), bytes(data))
    p = tmp_path / "deflate.wvtrace"
    p.write_bytes(raw_zip(entries_of(seed("copy_guarded"), {"offset.npy": bad})))
    refused(p, "`offset` is corrupt or truncated", "offset.npy")


def test_an_encrypted_or_oddly_compressed_member_is_refused(tmp_path):
    blob = members(seed("copy_guarded"))["header.json"]
    lzma = ("header.json", 14, zlib.crc32(blob), len(blob), len(blob), blob)
    p = tmp_path / "lzma.wvtrace"
    p.write_bytes(raw_zip(entries_of(seed("copy_guarded"), {"header.json": lzma})))
    refused(p, "zip method 14")


def test_a_pickled_array_is_never_unpickled(tmp_path):
    marker = tmp_path / "unpickled"

    class Planted:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    p = mutated(tmp_path, "copy_guarded", arrays={"block": npy(np.array([Planted()], object), allow_pickle=True)})
    refused(p, "`block` has dtype |O", "uint32")
    assert not marker.exists()


# ---------------------------------------------------------------------------- the header


def test_deep_json_is_a_trace_error(tmp_path):
    deep = b'{"format": "warpviz-trace", "version": 1, "x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    refused(mutated(tmp_path, "copy_guarded", header=deep), "nests", "header.json")
    h = json.loads(members(seed("copy_guarded"))["header.json"])
    nested: object = 1
    for _ in range(schema.MAX_DEPTH + 1):
        nested = [nested]
    h["notes_extra"] = nested
    refused(mutated(tmp_path, "copy_guarded", header=h), f"more than {schema.MAX_DEPTH} lists or tables deep")


@pytest.mark.parametrize("blob, words", [
    (b"\xff\xfe{}", "not UTF-8"),
    (b'{"format": "warpviz-trace", "version": 1, "x": NaN}', "NaN is not a JSON number"),
    (b'{"format": "warpviz-trace", "version": 1, "x": 1e999}', "out of range"),
    (b'{"format": "warpviz-trace", "version": 1, "x": ' + b"9" * 5000 + b"}", "corrupt"),
    (b'["warpviz-trace"]', "not a warpviz trace"),
    (b'{"format": "warpviz-trace", "version": true}', "no format version"),
])
def test_a_header_that_is_not_json_of_a_trace_is_refused(tmp_path, blob, words):
    refused(mutated(tmp_path, "copy_guarded", header=blob), words)


def _set(h: dict, path: tuple, value) -> dict:
    h = copy.deepcopy(h)
    d = h
    for k in path[:-1]:
        d = d[k]
    if value is _DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    return h


_DELETE = object()

# (field, value) -> the field the message names. Every field the code reads, missing or mistyped.
BAD_FIELDS = [
    (("launch",), _DELETE, "launch"),
    (("launch",), [32], "launch"),
    (("launch", "grid"), _DELETE, "launch.grid"),
    (("launch", "grid"), "big", "launch.grid"),
    (("launch", "grid"), [0], "launch.grid[0]"),
    (("launch", "grid"), [2**31], "launch.grid[0]"),
    (("launch", "grid"), [1, 65536], "launch.grid[1]"),
    (("launch", "grid"), [1, 1, 1, 1], "launch.grid"),
    (("launch", "block"), _DELETE, "launch.block"),
    (("launch", "block"), [2048], "launch.block[0]"),
    (("launch", "block"), [32, 32, 2], "launch.block"),
    (("launch", "block"), [32.0], "launch.block[0]"),
    (("launch", "shared_bytes"), -1, "launch.shared_bytes"),
    (("launch", "args"), {"type": "float*"}, "launch.args"),
    (("launch", "args", 0, "count"), "1024", "launch.args[0].count"),
    (("instructions",), _DELETE, "instructions"),
    (("instructions",), {}, "instructions"),
    (("instructions", 0), "ld.global", "instructions[0]"),
    (("instructions", 0, "id"), 5, "instructions[0].id"),
    (("instructions", 0, "op"), _DELETE, "instructions[0].op"),
    (("instructions", 0, "op"), 7, "instructions[0].op"),
    (("instructions", 0, "op"), "fetch", "instructions[0].op"),
    (("instructions", 0, "kind"), None, "instructions[0].kind"),
    (("instructions", 0, "space"), "local", "instructions[0].space"),
    (("instructions", 0, "width"), "16", "instructions[0].width"),
    (("instructions", 0, "width"), 3, "instructions[0].width"),
    (("instructions", 0, "width"), 10**6, "instructions[0].width"),
    (("instructions", 0, "opcode"), 3, "instructions[0].opcode"),
    (("instructions", 0, "ptx"), ["ld"], "instructions[0].ptx"),
    (("instructions", 0, "line"), "12", "instructions[0].line"),
    (("instructions", 0, "line"), -1, "instructions[0].line"),
    (("instructions", 0, "file"), {"a": 1}, "instructions[0].file"),
    (("instructions", 0, "sass_predicated"), "yes", "instructions[0].sass_predicated"),
    (("gpu",), "NVIDIA H100", "gpu"),
    (("gpu", "name"), ["H100"], "gpu['name']"),
    (("sources",), ["k.cu"], "sources"),
    (("sources", "copy.cu"), 5, "sources['copy.cu']"),
    (("title",), 5, "title"),
    (("kernel",), None, "kernel"),
    (("complete",), "yes", "complete"),
    (("recorded_blocks",), 3, "recorded_blocks"),
    (("ncu",), [1, 2], "ncu"),
    (("ncu", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), "4", "ncu["),
    (("sass_guard",), "none", "sass_guard"),
    (("sass_guard", "sass"), "LDG", "sass_guard.sass"),
    (("skip_regions",), [{"instructions": [999]}], "skip_regions[0].instructions[0]"),
    (("events",), [{"executed": "x"}], "events[0].executed"),
    (("records",), 12, "records"),
    (("version",), 0, "version"),
    (("title",), "x" * (schema.SHORT + 1), "title"),
]


@pytest.mark.parametrize("path, value, where", BAD_FIELDS, ids=[".".join(map(str, f[0])) + f"={str(f[1])[:12]}"
                                                                 for f in BAD_FIELDS])
def test_a_missing_or_mistyped_header_field_is_named(tmp_path, capsys, path, value, where):
    h = json.loads(members(seed("copy_guarded"))["header.json"])
    p = mutated(tmp_path, "copy_guarded", header=_set(h, path, value))
    text = refused(p, f"`{where}", "Fix:")
    assert main(["analyze", str(p)]) == 2
    assert capsys.readouterr().err.strip() == f"warpviz: {text}"


def test_optional_fields_may_be_missing_and_take_their_defaults(tmp_path):
    """A header without the GPU, the sources or an instruction's text, file and line (a
    trace of an older or a foreign writer) opens: the missing fields take their defaults."""
    base = tracefile.load(seed("reduce_shfl"))
    h = json.loads(members(seed("reduce_shfl"))["header.json"])
    for k in ("gpu", "sources", "sass_guard", "ncu", "ncu_other", "title", "complete", "records"):
        h.pop(k, None)
    for ins in h["instructions"]:
        for k in ("ptx", "opcode", "function", "file", "line", "line_no", "predicate", "address", "operand",
                  "sass_predicated"):
            del ins[k]
    t = tracefile.load(mutated(tmp_path, "reduce_shfl", header=h))
    assert t.instructions[0]["ptx"] == "" and t.instructions[0]["line"] == 0
    assert t.instructions[0]["sass_predicated"] is None
    assert analyze_trace(t).metrics == analyze_trace(base).metrics
    assert "(no line information)" in to_table(analyze_trace(t))
    assert use_bounded(mutated(tmp_path, "reduce_shfl", header=h)) == "loaded"


# ---------------------------------------------------------------------------- array values


def _arrays(name: str) -> dict[str, np.ndarray]:
    t = tracefile.load(seed(name))
    return {n: getattr(t, "global_" if n == "global" else n).copy() for n in tracefile.ARRAYS}


def _bad_values():
    """(name, seed, edit of its arrays, words of the message)."""
    def nan_base(a):
        a["base"] = a["base"].astype(np.float64)
        a["base"][0] = np.nan

    def string_block(a):
        a["block"] = a["block"].astype("<U4")

    def negative_block(a):
        a["block"] = a["block"].astype(np.int32)
        a["block"][-1] = -1

    def negative_offset(a):
        k = np.flatnonzero(a["active"] & 2)[0]
        a["offset"][k, 1] = -4

    def set_(arr, value, row=-1):
        def edit(a):
            a[arr][row] = value
        return edit

    def unsorted(a):
        for n in ("block", "warp"):
            a[n] = a[n][::-1].copy()

    def pred_outside_active(a):
        a["active"][0] = 1
        a["pred"][0] = 3
        a["shared"][0] = a["global"][0] = 0

    def misaligned(a):
        k = np.flatnonzero(a["pred"] & a["global"] == 0xFFFFFFFF)[0]
        a["offset"][k, int(np.argmax(a["offset"][k]))] += 2       # not the smallest lane: the base stays

    def base_not_smallest(a):
        k = np.flatnonzero(a["active"] == 0xFFFFFFFF)[0]
        a["offset"][k] += 4

    def inactive_offset(a):
        k = np.flatnonzero(a["active"] != 0xFFFFFFFF)[0]
        lane = int(np.flatnonzero([not (int(a["active"][k]) >> j) & 1 for j in range(32)])[0])
        a["offset"][k, lane] = 8

    def short(a):
        a["warp"] = a["warp"][:-1]

    def fortran(a):
        a["offset"] = np.asfortranarray(a["offset"])

    return [
        ("nan base", "copy_guarded", nan_base, "`base` has dtype <f8; it must be uint64"),
        ("string block", "copy_guarded", string_block, "`block` has dtype <U4; it must be uint32"),
        ("negative block", "copy_guarded", negative_block, "`block` has dtype <i4; it must be uint32"),
        ("negative offset", "copy_guarded", negative_offset, "a lane offset is negative or above 2**57"),
        ("block outside the grid", "copy_guarded", set_("block", 16), "block 16, outside the grid's 16 blocks"),
        ("warp outside the block", "copy_guarded", set_("warp", 2), "warp 2, but a block of 64 threads has 2 warps"),
        ("unknown instruction", "copy_guarded", set_("instr", 32), "names static instruction 32, but the header "
                                                                   "lists 32"),
        ("flags 2", "generic_atomic", set_("flags", 2), "flags 2"),
        ("out of order", "copy_guarded", unsorted, "out of order"),
        ("pred outside active", "copy_guarded", pred_outside_active, "`pred` lanes that are not active"),
        ("misaligned global", "copy_guarded", misaligned, "not a multiple of its instruction's access width"),
        ("base not smallest", "copy_guarded", base_not_smallest, "base address is not the smallest"),
        ("inactive offset", "copy_guarded", inactive_offset, "a lane that is not active has an offset other than 0"),
        ("base above 2**57", "copy_guarded", set_("base", np.uint64(2**63)), "base address above 2**57"),
        ("one row short", "copy_guarded", short, "array `warp` has shape"),
        ("fortran order", "copy_guarded", fortran, "Fortran order"),
    ]


@pytest.mark.parametrize("what, name, edit, words", _bad_values(), ids=[v[0] for v in _bad_values()])
def test_wrong_array_values_are_refused(tmp_path, capsys, what, name, edit, words):
    a = _arrays(name)
    edit(a)
    p = mutated(tmp_path, name, arrays=a)
    text = refused(p, words, "Fix:")
    assert main(["analyze", str(p)]) == 2 and capsys.readouterr().err.strip() == f"warpviz: {text}"


def test_active_lanes_beyond_the_blocks_threads_are_refused(tmp_path):
    """reduce_shfl's blocks have 256 threads (8 full warps); a header that says 250 leaves
    6 lanes of warp 7 that do not exist, and its records have them active."""
    h = json.loads(members(seed("reduce_shfl"))["header.json"])
    h["launch"]["block"] = [250, 1, 1]
    refused(mutated(tmp_path, "reduce_shfl", header=h), "active lanes beyond the block's 250 threads")
    h["launch"]["block"] = [256, 1, 1]
    assert use(mutated(tmp_path, "reduce_shfl", header=h)) == "loaded"


def test_a_missing_array_and_a_missing_header_are_named(tmp_path):
    refused(mutated(tmp_path, "copy_guarded", drop=["warp.npy"]), "`warp` is missing")
    refused(mutated(tmp_path, "copy_guarded", drop=["header.json"]), "no header.json")
    t = tracefile.load(mutated(tmp_path, "copy_guarded", drop=["flags.npy"]))    # optional: all zero
    assert t.flags.dtype == np.uint8 and not t.flags.any() and t.flags.shape == t.instr.shape


# ---------------------------------------------------------------------------- huge grids


@pytest.mark.parametrize("grid", [[2**27], [2**31 - 1, 65535, 65535]])
def test_a_huge_grid_with_few_recorded_blocks_allocates_only_for_what_was_recorded(tmp_path, grid):
    h = json.loads(members(seed("copy_guarded"))["header.json"])
    h["launch"]["grid"] = grid
    p = mutated(tmp_path, "copy_guarded", header=h)
    tracemalloc.start()
    try:
        t = tracefile.load(p)
        an = analyze_trace(t)
        pw = an.per_warp()
        doc = to_json(an)
        src = TraceSource(t)
        from viz.gpu import tracemodel

        tracemodel.workload(t, an)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    blocks = int(np.prod(np.array(grid, dtype=object)))
    assert t.blocks == src.blocks == blocks and doc["launch"]["warps"] == blocks * 2
    assert pw.shape == (heat_map_blocks(blocks, 2), 2) == (HEAT_MAP_WARPS // 2, 2)
    # the recorded blocks' figures are all there: the heat map covers them
    assert pw.sum() == sum(s.sectors + s.wavefronts for s in an.stats)
    assert use(p) == "loaded"


# ---------------------------------------------------------------------------- the command line


def test_every_command_that_reads_a_trace_exits_2_with_the_paragraph(qapp, tmp_path, capsys):
    h = json.loads(members(seed("copy_guarded"))["header.json"])
    bad = mutated(tmp_path, "copy_guarded", header=_set(h, ("instructions", 0, "width"), "16"))
    for argv in (["analyze", str(bad)], ["analyze", str(bad), "--json"], [str(bad)], ["gui", str(bad)],
                 ["export", str(bad), "--out", str(tmp_path / "x.png")],
                 ["bench", "--traces", "--dry-run", str(bad)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"warpviz: {bad}") and "instructions[0].width" in err, (argv, err)
        assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------------------- fuzzing


_DIR = Path(tempfile.mkdtemp(prefix="warpviz-fuzz-"))
atexit.register(shutil.rmtree, _DIR, True)
_SEED_BYTES = {n: seed(n).read_bytes() for n in SEEDS}


def _file(blob: bytes) -> Path:
    p = _DIR / "fuzz.wvtrace"
    p.write_bytes(blob)
    return p


@FUZZ
@given(name=st.sampled_from(SEEDS), data=st.data())
def test_fuzz_bit_flips(name, data):
    blob = bytearray(_SEED_BYTES[name])
    for _ in range(data.draw(st.integers(1, 8))):
        k = data.draw(st.integers(0, len(blob) - 1))
        blob[k] ^= 1 << data.draw(st.integers(0, 7))
    use_bounded(_file(bytes(blob)))


@FUZZ
@given(name=st.sampled_from(SEEDS), data=st.data())
def test_fuzz_bit_flips_inside_members(name, data):
    """Bit flips in a member's own bytes (the header's JSON text, an array's .npy header or
    data), zipped again with a correct CRC: what gets past the zip layer."""
    parts = members(seed(name))
    for _ in range(data.draw(st.integers(1, 6))):
        member = data.draw(st.sampled_from(sorted(parts)))
        blob = bytearray(parts[member])
        if not blob:
            continue
        # the .npy headers and the first rows are where most of the checks are
        k = data.draw(st.one_of(st.integers(0, min(len(blob) - 1, 300)), st.integers(0, len(blob) - 1)))
        blob[k] ^= 1 << data.draw(st.integers(0, 7))
        parts[member] = bytes(blob)
    use_bounded(_file(_zip_bytes(parts)))


@FUZZ
@given(name=st.sampled_from(SEEDS), data=st.data())
def test_fuzz_truncations(name, data):
    blob = _SEED_BYTES[name]
    n = data.draw(st.integers(0, len(blob) - 1))
    assert use_bounded(_file(blob[:n])) == "refused"


def _paths(v, at=()) -> list[tuple]:
    """Paths into a header (the first two entries of each list)."""
    out = [at] if at else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, at + (k,))
    elif isinstance(v, list):
        for k, x in enumerate(v[:2]):
            out += _paths(x, at + (k,))
    return out


_HEADERS = {n: json.loads(members(seed(n))["header.json"]) for n in SEEDS}
_PATHS = {n: _paths(h) for n, h in _HEADERS.items()}

JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-3, 40),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["load", "store", "shared", "global", "generic", "cp.async", "ldmatrix", "x" * 5000]),
    st.lists(st.integers(-2, 2**32), max_size=4), st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
    st.integers(1, 60).map(lambda d: json.loads("[" * d + "]" * d)),
)


@FUZZ
@given(name=st.sampled_from(SEEDS), data=st.data())
def test_fuzz_header_fields(name, data):
    h = copy.deepcopy(_HEADERS[name])
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_PATHS[name]))
        try:
            h = _set(h, path, data.draw(st.one_of(st.just(_DELETE), JSON_VALUES)))
        except (KeyError, IndexError, TypeError):
            pass                                   # an earlier edit removed or replaced what held it
    parts = dict(members(seed(name)), **{"header.json": json.dumps(h).encode()})
    use_bounded(_file(_zip_bytes(parts)))


def _zip_bytes(parts: dict[str, bytes]) -> bytes:
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for n, b in parts.items():
            z.writestr(n, b)
    return bio.getvalue()


DTYPES = ["<u4", "<i4", "<u8", "<i8", "<f4", "<f8", "|u1", "|i1", "<u2", "|b1", "<U3", ">u4", ">i8"]


@FUZZ
@given(name=st.sampled_from(SEEDS), data=st.data())
def test_fuzz_arrays(name, data):
    a = _arrays(name)
    parts = members(seed(name))
    for _ in range(data.draw(st.integers(1, 3))):
        arr = data.draw(st.sampled_from(tracefile.ARRAYS))
        x = a[arr]
        how = data.draw(st.sampled_from(["dtype", "shape", "value", "nan", "drop", "rows"]))
        if how == "dtype":
            with np.errstate(all="ignore"):
                x = x.astype(data.draw(st.sampled_from(DTYPES)))
        elif how == "shape":
            x = x.reshape(-1) if x.ndim == 2 else x.reshape(-1, 1)
        elif how == "rows":
            k = data.draw(st.integers(0, max(0, x.shape[0])))
            x = x[:k] if data.draw(st.booleans()) else np.concatenate([x, x[:k]])
        elif how == "nan":
            x = x.astype(np.float32)
            x.reshape(-1)[data.draw(st.integers(0, max(0, x.size - 1)))] = np.nan
        elif how == "value" and x.size and x.dtype.kind in "ui":
            flat = x.reshape(-1)
            info = np.iinfo(x.dtype)
            flat[data.draw(st.integers(0, flat.size - 1))] = data.draw(
                st.one_of(st.integers(int(info.min), int(info.max)), st.sampled_from([0, 1, 2, 31, 32, int(info.max)])))
        if how == "drop":
            parts.pop(f"{arr}.npy", None)
        else:
            a[arr] = x
            parts[f"{arr}.npy"] = npy(x)
    use_bounded(_file(_zip_bytes(parts)))


@FUZZ
@given(name=st.sampled_from(SEEDS), data=st.data())
def test_fuzz_lying_zip_sizes(name, data):
    """A member's CRC, compressed or uncompressed size, or method, in its local header or
    the central directory (or both), replaced by anything."""
    blob = bytearray(_SEED_BYTES[name])
    cd = [k for k in range(len(blob) - 4) if blob[k:k + 4] == b"PK\x01\x02"]
    local = [k for k in range(len(blob) - 4) if blob[k:k + 4] == b"PK\x03\x04"]
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(cd) - 1))
        field = data.draw(st.sampled_from(["crc", "csize", "usize", "method"]))
        value = data.draw(st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2**31, 2**32 - 1])))
        where = data.draw(st.sampled_from(["cd", "local", "both"]))
        for table, offs in (("cd", {"crc": 16, "csize": 20, "usize": 24, "method": 10}),
                            ("local", {"crc": 14, "csize": 18, "usize": 22, "method": 8})):
            if where not in (table, "both"):
                continue
            at = (cd if table == "cd" else local)[k] + offs[field]
            if field == "method":
                struct.pack_into("<H", blob, at, value & 0xFFFF)
            else:
                struct.pack_into("<L", blob, at, value)
    use_bounded(_file(bytes(blob)))


def test_the_fuzzers_see_both_outcomes():
    """The mutations are neither all refused nor all harmless (the tests above check both paths)."""
    h = copy.deepcopy(_HEADERS["copy_guarded"])
    h["title"] = "another title"
    assert use(_file(_zip_bytes(dict(members(seed("copy_guarded")), **{"header.json": json.dumps(h).encode()})))) \
        == "loaded"
    assert use(_file(_SEED_BYTES["copy_guarded"][:100])) == "refused"


# ---------------------------------------------------------------------------- bounded work, same results


@pytest.mark.parametrize("name", ["generic_atomic", "ldmatrix_cpasync", "reduce_shfl", "softmax_row", "gemm_tiled"])
def test_counting_a_few_records_at_a_time_gives_the_same_figures(name, monkeypatch):
    from viz.trace import analysis

    t = tracefile.load(seed(name))
    whole = analyze_trace(t)
    monkeypatch.setattr(analysis, "COUNT_ROWS", 3)
    parts = analyze_trace(t)
    assert parts.metrics == whole.metrics and parts.other_metrics == whole.other_metrics
    assert parts.per_access() == whole.per_access()
    for a, b in zip(parts.stats, whole.stats):
        assert np.array_equal(a.per_record, b.per_record)
    assert np.array_equal(parts.per_warp(), whole.per_warp())
    assert any(s.executed > 3 for s in whole.stats)


def test_the_checks_see_across_the_chunks_they_read(tmp_path, monkeypatch):
    """Records out of order exactly where one chunk of rows ends and the next begins."""
    monkeypatch.setattr(tracefile, "CHECK_ROWS", 8)
    a = _arrays("copy_guarded")
    assert tracefile.load(mutated(tmp_path, "copy_guarded", arrays=a)).records == 64
    for n in tracefile.ARRAYS:                      # swap rows 7 and 8 (blocks 3 and 4)
        a[n][[7, 8]] = a[n][[8, 7]]
    refused(mutated(tmp_path, "copy_guarded", arrays=a), "record 8 is out of order")


def test_the_heat_map_of_a_launch_is_the_whole_grid_up_to_its_cap():
    assert heat_map_blocks(16, 2) == 16
    assert heat_map_blocks(2**27, 2) == HEAT_MAP_WARPS // 2
    assert heat_map_blocks(2**40, 33) == HEAT_MAP_WARPS // 33
    t = tracefile.load(seed("copy_guarded"))
    an = analyze_trace(t)
    assert an.per_warp().shape == (16, 2) and an.per_warp(blocks=3).shape == (3, 2)
    assert np.array_equal(an.per_warp(blocks=3), an.per_warp()[:3])


def test_the_cost_model_replays_no_more_than_its_work_bound(monkeypatch):
    """A trace over the cost model's work bound is replayed from its first blocks that fit
    (scaled to the grid, and saying so), never in full; one block that does not fit is refused."""
    from viz.gpu import tracemodel

    t = tracefile.load(seed("copy_guarded"))
    an = analyze_trace(t)
    monkeypatch.setattr(tracemodel, "MAX_MODEL_RECORDS", t.records - 1)
    cov = tracemodel.coverage(t)
    assert cov.used_blocks < cov.grid_blocks and cov.scale > 1
    tracemodel.workload(t, an)                                   # predicted from those blocks
    monkeypatch.setattr(tracemodel, "MAX_MODEL_RECORDS", 1)
    with pytest.raises(TraceError):
        tracemodel.workload(t, an)


def test_the_limits_admit_everything_the_recorder_writes():
    """What ``warpviz trace`` may write passes ``load``: its record cap, CUDA's launch limits,
    the launch file's shared memory and buffer bounds are inside the checks'."""
    from viz.trace import launch, record

    assert record.MAX_RECORDS <= tracefile.MAX_RECORDS
    assert schema.GRID_LIMITS == launch.MAX_GRID and schema.MAX_BLOCK_THREADS == launch.MAX_THREADS_PER_BLOCK
    assert schema.MAX_SHARED_BYTES >= launch.MAX_SHARED_BYTES and schema.MAX_BUFFER_COUNT >= launch.MAX_BUFFER_BYTES
    assert schema.WIDTHS == tuple(2**k for k in range(6))


def test_load_reports_progress_and_stops_when_cancelled():
    from viz.engine import Cancelled
    from viz.trace.tracefile import load, shipped

    path = shipped()[0]
    seen = []
    t = load(path, lambda fraction, stage: seen.append((fraction, stage)))
    assert t.records > 0
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 0 <= fractions[0] and fractions[-1] < 1
    assert {"read", "check"} <= {stage for _, stage in seen}
    asked = []

    def cancel_after_two():
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(Cancelled):
        load(path, cancelled=cancel_after_two)
