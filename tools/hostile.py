#!/usr/bin/env python3
"""A corpus of hostile input files and a runner that feeds them to warpviz as a user would.

    python tools/hostile.py make DIR          # write the corpus (scenarios, launch files, traces)
    python tools/hostile.py run DIR [-j 2]    # run every case; exit 1 if any case fails

Each case is one file and one command (``warpviz analyze FILE``, ``warpviz export FILE ...``,
``warpviz trace FILE``, ``warpviz bench --traces --dry-run FILE``, or ``app``: the main window
opens the file offscreen and runs its event loop for a while). A case passes when the command
ends within 30 s and 4 GiB of address space, with exit status 0 or 2, no Python traceback on
its output, and no planted command ran (launch files plant ``$(touch MARKER)`` and kin; the
runner looks for every marker afterwards). ``dataloss`` cases (``_data_loss``) run a command
that writes user data (an export into a folder of the user's, to a FIFO, under ``ulimit
-f``, ``trace_ptx(keep_folder=...)``...) and also fail when any file they name lost a byte
or changed kind.
A command line case must also print no raw
terminal control (ESC, BEL, CSI, bidirectional overrides), and no case may print, draw or
carry into a file it writes the secret planted in files no case names (``_outside``: a
scenario's ``compare`` outside its folder, a ``#line`` naming ``.env``); an ``-short`` case
prints at most 50,000 characters. The table printed last lists the failures.

The files are made here, from the shipped traces and launch files and from text: nothing is
downloaded. ``args/`` holds the cases of numbers and paths typed by the user (``cli``: the
command line is the case), launch buffers too large to fill, a demangler bomb, the app's
data folder as a file (``app-data``) and the API given huge numbers (``api``). The corpus is not part of the test suite (it takes minutes); the suite has the
fast fuzz tests (tests/test_launch_hostile.py, tests/test_trace_hostile.py, tests/test_scenario_fuzz.py, tests/test_api_errors.py).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME_LIMIT_S = 30
MEMORY_LIMIT = 4 << 30
MARKER_DIR_NAME = "markers"

# ----------------------------------------------------------------------------- making the corpus

SCENARIO = """\
title = "hostile"
[launch]
block = [32]
grid = [1]
[arrays]
s = { space = "shared", type = "float", shape = [1024] }
[[access]]
op = "load"
at = "s[lane]"
"""


def _scenarios(d: Path, cases: list) -> None:
    def add(name: str, text: str | bytes, *commands) -> None:
        p = d / f"{name}.toml"
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        for c in commands or (("analyze",), ("export",), ("app",)):
            cases.append((p, c))

    add("ok", SCENARIO)
    add("huge-launch", SCENARIO.replace("block = [32]", "block = [1024]").replace("grid = [1]", "grid = [65536]")
        .replace('at = "s[lane]"', 'for = { i = "0:99999" }\nat = "s[(lane + i) % 1024]"'))
    add("huge-grid-3d", SCENARIO.replace("grid = [1]", "grid = [2147483647, 65535, 65535]"))
    add("long-chain", SCENARIO.replace('at = "s[lane]"', 'at = "s[' + "+".join(["1"] * 495) + ']"'))
    add("long-chain-5000", SCENARIO.replace('at = "s[lane]"', 'at = "s[' + "+".join(["1"] * 5000) + ']"'))
    add("deep-parens", SCENARIO.replace('at = "s[lane]"', 'at = "s[' + "(" * 3000 + "1" + ")" * 3000 + ']"'))
    add("deep-unary", SCENARIO.replace('at = "s[lane]"', 'at = "s[' + "-" * 3000 + "1" + ']"'))
    add("deep-ternary", SCENARIO.replace('at = "s[lane]"', 'at = "s[' + "1 ? " * 2000 + "1" + " : 0" * 2000 + ']"'))
    add("shape-overflow", SCENARIO.replace("shape = [1024]", "shape = [9223372036854775807, 8]"))
    add("shape-negative", SCENARIO.replace("shape = [1024]", "shape = [-5]"))
    add("param-overflow", SCENARIO.replace("[launch]", "[params]\nW = 99999999999999999999\n[launch]")
        .replace('"s[lane]"', '"s[lane * W]"'))
    add("index-overflow", SCENARIO.replace('"s[lane]"', '"s[lane * 9223372036854775807 * 4]"'))
    add("division-by-zero", SCENARIO.replace('"s[lane]"', '"s[lane / 0]"'))
    add("modulo-zero", SCENARIO.replace('"s[lane]"', '"s[lane % 0]"'))
    add("shift-huge", SCENARIO.replace('"s[lane]"', '"s[1 << 100000]"'))
    add("power-huge", SCENARIO.replace('"s[lane]"', '"s[lane ** 1000000]"'))
    add("many-accesses", SCENARIO + "\n".join(f'[[access]]\nop = "load"\nat = "s[lane + {k}]"'
                                                for k in range(5000)) + "\n", ("analyze",))
    params = "\n".join(f"P{k} = {k}" for k in range(8000))
    add("many-params", SCENARIO.replace("[launch]", f"[params]\n{params}\n[launch]"), ("analyze",))
    add("deep-toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    add("deep-inline-tables", "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n")
    add("not-utf8", b"title = \"\xff\xfe\xfd\"\n" + SCENARIO.encode())
    add("nul-bytes", SCENARIO.replace("hostile", "a\x00b"))
    add("binary-garbage", os.urandom(4096))
    add("empty", "")
    add("wrong-types", SCENARIO.replace("block = [32]", 'block = "lots"').replace("shape = [1024]", "shape = 3.5"))
    add("unknown-keys", SCENARIO + "\n[bogus]\nx = 1\n")
    add("huge-string", SCENARIO.replace("hostile", "x" * (8 << 20)), ("analyze",))
    add("bad-kind", SCENARIO.replace('op = "load"', 'op = "teleport"'))
    add("layout-junk", SCENARIO.replace('type = "float"', 'type = "float", layout = "Sw<99,99,99> o (8,64):(64,1)"'))
    add("stride-zero-loop", SCENARIO.replace('at = "s[lane]"', 'for = { i = "0:10:0" }\nat = "s[i]"'))
    add("reverse-loop", SCENARIO.replace('at = "s[lane]"', 'for = { i = "10:0" }\nat = "s[i]"'))
    add("nested-loops", SCENARIO.replace('at = "s[lane]"', 'for = { i = "0:100000", j = "0:100000" }\nat = "s[i+j]"'))
    add("struct-bomb", SCENARIO.replace('type = "float"', 'type = "struct { ' + " ".join(
        f"float f{k};" for k in range(20000)) + ' }"'), ("analyze",))
    fifo = d / "fifo.toml"
    os.mkfifo(fifo)
    for c in (("analyze",), ("export",)):
        cases.append((fifo, c))
    (d / "devzero.toml").symlink_to("/dev/zero")
    cases.append((d / "devzero.toml", ("analyze",)))
    (d / "folder.toml").mkdir()
    cases.append((d / "folder.toml", ("analyze",)))
    cases.append((d / "ok.toml", ("analyze-set", "W=99999999999")))
    cases.append((d / "ok.toml", ("analyze-set", "W=" + "9" * 5000)))


KERNEL = """\
extern "C" __global__ void k(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = VAL;
}
"""

LAUNCH = """\
title = "hostile"
source = "k.cu"
kernel = "k"
block = [32]
grid = [1]
defines = { VAL = "1.0f" }

[[arg]]
type = "float*"
count = 32

[[arg]]
type = "int"
value = 32
"""


def _launch_files(d: Path, markers: Path, cases: list) -> None:
    (d / "k.cu").write_text(KERNEL)
    (d / "broken.cu").write_text("this is not CUDA {")
    commands = (("trace",), ("bench-dry",), ("app",))

    def add(name: str, text: str | bytes, *cmds) -> None:
        p = d / f"{name}.launch.toml"
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        for c in cmds or commands:
            cases.append((p, c))

    def marker(tag: str) -> str:
        return str(markers / tag)

    add("ok", LAUNCH)
    for tag, value in (("dollar", "$(touch {m})1.0f"), ("backtick", "`touch {m}`1.0f"),
                       ("semicolon", "1.0f; touch {m}"), ("pipe", "1.0f | touch {m}"),
                       ("and", "1.0f && touch {m}"), ("newline", "1.0f\ntouch {m}"),
                       ("quote", "1.0f' ; touch {m} ; '"), ("dquote", '1.0f" ; touch {m} ; "'),
                       ("redirect", "1.0f > {m}"), ("subshell", "(touch {m})")):
        v = value.format(m=marker(f"define-{tag}"))
        add(f"define-{tag}", LAUNCH.replace('"1.0f"', json.dumps(v)))
    add("define-name", LAUNCH.replace("VAL = ", f'"VAL=1.0f -DX=$(touch {marker("define-name")})" = 1\nVAL = '))
    inc = d / f"inc$(touch {marker('include-dir')})"
    try:
        inc.mkdir()
    except OSError:
        pass
    add("include-dir", LAUNCH.replace("defines", f"include_dirs = [{json.dumps(inc.name)}]\ndefines"))
    add("include-dir-semicolon", LAUNCH.replace("defines", f'include_dirs = ["x; touch {marker("inc-semi")}"]\ndefines'))
    src = d / f"k$(touch {marker('source-name')}).cu"
    try:
        src.write_text(KERNEL)
    except OSError:
        pass
    add("source-name", LAUNCH.replace('"k.cu"', json.dumps(src.name)))
    add("kernel-name", LAUNCH.replace('kernel = "k"', f'kernel = "k$(touch {marker("kernel-name")})"'))
    add("source-traversal", LAUNCH.replace('"k.cu"', '"../../../../../../etc/passwd"'))
    add("source-absolute", LAUNCH.replace('"k.cu"', '"/etc/passwd"'))
    add("source-devzero", LAUNCH.replace('"k.cu"', '"/dev/zero"'))
    big = d / "big.cu"
    with open(big, "wb") as f:
        f.truncate(2 << 30)                           # a sparse 2 GiB "source"
    add("source-huge", LAUNCH.replace('"k.cu"', '"big.cu"'))
    add("source-broken", LAUNCH.replace('"k.cu"', '"broken.cu"'))
    add("kernel-missing", LAUNCH.replace('kernel = "k"', 'kernel = "nothere"'))
    add("args-missing", LAUNCH.split("[[arg]]")[0])
    add("args-wrong-type", LAUNCH.replace('type = "int"', 'type = "double"').replace("value = 32", "value = 3.5"))
    add("not-utf8", b"title = \"\xff\xfe\"\n" + LAUNCH.encode())
    add("nul-source", LAUNCH.replace('"k.cu"', '"k.cu\\u0000x"'))
    add("nul-define", LAUNCH.replace('"1.0f"', '"1.0f\\u0000x"'))
    add("nul-include", LAUNCH.replace("defines", 'include_dirs = ["a\\u0000b"]\ndefines'))
    add("deep-toml", "title = " + "[" * 5000 + "]" * 5000 + "\n")
    add("huge-count", LAUNCH.replace("count = 32", "count = 999999999999999999"))
    add("huge-grid", LAUNCH.replace("grid = [1]", "grid = [2147483647, 65535, 65535]"))
    add("zero-block", LAUNCH.replace("block = [32]", "block = [0]"))
    add("garbage", os.urandom(2048))
    fifo = d / "fifo.launch.toml"
    os.mkfifo(fifo)
    for c in commands:
        cases.append((fifo, c))
    (d / "devzero.launch.toml").symlink_to("/dev/zero")
    for c in commands:
        cases.append((d / "devzero.launch.toml", c))


def _demangle_bomb(levels: int) -> str:
    """A mangled name whose demangled text doubles at each level (A<previous, previous>)."""
    def b36(n: int) -> str:
        digits, s = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
        while True:
            s, n = digits[n % 36] + s, n // 36
            if n == 0:
                return s
    return "_Z1f1AIiE" + "".join(f"1AIS{b36(2 * i)}_S{b36(2 * i)}_E" for i in range(levels))


API_HUGE = """
import sys
from viz import api
from viz.errors import WarpvizError
sc = api.scenario("transpose-tile")
calls = {"set": lambda: api.scenario("transpose-tile", set={"TILE": 10 ** 5000}),
         "set-str": lambda: api.scenario("transpose-tile", set={"TILE": "9" * 5000}),
         "with_params": lambda: sc.with_params(TILE=10 ** 5000),
         "frame": lambda: sc.frame(10 ** 5000), "frame-block": lambda: sc.frame(1, block=10 ** 5000),
         "size": lambda: sc.frame(1, size=(10 ** 5000, 100)), "scale": lambda: sc.frame(1, scale=1e308),
         "frames": lambda: sc.frames(10 ** 5000), "animation": lambda: sc.animation("9" * 5000),
         "matrix": lambda: api.scenario("ldmatrix-x4-tile").matrix_map(10 ** 5000),
         "layout": lambda: api.layout_map("SwizzledSharedLayout(8, 1, 8, [1, 0])", shape=(10 ** 5000, 8))}
for name in sys.argv[1:]:
    try:
        calls[name]()
    except WarpvizError as err:
        print(name, "refused:", str(err)[:200])
    else:
        sys.exit(f"{name}: taken")
"""


def _args(d: Path, cases: list) -> None:
    """Numbers and paths typed by the user, the app's data folder, launch buffers too large to
    fill, a demangler bomb, the API with huge numbers:
    each exits 2 with one line (or 0 where the input is fine), never a traceback."""
    d.mkdir(parents=True, exist_ok=True)
    big, long_name = "9" * 5000, "x" * 300
    launch = ROOT / "kernels" / "copy_2d.launch.toml"
    anchor = d / "README"
    anchor.write_text("CLI cases: the file is only an anchor; the command line is the case\n")
    for args in (["matrix", "ldmatrix-x4-tile", "--block", big], ["matrix", "ldmatrix-x4-tile", "-i", big],
                 ["matrix", "ldmatrix-x4-tile", "--warp", "-" + big],
                 ["export", "transpose-tile", "--out", "{scratch}/a.png", "--block", big],
                 ["export", "transpose-tile", "--out", "{scratch}/a.png", "-i", "1-" + big],
                 ["export", "transpose-tile", "--out", "{scratch}/a.png", "--frames", big],
                 ["export", "transpose-tile", "--out", "{scratch}/a.png", "--size", f"{big}x100"],
                 ["export", "transpose-tile", "--out", "{scratch}/a.png", "--scale", "1e9"],
                 ["export", "transpose-tile", "--out", "{scratch}/a.gif", "--fps", big],
                 ["export", "transpose-tile", "--out", "{scratch}/a.gif", "--hold", "1e308"],
                 ["export", "transpose-tile", "--out", "{scratch}/" + long_name + ".png"],
                 ["layout", "(8,64):(64,1)", "--out", "{scratch}/b.png", "--size", f"10x{big}"],
                 ["layout", "SwizzledSharedLayout(8, 1, 8, [1, 0])", "--shape", f"{big},8"],
                 ["layout", "(8,64):(64,1)", "--out", "{scratch}/" + long_name + ".svg"],
                 ["validate", "transpose-tile", "--random", big], ["calibrate", "--runs", big],
                 ["calibrate", "--out", "{scratch}"], ["bench", "transpose-tile", "--out", "{scratch}"],
                 ["trace", str(launch), "--blocks", big], ["trace", str(launch), "--blocks", "0-" + big],
                 ["trace", str(launch), "--out", "{scratch}/" + long_name + ".wvtrace"],
                 ["bench", "--traces", str(launch), "--dry-run", "--out", "{scratch}"]):
        cases.append((anchor, ("cli", *args)))
    # launch files whose buffers are too large to fill here: the dry run allocates nothing
    for f in ("copy.cu", "common.cuh"):
        shutil.copy(ROOT / "kernels" / f, d / f)

    def launch_file(name: str, count: int, fill: str) -> Path:
        p = d / f"{name}.launch.toml"
        p.write_text(f'format = 2\nsource = "copy.cu"\nkernel = "copy_2d"\nblock = [32, 16, 1]\ngrid = [8, 4, 1]\n'
                     f'[[arg]]\ntype = "float*"\ncount = {count}\nfill = "{fill}"\n'
                     '[[arg]]\ntype = "float*"\ncount = 16384\nfill = "random"\n[[arg]]\ntype = "int"\nvalue = 256\n')
        return p
    with open(d / "sparse64g.bin", "wb") as f:
        f.truncate(64 << 30)                                   # sparse: no disk used
    import numpy as np

    with open(d / "claims4g.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (1 << 30,)})
        f.truncate(f.tell() + (4 << 30))
    for p in (launch_file("buffer-4gb", 1_000_000_000, "random"), launch_file("buffer-8gib", 2 << 30, "random"),
              launch_file("buffer-240gib", 60 << 30, "zero"), launch_file("file-64gib", 16 << 30, "file:sparse64g.bin"),
              launch_file("npy-4gib", 1 << 30, "npy:claims4g.npy")):
        cases.append((p, ("bench-dry",)))
    # a PTX whose entry name demangles to terabytes
    bomb = _demangle_bomb(40)
    (d / "bomb.ptx").write_text(f".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry {bomb}(\n"
                                "\t.param .u64 p0\n)\n{\n\tret;\n}\n")
    p = d / "demangle-bomb.launch.toml"
    p.write_text(f'format = 2\nptx = "bomb.ptx"\nkernel = "{bomb}"\nblock = [32]\ngrid = [1]\n'
                 '[[arg]]\ntype = "float*"\ncount = 32\n')
    cases += [(p, ("bench-dry",)), (p, ("app",))]
    # the app's data folder a file, or below a file
    blocker = d / "datafile"
    blocker.write_text("a file where the data folder goes\n")
    cases += [(blocker, ("app-data",)), (blocker / "below", ("app-data",))]
    for name in ("set", "set-str", "with_params", "frame", "frame-block", "size", "scale", "frames", "animation",
                 "matrix", "layout"):
        cases.append((anchor, ("api", name)))


def _gpus(d: Path, cases: list) -> None:
    """GPU descriptions (assets/gpus/*.toml, viz.gpus) and calibration files with the loaded-latency
    curve, each hostile in one field; $WARPVIZ_GPU naming nothing, a path, or a terminal escape:
    each exits 2 with one paragraph naming the file or the variable, never a traceback."""
    d.mkdir(parents=True, exist_ok=True)
    ref = (ROOT / "assets" / "gpus" / "nvidia-h100-80gb-hbm3.toml").read_text(encoding="utf-8")
    edits = {
        "banks-text": ("banks = 32", 'banks = "32"'), "banks-zero": ("banks = 32", "banks = 0"),
        "banks-huge": ("banks = 32", "banks = " + "9" * 400), "sector-odd": ("sector_bytes = 32", "sector_bytes = 24"),
        "line-not-multiple": ("line_bytes = 128", "line_bytes = 100"), "unknown-key": ("[spec]", "[spec]\ncolour = 1"),
        "target-shell": ('target = "sm_90"', 'target = "$(touch MARKER)"'),
        "calibration-path": ('calibration = "nvidia-h100-80gb-hbm3.json"', 'calibration = "../../../etc/passwd.json"'),
        "phase-lanes": ("phase_lanes = { 8 = 16, 16 = 8 }", "phase_lanes = { 8 = 12, 16 = 8 }"),
        "kinds-nested": ('kinds = ["load"', 'kinds = [["load"]'), "format-new": ("format = 1", "format = 7"),
        "nan-peak": ("dram_peak_gbps = 3352.3", "dram_peak_gbps = nan"),
        "escape-name": ('name = "NVIDIA H100 80GB HBM3"', 'name = "H100\u001b[31m"'),
    }
    for name, (a, b) in edits.items():
        assert a in ref, name
        p = d / f"{name}.toml"
        p.write_text(ref.replace(a, b, 1), encoding="utf-8")
        cases.append((p, ("gpu-description",)))
    (d / "not-toml.toml").write_bytes(b"\xff\xfe[[[")
    (d / "huge.toml").write_text("# " + "x" * (1 << 20))
    cases += [(d / "not-toml.toml", ("gpu-description",)), (d / "huge.toml", ("gpu-description",))]
    for value in ("no-such-gpu", "../../etc/passwd", "\x1b]0;owned\x07", "x" * 5000):
        cases.append((d, ("gpu-env", value)))
    # calibration files: the loaded-latency curve's rate a text, NaN, negative; run values a dict
    good = json.loads((ROOT / "assets" / "calibration" / "nvidia-h200.json").read_text())
    for name, (key, field, value) in {"at-text": ("loaded_latency_ns_4", "at_gbps", "fast"),
                                      "at-negative": ("loaded_latency_ns_4", "at_gbps", -5),
                                      "at-huge": ("loaded_latency_ns_8", "at_gbps", 1e300),
                                      "spread-text": ("l2_write_gbps", "run_spread_pct", "lots"),
                                      "runs-dict": ("l2_write_gbps", "run_values", {"a": 1})}.items():
        doc = json.loads(json.dumps(good))
        doc["figures"][key][field] = value
        p = d / f"calibration-{name}.json"
        p.write_text(json.dumps(doc))
        cases.append((p, ("calibrate-show",)))


def _zip(path: Path, members: dict[str, bytes], compress=zipfile.ZIP_DEFLATED) -> None:
    with zipfile.ZipFile(path, "w", compression=compress) as z:
        for name, data in members.items():
            z.writestr(name, data)


def _traces(d: Path, cases: list) -> None:
    import numpy as np

    shipped = sorted((ROOT / "assets" / "traces").glob("*.wvtrace"))
    base = min(shipped, key=lambda p: p.stat().st_size)
    with zipfile.ZipFile(base) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["header.json"])
    commands = (("analyze",), ("export",), ("app",))

    def add(name: str, data: dict[str, bytes] | bytes, *cmds) -> None:
        p = d / f"{name}.wvtrace"
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            _zip(p, data)
        for c in cmds or commands:
            cases.append((p, c))

    def npy(a) -> bytes:
        b = io.BytesIO()
        np.lib.format.write_array(b, np.asarray(a), allow_pickle=True)
        return b.getvalue()

    def with_header(**changes) -> dict[str, bytes]:
        h = dict(header)
        for k, v in changes.items():
            if v is ...:
                h.pop(k, None)
            else:
                h[k] = v
        return {**members, "header.json": json.dumps(h).encode()}

    add("ok", members)
    add("bench-ok", members, ("bench-traces",))
    raw = base.read_bytes()
    rng = np.random.default_rng(7)
    for k in range(12):
        b = bytearray(raw)
        for at in rng.integers(0, len(b), size=int(rng.integers(1, 16))):
            b[at] ^= 1 << int(rng.integers(0, 8))
        add(f"bitflip-{k}", bytes(b), ("analyze",), ("app",))
    for frac in (0.1, 0.5, 0.9, 0.999):
        add(f"truncated-{frac}", raw[:int(len(raw) * frac)], ("analyze",))
    n = int(header.get("records", 0)) or len(np.lib.format.read_array(io.BytesIO(members["instr.npy"])))
    # an .npy header that declares 10^12 elements
    hdr = io.BytesIO()
    np.lib.format.write_array_header_1_0(hdr, {"descr": "<u4", "fortran_order": False, "shape": (10**12,)})
    add("npy-huge-shape", {**members, "instr.npy": hdr.getvalue() + b"\0" * 64})
    # a zip bomb: one member of 2 GiB of zeros, written by streaming
    bomb = d / "zip-bomb.wvtrace"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            if name != "offset.npy":
                z.writestr(name, data)
        with z.open("offset.npy", "w", force_zip64=True) as f:
            chunk = b"\0" * (1 << 24)
            for _ in range(128):
                f.write(chunk)
    for c in commands:
        cases.append((bomb, c))
    # corrupt deflate data inside a member (the zip's CRC and sizes left as they were)
    b = bytearray(raw)
    with zipfile.ZipFile(base) as z:
        info = z.getinfo("offset.npy")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for k in range(start + 10, min(start + 200, len(b))):
        b[k] = 0xFF
    add("corrupt-deflate", bytes(b))
    add("deep-json", {**members, "header.json": b"[" * 100000 + b"]" * 100000})
    add("header-not-object", {**members, "header.json": b"[1, 2, 3]"})
    add("header-not-json", {**members, "header.json": b"\xff\xfe not json"})
    for key in ("launch", "instructions", "gpu", "grid", "block", "name", "launch_file", "launch_file_name",
                "sources", "records", "blocks", "version"):
        add(f"header-missing-{key}", with_header(**{key: ...}), ("analyze",), ("app",))
        for tag, value in (("string", "x"), ("number", 12345678901234567890), ("list", [1, 2]), ("null", None),
                           ("nested", {"a": {"b": {"c": []}}})):
            add(f"header-{key}-{tag}", with_header(**{key: value}), ("analyze",))
    instrs = header.get("instructions", [])
    if instrs:
        for key in ("op", "opcode", "ptx", "width", "line", "space", "kind", "file"):
            for tag, value in (("missing", ...), ("string", "?"), ("number", -1), ("huge", 10**30), ("list", [[]])):
                i0 = dict(instrs[0])
                if value is ...:
                    i0.pop(key, None)
                else:
                    i0[key] = value
                add(f"instr-{key}-{tag}", with_header(instructions=[i0, *instrs[1:]]), ("analyze",))
    add("name-traversal", with_header(name="../../../../ESCAPED", title="../../../../ESCAPED"), ("export",))
    add("launch-file-traversal", with_header(launch_file_name="../../../../../../tmp/evil.launch.toml"),
        ("bench-traces",), ("app",))
    add("launch-file-absolute", with_header(launch_file_name="/tmp/evil.launch.toml"), ("bench-traces",), ("app",))
    add("grid-2^27", with_header(launch={**header.get("launch", {}), "grid": [1 << 27, 1, 1]}), ("analyze",),
        ("app",), ("export",))
    for arr, bad in (("instr", np.full(n, 1 << 30, np.uint32)), ("block", np.full(n, 1 << 30, np.uint32)),
                     ("warp", np.full(n, 999, np.uint32)), ("base", np.full(n, np.nan)),
                     ("offset", np.array(["x"] * n)), ("active", np.full(n, -1, np.int64)),
                     ("flags", np.full(n, 255, np.uint8)), ("instr", np.array([object()] * n, dtype=object)),
                     ("offset", np.zeros((n, 31), np.int32)), ("base", np.zeros(n + 1, np.uint64))):
        add(f"array-{arr}-{bad.dtype}-{bad.shape[-1]}", {**members, f"{arr}.npy": npy(bad)}, ("analyze",), ("app",))
    add("not-a-zip", os.urandom(10000))
    add("empty", b"")
    fifo = d / "fifo.wvtrace"
    os.mkfifo(fifo)
    for c in commands:
        cases.append((fifo, c))
    (d / "devzero.wvtrace").symlink_to("/dev/zero")
    for c in commands:
        cases.append((d / "devzero.wvtrace", c))


# ----------------------------------------------------------------------------- wgmma

def _wgmma(d: Path, cases: list) -> None:
    """wgmma scenarios and traces that lie: operands outside their arrays or in global memory,
    numbers of the wrong kind or size, and traces whose wgmma records carry garbage slots, a PTX
    that is no wgmma, a million distinct descriptors or descriptors of a 256 KiB shared window."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from viz.trace import tracefile

    # the scenario the wgmma validate case and tests/test_wgmma.py start from, each changed in one place
    scen = (ROOT / "tools" / "gpu" / "wgmma_cases" / "wgmma-tma-128b.toml").read_text(encoding="utf-8")

    def add(name: str, text: str, *commands) -> None:
        p = d / f"{name}.toml"
        p.write_text(text)
        for c in commands or (("analyze",), ("export",), ("app",)):
            cases.append((p, c))

    add("wgmma-ok", scen)
    add("wgmma-global-operand", scen.replace('b   = "Bs[0][k]"', 'b   = "A[0][k]"'))
    add("wgmma-outside", scen.replace("n   = 128", "n   = 128\nb_sbo = 262128"))
    add("wgmma-huge-n", scen.replace("n   = 128", "n   = 1000000000000000000000"))
    add("wgmma-n-string", scen.replace("n   = 128", 'n   = "128"'))
    add("wgmma-a-number", scen.replace('a   = "As[0][k]"', "a   = 5"))
    add("wgmma-a-table", scen.replace('a   = "As[0][k]"', "a   = { x = 1 }"))
    add("wgmma-lbo-negative", scen.replace("n   = 128", "n   = 128\na_lbo = -16"))
    add("wgmma-when", scen.replace("n   = 128", 'n   = 128\nwhen = "tid == 0"'))
    add("wgmma-block-96", scen.replace("block = [128]", "block = [96]"))
    add("wgmma-many-points", scen.replace('k = "0:64:16"', 'k = "0:4000000:16"'))
    add("wgmma-per-thread-start", scen.replace('a   = "As[0][k]"', 'a   = "As[tid % 64][k]"'))

    def trace(name: str, slots: np.ndarray, ptx: str, warps: int = 4, blocks: int = 1) -> None:
        n = slots.shape[0]
        table = [{"id": 0, "line_no": 1, "ptx": ptx, "function": "k", "opcode": ptx.split()[0] if ptx.split() else "",
                  "kind": "wgmma", "op": "load", "space": "shared", "width": 4, "predicate": "",
                  "address": "%rd1,%rd2", "operand": 0, "file": "", "line": 0}]
        heads = np.zeros((n, 8), np.uint32)
        heads[:, 1] = np.arange(n) // warps % blocks
        heads[:, 2] = np.arange(n) % warps
        heads[:, 3] = heads[:, 4] = 0xFFFFFFFF
        header = {"title": name, "kernel": "k", "launch": {"block": [32 * warps], "grid": [blocks]},
                  "instructions": table, "complete": True}
        t = tracefile.from_records(header, heads, slots.astype(np.uint64))
        p = tracefile.save(t, d / f"{name}.wvtrace")
        for c in (("analyze",), ("export",), ("app",)):
            cases.append((p, c))

    good = "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%f1}, %rd1, %rd2, p, 1, 1, 0, 1;"
    rng = np.random.default_rng(30)
    trace("wgmma-garbage-slots", rng.integers(0, 1 << 40, size=(4096, 32)), good)
    trace("wgmma-not-a-wgmma", rng.integers(0, 1 << 16, size=(64, 32)), "ld.shared.u32 %r1, [%r2];")
    trace("wgmma-sparse-ptx", rng.integers(0, 1 << 16, size=(64, 32)),
          "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16 {%f1}, %rd1, %rd2, %r1, 0, p, 1, 1, 0, 0;")
    trace("wgmma-distinct-descriptors", rng.integers(0, 1 << 16, size=(100000, 32)), good, warps=32, blocks=1)
    top = np.zeros((64, 32), np.int64)
    top[:, 0:8] = 0xFFFF
    trace("wgmma-top-of-window", top, good)


def _access_kinds(d: Path, cases: list) -> None:
    """A trace's list of the memory instructions no kind records (``unrecorded``) and the fields
    beside it (``records_complete``, ``complete``), hostile: wrong types, negative and huge
    counts, a huge list, control characters and a template in the texts. Each is read,
    analysed and shown, or refused with one paragraph; never a traceback."""
    shipped = sorted((ROOT / "assets" / "traces").glob("*.wvtrace"))
    base = min(shipped, key=lambda p: p.stat().st_size)
    with zipfile.ZipFile(base) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["header.json"])
    entry = {"id": 1 << 20, "ptx": "cp.async.bulk.tensor.2d.shared::cluster.global [%r1], [%rd2, {%r4, %r4}], [%r2];",
             "opcode": "cp.async.bulk.tensor.2d.shared::cluster.global", "line_no": 21, "file": "k.cu", "line": 7,
             "why": "a TMA copy", "executed": 12}

    def add(name: str, **changes) -> None:
        p = d / f"unrecorded-{name}.wvtrace"
        _zip(p, {**members, "header.json": json.dumps({**header, **changes}).encode()})
        for c in (("analyze",), ("app",), ("bench-traces",)):
            cases.append((p, c))

    add("ok", unrecorded=[entry], complete=False, records_complete=True)
    for tag, value in (("string", "x"), ("number", 7), ("null", None), ("object", {"a": 1}), ("list-of-ints", [1, 2])):
        add(f"list-{tag}", unrecorded=value, complete=False)
    for key in ("executed", "line", "line_no", "id"):
        for tag, value in (("negative", -1), ("huge", 10**30), ("string", "12"), ("float", 1.5), ("bool", True)):
            add(f"{key}-{tag}", unrecorded=[{**entry, key: value}], complete=False)
    for key in ("ptx", "why", "file", "opcode"):
        for tag, value in (("control", "\x1b]0;owned\x07\x1b[2J" + "x" * 10), ("template", "{executed} {0} %s"),
                           ("long", "y" * 100_000), ("number", 3)):
            add(f"{key}-{tag}", unrecorded=[{**entry, key: value}], complete=False)
    add("many", unrecorded=[entry] * 70_000, complete=False)
    add("records-complete-string", records_complete="yes", unrecorded=[entry])
    add("complete-true-but-ran", complete=True, unrecorded=[entry])


# ----------------------------------------------------------------------------- replay and suggest

def _replay(d: Path, cases: list) -> None:
    """``warpviz replay`` / ``suggest`` on traces whose carried source is hostile (a declaration
    of 2**80 elements, thousands of declarations, 100,000 nested ``#if``, 50,000 chained
    ``#define``s, unclosed braces, a name repeated 200,000 times, control characters) and with
    hostile options (shapes, ranges, layouts, element sizes). Each ends within the time limit
    with exit 0 or 2 and one paragraph; never a traceback."""
    d.mkdir(parents=True, exist_ok=True)
    base = ROOT / "assets" / "traces" / "transpose_tile_unpadded.wvtrace"
    with zipfile.ZipFile(base) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["header.json"])
    k = 'extern "C" __global__ void transpose_tile_padded() {'
    sources = {
        "huge-dims": k + "__shared__ float tile[1099511627775][1099511627775][1099511627775]; }",
        "many-decls": k + "".join(f"__shared__ float a{i}[32][32];" for i in range(20000)) + "}",
        "deep-if": "#if 1\n" * 100000 + k + "__shared__ float tile[32][32]; }",
        "chained-defines": "".join(f"#define D{i} (D{i - 1}+1)\n" for i in range(1, 50000)) + k
        + "__shared__ float tile[D49999][32]; }",
        "unclosed": k * 3000 + "__shared__ float tile[32",
        "name-repeated": "transpose_tile_padded(" * 200000,
        "control": k + "__shared__ float tile\x1b[2J[32][32]; /* \x1b]0;owned\x07 */ }",
        "div-zero": "#define A (1/0)\n" + k + "__shared__ float tile[A][32]; }",
        "template-dims": "template <int N> __global__ void transpose_tile_padded() { __shared__ float tile[N][N]; }",
    }
    for name, text in sources.items():
        p = d / f"replay-{name}.wvtrace"
        _zip(p, {**members, "header.json": json.dumps({**header, "sources": {"transpose.cu": text}}).encode()})
        cases.append((p, ("cli", "suggest", str(p), "--no-predict")))
        cases.append((p, ("cli", "replay", str(p), "--array", "tile", "--shape", "32,32", "--elem-bytes", "4",
                          "--layout", "pad:1")))
    options = [["--shape", "99999999999999999999,1"], ["--shape", "4194304,1"], ["--shape", "1,-3"],
               ["--shape", "2048,2048"], ["--layout", "expr:" + "(" * 5000 + "c" + ")" * 5000],
               ["--layout", "expr:c / 0"], ["--layout", "swizzle:16,24,24"], ["--layout", "xor:99999999999999999999"],
               ["--layout", "pad:1e9"], ["--layout", "\x1b[2Jpad:1"], ["--range", "0:16777216", "--shape", "1,4194304"],
               ["--range", "0x400:0x1400"], ["--elem-bytes", "3"], ["--array", "\x1b]0;x\x07"], ["--array", "t" * 300]]
    mine = d / "replay-base.wvtrace"
    shutil.copyfile(base, mine)
    for opt in options:
        argv = ["replay", str(mine), "--layout", "pad:1"]
        if "--array" not in opt and "--range" not in opt:
            argv += ["--array", "tile"]
        if "--shape" not in opt:
            argv += ["--shape", "32,32"]
        cases.append((mine, ("cli", *argv, *opt)))


# ----------------------------------------------------------------------------- data loss

def _users_folder(d: Path) -> None:
    """A folder of the user's as the attacker had it: a picture, a dot-file, a .git folder, a
    subfolder named like a picture."""
    (d / ".git").mkdir(parents=True)
    (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (d / "album.png").mkdir()
    (d / "album.png" / "a.jpg").write_bytes(b"\xff\xd8 a photo")
    (d / "holiday.png").write_bytes(b"\x89PNG my holiday")
    (d / ".notes").write_text("my notes")


KEEP_FOLDER = """
import sys, numpy as np, warpviz
from pathlib import Path
ptx = Path(sys.argv[1]).read_text()
x = np.ones(4096, np.float32)
try:
    warpviz.trace_ptx(ptx, "add_kernel", (4,), (128,), [x, x, x, 4096, None, None], keep_folder=sys.argv[2])
except warpviz.TraceFailed as err:
    print(f"warpviz: {err}", file=sys.stderr)
    sys.exit(2)
"""

VIDEO_SAVE = """
import sys, warpviz
from viz.export import ExportError
try:
    warpviz.scenario("transpose-tile").animation(9, "1-2", size=(160, 90)).save(sys.argv[1])
except ExportError as err:
    print(f"warpviz: {err}", file=sys.stderr)
    sys.exit(2)
"""


def _data_loss(d: Path, cases: list) -> None:
    """Writes of user data that must not delete or replace what warpviz did not make. Each
    case is a ``dataloss`` command: the driver (``DATALOSS_DRIVER``) records the files it
    names, runs the command, and fails the case (exit 3) when any of them lost a byte,
    changed kind (a FIFO, a link) or when something new appeared beside them that is not
    warpviz's own output."""
    def add(name: str, argv: list, keep: list[str], limit_kb: int | None = None, python: str | None = None,
            beside: list[str] | None = None) -> None:
        spec = {"argv": argv, "keep": keep, "limit_kb": limit_kb, "python": python, "beside": beside or []}
        p = d / f"{name}.case.json"
        p.write_text(json.dumps(spec, indent=1))
        cases.append((p, ("dataloss",)))

    ex = ["-m", "viz.cli", "export", "transpose-tile", "-i", "9", "--frames", "1-3", "--size", "320x180"]
    _users_folder(d / "pics")
    add("export-into-users-folder", [*ex, "--out", "pics/"], ["pics"])
    _users_folder(d / "pics-frame")
    (d / "pics-frame" / "frame_00002.png").write_bytes(b"the user's own frame")
    add("export-over-users-frame", [*ex, "--out", "pics-frame/"], ["pics-frame"])
    (d / "real").mkdir()
    (d / "real" / "shot.png").write_bytes(b"\x89PNG the user's only picture")    # only PNGs: the old code swapped it
    (d / "linkpics").symlink_to("real")
    add("export-into-linked-folder", [*ex, "--out", "linkpics/"], ["linkpics", "real"], beside=["linkpics", "real"])
    _users_folder(d / "video-save")
    add("video-save-into-users-folder", [], ["video-save"], python=VIDEO_SAVE + "\n#video-save/")
    for name in ("fifo.png", "fifo.mp4", "fifo.gif", "fifo.svg"):
        os.mkfifo(d / name)
        add(f"export-to-{name}", [*ex, "--out", name], [name])
    (d / "null.png").symlink_to("/dev/null")
    add("export-to-dev-null-link", [*ex, "--out", "null.png"], ["null.png"])
    os.mkfifo(d / "layout-fifo.png")
    add("layout-to-fifo", ["-m", "viz.cli", "layout", "(8,8):(8,1)", "--out", "layout-fifo.png"], ["layout-fifo.png"])
    os.mkfifo(d / "matrix-fifo.svg")
    add("matrix-to-fifo", ["-m", "viz.cli", "matrix", "ldmatrix-x4-tile", "--out", "matrix-fifo.svg"],
        ["matrix-fifo.svg"])
    os.mkfifo(d / "bench-fifo.json")
    add("bench-to-fifo", ["-m", "viz.cli", "bench", "--traces", str(ROOT / "assets" / "traces" / "copy_float.wvtrace"),
                          "--dry-run", "--out", "bench-fifo.json"], ["bench-fifo.json"])
    (d / "good.mp4").write_bytes(b"the previous good video")
    add("mp4-under-ulimit-f", [*ex, "--out", "good.mp4"], ["good.mp4"], limit_kb=8)
    (d / "good-seq").mkdir()
    add("png-sequence-under-ulimit-f", [*ex, "--out", "good-seq/"], ["good-seq"], limit_kb=8)
    (d / "keep").mkdir()
    (d / "keep" / "add_kernel.ptx").write_text("// the user's kernel")
    (d / "keep" / "arg1.npy").write_bytes(b"the user's data")
    add("trace-ptx-keep-folder", [], ["keep"],
        python=KEEP_FOLDER + f"\n#{ROOT / 'tests' / 'data' / 'ptx' / 'triton_add.ptx'} keep")


DATALOSS_DRIVER = r"""
import hashlib, json, os, resource, stat, subprocess, sys
spec = json.load(open(sys.argv[1]))
here = os.path.dirname(os.path.abspath(sys.argv[1]))
def walk(p):
    out = {}
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        return {p: ("link", os.readlink(p))}
    if stat.S_ISDIR(st.st_mode):
        out[p] = ("dir", None)
        for n in os.listdir(p):
            out.update(walk(os.path.join(p, n)))
        return out
    if stat.S_ISREG(st.st_mode):
        return {p: ("file", hashlib.sha256(open(p, "rb").read()).hexdigest())}
    return {p: (stat.S_IFMT(st.st_mode), None)}
os.chdir(here)
keep = [k for k in spec["keep"]]
before = {}
for k in keep:
    before.update(walk(k))
listing = sorted(os.listdir("."))
def limit():
    os.setsid()
    if spec["limit_kb"]:
        resource.setrlimit(resource.RLIMIT_FSIZE, (spec["limit_kb"] * 1024, resource.RLIM_INFINITY))
if spec["python"]:
    code, _, args = spec["python"].rpartition("\n#")
    argv = [sys.executable, "-c", code, *args.split()]
else:
    argv = [sys.executable, *spec["argv"]]
p = subprocess.run(argv, capture_output=True, text=True, errors="replace", preexec_fn=limit, timeout=25)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
after = {}
for k in keep:
    after.update(walk(k))
lost = [f"{k}: {v} -> {after.get(k)}" for k, v in before.items() if after.get(k) != v]
stems = tuple("." + k.rstrip("/").split(".")[0] for k in keep)     # .linkpics.old-*, .good.*.part.mp4 ...
new_beside = [n for n in sorted(os.listdir(".")) if n not in listing and n.startswith(stems)]
if lost or new_beside:
    print("DATA LOSS: " + "; ".join(lost + [f"new beside: {n}" for n in new_beside]), file=sys.stderr)
    sys.exit(3)
sys.exit(p.returncode)
"""


# ----------------------------------------------------------------------------- outside: reading outside what was named, terminal control

SECRET = "WARPVIZ-HOSTILE-SECRET-7f3a"      # in files no case names: never printed, drawn or carried
TERMINAL = ("\x1b", "\x07", "\x9b", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
            "\u2068", "\u2069")
EVIL = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07\u202eevil\u2066x\x9b31m"
SHORT = 50_000                              # characters an "-short" case may print


def _outside(d: Path, cases: list) -> None:
    """A scenario's ``compare`` outside its folder (the secret's title
    must not be drawn), a file name that would inject lines into generated CUDA, a launch file
    whose ``#line`` names ``.env`` (the recorded trace must not carry it), and files whose
    titles, names and device names hold terminal escapes, bidi overrides or huge names."""
    import numpy as np  # noqa: F401  (the traces' arrays are copied as they are)

    root = d.parent
    secret = root / "secret-outside.toml"
    secret.write_text(SCENARIO.replace('"hostile"', json.dumps(SECRET)))
    (root / ".env").write_text(f"API_KEY={SECRET}\n")

    def add(name: str, text: str | bytes, *cmds) -> Path:
        p = d / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        for c in cmds:
            cases.append((p, c))
        return p

    scn = ("analyze",), ("export-compare",), ("app",)
    for tag, value in (("absolute", str(secret)), ("dotdot", "../secret-outside.toml"),
                       ("tilde", "~/secret-outside.toml"), ("deep-dotdot", "../../../../../../" + str(secret)),
                       ("dot", "..")):
        add(f"compare-{tag}.toml", SCENARIO.replace('title = "hostile"', f'title = "hostile"\ncompare = {json.dumps(value)}'),
            *scn)
    for tag, name in (("newline", "x\n#error pwned\n"), ("cr", "x\r#error pwned"), ("backslash", "x\\"),
                      ("trigraph", "x??/"), ("ls", "x\u2028#error pwned")):
        try:
            add(f"{name}.toml", SCENARIO.replace('"hostile"', json.dumps("t\n#error title\n*/ /*")),
                ("analyze",), ("validate",))
        except OSError:
            pass
    add("title-escapes.toml", SCENARIO.replace('"hostile"', json.dumps("T" + EVIL)), ("analyze-short",), ("export",),
        ("app",))
    add("title-huge.toml", SCENARIO.replace('"hostile"', json.dumps("T" + EVIL + "L" * 100_000)), ("analyze-short",))
    add("compare-escapes.toml", SCENARIO.replace('title = "hostile"', f'title = "h"\ncompare = {json.dumps(EVIL)}'),
        ("analyze-short",))

    # a shared trace whose texts steer the terminal
    base = ROOT / "assets" / "traces" / "transpose_pad.wvtrace"
    with zipfile.ZipFile(base) as z:
        members = {n: z.read(n) for n in z.namelist()}
    h = json.loads(members["header.json"])
    h.update(title="T" + EVIL, name="n" + EVIL, notes="N" + EVIL, kernel="K" * 4000,
             gpu={**h["gpu"], "name": "G" + EVIL})
    src = h["source_name"]
    h["sources"] = {src: h["sources"][src].replace("\n", "\n// " + EVIL + "X" * 4000 + "\n", 20)}
    for ins in h["instructions"]:
        ins.update(ptx=ins["ptx"] + EVIL + "P" * 4000, file="f" + EVIL)
    members["header.json"] = json.dumps(h).encode()
    p = d / "escapes.wvtrace"
    _zip(p, members)
    for c in (("analyze-short",), ("export",), ("app",)):
        cases.append((p, c))

    # a PTX whose 24 entry names are 100,000 characters each (2.4 million in a message; names
    # of 400,000 each took more than 30 s to parse on a loaded machine: see the hangs below)
    ents = []
    for k in range(24):
        name = f"k{k}_" + "A" * 100_000
        ents.append(f".visible .entry {name}(\n\t.param .u64 {name}_p0\n)\n{{\n\tret;\n}}\n")
    (d / "huge-names.ptx").write_text(".version 8.0\n.target sm_80\n.address_size 64\n\n" + "\n".join(ents))
    add("huge-names.launch.toml", 'format = 2\nptx = "huge-names.ptx"\nkernel = "nope"\nblock = [32]\ngrid = [1]\n'
        '[[arg]]\ntype = "float*"\ncount = 32\n', ("trace-short",), ("bench-traces",))

    # a CUDA source whose line table says its store is a line of .env (inside and outside the folder)
    lf = d / "dotenv"
    lf.mkdir()
    (lf / ".env").write_text(f"API_KEY={SECRET}\n")
    (lf / "notes.txt").write_text(f"{SECRET}\n")
    (lf / "k.cu").write_text(KERNEL.replace("    if (i < n) out[i] = VAL;\n",
                                            f'#line 1 "{lf / ".env"}"\n    if (i < n) out[i] = VAL;\n'
                                            f'#line 1 "{lf / "notes.txt"}"\n    if (i < n) out[i] = VAL + 1.0f;\n'
                                            f'#line 1 "{root / ".env"}"\n    if (i < n) out[i] = VAL + 2.0f;\n'))
    p = lf / "k.launch.toml"
    p.write_text(LAUNCH)
    for c in (("trace",), ("bench-dry",)):
        cases.append((p, c))

    # a calibration file and a results file whose names steer the terminal
    doc = json.loads((ROOT / "assets" / "calibration" / "nvidia-h100-80gb-hbm3.json").read_text())
    doc["device"]["name"] = "H100" + EVIL + "N" * 100_000
    add("calibration-escapes.json", json.dumps(doc), ("calibrate-show",))
    doc = json.loads((ROOT / "assets" / "measurements" / "h100-traces.json").read_text())
    first = next(iter(doc["traces"]))
    doc["traces"] = {first + EVIL: doc["traces"][first], **doc["traces"]}
    add("results-escapes.json", json.dumps(doc), ("bench-show",))


def _secret_in(path: Path) -> bool:
    """Does a file the case wrote hold SECRET (a trace: in any of its zip members)?"""
    try:
        if path.stat().st_size > 256 << 20 or not path.is_file():
            return False
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                return any(SECRET.encode() in z.read(n) for n in z.namelist() if z.getinfo(n).file_size < 256 << 20)
        return SECRET.encode() in path.read_bytes()
    except (OSError, zipfile.BadZipFile, RuntimeError):
        return False


def _outside_problems(c: list, cmd: list, out: str, err: str, scratch: Path, since: float) -> list[str]:
    """The checks of ``_outside``'s cases, and two for every case: what the warpviz command
    line (``cmd``) prints steers no terminal (a script's own print of an API error is the
    script's), and no case reads, prints, draws or carries SECRET (in the files of its
    scratch folder written since ``since``: a run before may have left some)."""
    problems = []
    text = out + err
    cli = len(cmd) > 2 and cmd[1] == "-m" and cmd[2] in ("viz.cli", "warpviz")
    if cli and any(ch in text for ch in TERMINAL):
        problems.append("terminal control characters printed raw")
    if c[0].endswith("-short") and len(text) > SHORT:
        problems.append(f"printed {len(text):,} characters (more than {SHORT:,})")
    if SECRET in text:
        problems.append("printed a file it was not given")
    if "error: #error" in text:
        problems.append("a line injected into generated CUDA reached nvcc")
    for f in scratch.rglob("*"):
        if f.is_file() and not f.is_symlink() and f.stat().st_mtime >= since - 1 and _secret_in(f):
            problems.append(f"wrote a file it was not given into {f.name}")
    return problems
# ----------------------------------------------------------------------------- hangs

PTX_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
PTX_ENTRY = ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n"
PTX_LAUNCH = """\
format = 2
title = "hostile PTX"
ptx = "{ptx}"
kernel = "k"
block = [32]
grid = [1]

[[arg]]
type = "float*"
count = 32
"""


def _hangs(d: Path, cases: list) -> None:
    """Inputs that made a parser backtrack or loop quadratically, or a reader wait on a FIFO:
    PTX of blank lines or of crafted lines, ``--blocks`` of 16,000 ranges, results and
    calibration files that are FIFOs or hostile JSON, scenarios with thousands of struct
    fields or [[access]] tables. Each must end within the time limit with exit 0 or 2."""
    ptx = {
        "newlines": "\n" * 200_000,
        "blank-lines": "   \n" * 1_000_000,
        "version-no-target": ".version 8.0\n" + "\n" * 200_000,
        "long-line": PTX_HEAD + PTX_ENTRY + "a" * 200_000 + "\n}\n",
        "long-opcode": PTX_HEAD + PTX_ENTRY + "ld.global" + ".a" * 100_000 + "\n}\n",
        "open-brackets": PTX_HEAD + PTX_ENTRY + "ld.global.f32 %f1, " + "[" * 200_000 + ";\n}\n",
        "open-func-parens": PTX_HEAD + ".func (" * 50_000 + "\n",
        "semicolons": PTX_HEAD + PTX_ENTRY + "ld.global.f32 %f1, [%rd1]" + ";" * 200_000 + "x\n}\n",
        "unused-atomics": PTX_HEAD + PTX_ENTRY + "".join(f"atom.global.add.u32 %r{i}, [%rd1], 1;\n"
                                                         for i in range(20_000)) + "}\n",
        "too-many-lines": PTX_HEAD + PTX_ENTRY + "\n" * 600_000 + "}\n",
    }
    for name, text in ptx.items():
        (d / f"{name}.ptx").write_text(text)
        p = d / f"ptx-{name}.launch.toml"
        p.write_text(PTX_LAUNCH.format(ptx=f"{name}.ptx"))
        for c in (("trace",), ("bench-dry",), ("app",)):
            cases.append((p, c))
    ok = d / "k.cu"
    ok.write_text(KERNEL)
    blocks = d / "blocks.launch.toml"
    blocks.write_text(LAUNCH.replace("grid = [1]", "grid = [65536]"))
    cases.append((blocks, ("trace-blocks", ",".join(["0-65535"] * 16_000))))
    cases.append((blocks, ("trace-blocks", ",".join(["0"] * 300))))
    cases.append((blocks, ("trace-blocks", "9" * 5000)))
    results_doc = json.loads((ROOT / "assets" / "measurements" / "h100-traces.json").read_text())
    entry = next(iter(results_doc["traces"].values()))
    entry["timing"]["median_ms"] = "fast"
    files = {
        "results-deep.json": "[" * 100_000 + "]" * 100_000,
        "results-not-utf8.json": b"{\"format\": \"\xff\"}",
        "results-empty.json": "",
        "results-huge-int.json": '{"format": "warpviz-measurements", "version": ' + "9" * 5000 + "}",
        "results-string-number.json": json.dumps(results_doc),
        "results-nan.json": '{"format": NaN}',
    }
    for name, text in files.items():
        p = d / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        cases.append((p, ("bench-show",)))
        cases.append((p, ("calibrate-show",)))
    fifo = d / "results-fifo.json"
    os.mkfifo(fifo)
    cases.append((fifo, ("bench-show",)))
    cases.append((fifo, ("calibrate-show",)))
    (d / "results-devzero.json").symlink_to("/dev/zero")
    cases.append((d / "results-devzero.json", ("bench-show",)))
    cases.append((d / "results-devzero.json", ("calibrate-show",)))
    fields = "fields = [" + ", ".join(f'"f{i}:float"' for i in range(5000)) + "]"
    sc = SCENARIO.replace('type = "float", shape = [1024] }', 'type = "float", shape = [1024] }\n[arrays.p]\n'
                          'space = "global"\nshape = [1024]\n' + fields)
    (d / "fields-5000.toml").write_text(sc)
    cases.append((d / "fields-5000.toml", ("analyze",)))
    many = SCENARIO + "\n".join(f'[[access]]\nop = "load"\nfor = {{ i = "0:8" }}\nat = "s[(threadIdx.x + i + {k}) % 1024]"'
                                 for k in range(13_000)) + "\n"
    (d / "accesses-13000-loops.toml").write_text(many)
    cases.append((d / "accesses-13000-loops.toml", ("analyze",)))
    cases.append((d / "accesses-13000-loops.toml", ("app",)))


def _tma_traces(d: Path, cases: list) -> None:
    """Hostile TMA records (flags 2 and their ``payload`` array): a payload of the
    wrong shape or dtype, flags 2 on a plain load, an issuing lane whose predicate did not
    hold, a tensor map of garbage bytes, a payload row for a record that has none."""
    import numpy as np

    shipped = sorted((ROOT / "assets" / "traces").glob("*.wvtrace"))
    base = min(shipped, key=lambda p: p.stat().st_size)
    with zipfile.ZipFile(base) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["header.json"])
    flags = np.load(io.BytesIO(members["flags.npy"])) if "flags.npy" in members else \
        np.zeros(len(np.load(io.BytesIO(members["instr.npy"]))), np.uint8)
    n = len(flags)

    def npy(a) -> bytes:
        b = io.BytesIO()
        np.lib.format.write_array(b, np.asarray(a), allow_pickle=False)
        return b.getvalue()

    def add(name: str, **changes: bytes) -> None:
        p = d / f"{name}.wvtrace"
        _zip(p, {**members, **changes})
        for c in (("analyze",), ("export",), ("app",)):
            cases.append((p, c))

    tma_header = dict(header)
    ins = [dict(i) for i in header["instructions"]]
    ins[0] = dict(ins[0], kind="tma", opcode="cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                  ptx="cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, "
                      "{%r2, %r3}], [%r4];", width=16)
    tma_header["instructions"] = ins
    f2 = flags.copy()
    f2[:] = 2
    add("tma-payload-missing", **{"flags.npy": npy(f2)})
    add("tma-payload-wrong-shape", **{"flags.npy": npy(f2), "payload.npy": npy(np.zeros((n, 31), np.uint64))})
    add("tma-payload-float", **{"flags.npy": npy(f2), "payload.npy": npy(np.zeros((n, 32), np.float64))})
    add("tma-payload-extra-rows", **{"payload.npy": npy(np.zeros((3, 32), np.uint64))})
    add("tma-flags-three", **{"flags.npy": npy(np.full(n, 3, np.uint8))})
    garbage = np.random.default_rng(30).integers(0, 2**63, (n, 32), dtype=np.int64).astype(np.uint64)
    instr = np.load(io.BytesIO(members["instr.npy"]))
    f3 = flags.copy()
    f3[instr == 0] = 2
    m = int((f3 == 2).sum())
    add("tma-garbage-map", **{"header.json": json.dumps(tma_header).encode(), "flags.npy": npy(f3),
                              "payload.npy": npy(garbage[:m]),
                              "shared.npy": npy(np.zeros(n, np.uint32)), "global.npy": npy(np.zeros(n, np.uint32)),
                              "base.npy": npy(np.zeros(n, np.uint64)),
                              "offset.npy": npy(np.zeros((n, 32), np.int32))})
    add("tma-flags-on-a-load", **{"flags.npy": npy(f3), "payload.npy": npy(garbage[:m])})


def _operand_replay(d: Path, cases: list) -> None:
    """Replay of records that name shared memory by their operands (TMA boxes, wgmma
    descriptors: ``TraceForm.replay``) on hostile traces: every hostile TMA and wgmma trace of
    ``_tma_traces`` and ``_wgmma`` replayed with a layout over the shared window, and the shipped
    TMA and wgmma traces replayed over a 16 MiB range of 4 Mi elements. Each ends within the time
    limit with exit 0 or 2 and one paragraph; never a traceback."""
    made: list = []
    for sub in ("tma", "wgmma"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    _tma_traces(d / "tma", made)
    _wgmma(d / "wgmma", made)
    traces = sorted({p for p, _c in made if p.suffix == ".wvtrace"})
    for p in traces:
        cases.append((p, ("cli", "replay", str(p), "--range", "1024:9216", "--shape", "64,64", "--elem-bytes", "2",
                          "--layout", "pad:8")))
    for name in ("tma_copy_triton", "triton_wgmma_matmul"):
        p = d / f"{name}.wvtrace"
        shutil.copyfile(ROOT / "assets" / "traces" / f"{name}.wvtrace", p)
        cases.append((p, ("cli", "replay", str(p), "--range", "0:16777216", "--shape", "1,4194304", "--elem-bytes",
                          "4", "--layout", "pad:1")))
        cases.append((p, ("cli", "replay", str(p), "--range", "1024:9216", "--shape", "64,64", "--elem-bytes", "2",
                          "--layout", "expr:(c * 7 + r) % 64")))
        cases.append((p, ("cli", "suggest", str(p), "--no-predict")))


def make(out: Path) -> list:
    if out.exists():
        shutil.rmtree(out)
    cases: list = []
    markers = out / MARKER_DIR_NAME
    markers.mkdir(parents=True)
    for kind, fn in (("scenarios", _scenarios), ("launch", None), ("traces", _traces), ("outside", _outside),
                     ("hangs", _hangs), ("wgmma", _wgmma), ("tma", _tma_traces)):
        d = out / kind
        d.mkdir()
        if kind == "launch":
            _launch_files(d, markers, cases)
        else:
            fn(d, cases)
    _python_habits(out / "words", cases)
    _lectures(out / "lectures", cases)
    _gpu_import(out / "gpuimport", cases)
    _args(out / "args", cases)
    _pictures(out / "pictures", cases)
    (out / "dataloss").mkdir()
    _data_loss(out / "dataloss", cases)
    (out / "kinds").mkdir()
    _access_kinds(out / "kinds", cases)
    _replay(out / "replay", cases)
    _tma_scenarios(out / "tma_scenarios", cases)
    _gpus(out / "gpus", cases)
    _operand_replay(out / "operand_replay", cases)
    _tensor_maps(out / "tensormaps", markers, cases)
    (out / "cases.json").write_text(json.dumps([[str(p.relative_to(out)), list(c)] for p, c in cases], indent=0))
    print(f"{len(cases)} cases in {out}")
    return cases


def _tensor_maps(d: Path, markers: Path, cases: list) -> None:
    """Host-built tensor maps, named buffers and structures passed by value in launch files
    (viz/trace/tensormaps.py): maps that reach past their buffer (the TMA would
    read outside warpviz's allocation), bad strides, boxes, swizzles and enums, overlapping or
    misaligned struct fields, pointers past their buffer, names that try a shell, huge
    structures and field lists. Each must exit 2 with one paragraph (``trace`` checks the
    file before nvcc or the GPU; ``bench-dry`` and ``app`` read it too)."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "k.cu").write_text(KERNEL)
    head = 'format = 2\nsource = "k.cu"\nkernel = "k"\nblock = [32]\ngrid = [1]\n'
    buf = '[[buffer]]\nname = "A"\ntype = "half*"\ncount = 65536\nfill = "random"\n'
    tmap = ('[[tensormap]]\nname = "mA"\ntensor = "A"\ndtype = "float16"\ndims = [256, 256]\nstrides = [512]\n'
            'box = [64, 128]\nswizzle = "128B"\n')
    st = ('[[arg]]\ntype = "struct"\nbytes = 256\nalign = 128\n[[arg.field]]\noffset = 0\nmap = "mA"\n'
          '[[arg.field]]\noffset = 128\npointer = "A"\n')

    def add(name: str, text: str) -> None:
        p = d / f"{name}.launch.toml"
        p.write_text(text)
        for c in (("trace",), ("bench-dry",), ("app",)):
            cases.append((p, c))

    m = str(markers / "tensormap-name")
    add("map-past-buffer", head + buf + tmap.replace("[256, 256]", "[256, 4294967296]") + st)
    add("map-stride-huge", head + buf + tmap.replace("[512]", "[1099511627776]") + st)
    add("map-stride-odd", head + buf + tmap.replace("[512]", "[520]") + st)
    add("map-box-zero", head + buf + tmap.replace("[64, 128]", "[0, 128]") + st)
    add("map-rank-9", head + buf + tmap.replace("[256, 256]", "[1, 1, 1, 1, 1, 1, 1, 1, 1]") + st)
    add("map-dtype-shell", head + buf + tmap.replace('"float16"', json.dumps(f"$(touch {m})")) + st)
    add("map-name-shell", head + buf + tmap.replace('name = "mA"', f'name = "$(touch {m})"') + st)
    add("map-swizzle-enum", head + buf + tmap.replace('"128B"', '"7"') + st)
    add("map-offset-negative", head + buf + tmap + "offset = -16\n" + st)
    add("map-dims-text", head + buf + tmap.replace("[256, 256]", '["256", "256"]') + st)
    add("map-missing-buffer", head + tmap + st)
    add("struct-overlap", head + buf + tmap + st + '[[arg.field]]\noffset = 130\ntype = "short"\nvalue = 1\n')
    add("struct-field-past-end", head + buf + tmap + st.replace("bytes = 256", "bytes = 130"))
    add("struct-huge", head + buf + tmap + st.replace("bytes = 256", "bytes = 4294967296"))
    add("struct-hex-bomb", head + buf + tmap + st.replace("align = 128", 'align = 128\nhex = "' + "ff" * 40000 + '"'))
    add("struct-many-fields", head + buf + tmap + '[[arg]]\ntype = "struct"\nbytes = 32764\nalign = 4\n'
        + "".join(f'[[arg.field]]\noffset = {4 * k}\ntype = "int"\nvalue = {k}\n' for k in range(1100)))
    add("pointer-past-buffer", head + buf + '[[arg]]\ntype = "pointer"\nbuffer = "A"\noffset = 999999999999\n')
    add("buffer-file-traversal", head + buf.replace('fill = "random"', 'fill = "file:../../../../etc/passwd"') + tmap + st)
    add("buffers-too-many", head + "".join(buf.replace('"A"', f'"B{k}"') for k in range(300)) + st)


def _tma_scenarios(d: Path, cases: list) -> None:
    """Scenario files with a TMA store or a box past the tensor's edge,
    hostile: the store's keys swapped or of the wrong type, boxes of three sides, booleans,
    floats, huge and empty, a box origin outside the tensor or depending on the thread, a
    huge grid of edge boxes. Each is analysed (or refused with one paragraph, exit 2), shown
    and exported; never a traceback."""
    d.mkdir(parents=True, exist_ok=True)
    base = (ROOT / "assets" / "scenarios" / "tma-oob-edge.toml").read_text(encoding="utf-8")
    store = 'op   = "tma.store"\nat   = "C[blockIdx.y * 64][blockIdx.x * 32]"\nfrom = "tile"'
    assert store in base

    def add(name: str, text: str) -> None:
        p = d / f"{name}.toml"
        p.write_text(text, encoding="utf-8")
        for c in (("analyze",), ("export",), ("app",)):
            cases.append((p, c))

    add("ok", base)
    add("keys-swapped", base.replace(store, 'op = "tma.store"\nat = "tile"\nfrom = "C[0][0]"'))
    add("from-number", base.replace(store, 'op = "tma.store"\nat = "C[0][0]"\nfrom = 12'))
    add("at-table", base.replace(store, 'op = "tma.store"\nat = { x = 1 }\nfrom = "tile"'))
    add("at-thread", base.replace(store, store.replace("blockIdx.x * 32]", "tid]")))
    add("at-outside", base.replace(store, store.replace("blockIdx.x * 32]", "blockIdx.x * 32 + 96]")))
    add("at-negative", base.replace(store, store.replace("[blockIdx.y * 64]", "[blockIdx.y * 64 - 64]")))
    add("when", base.replace(store, store + '\nwhen = "tid == 0"'))
    for tag, box in (("3d", "[64, 32, 2]"), ("bool", "[true, 32]"), ("float", "[64.0, 32]"), ("huge", "[9" * 1 +
                     "9" * 30 + ", 32]"), ("empty", "[]"), ("string", '"64x32"'), ("negative", "[-64, 32]"),
                     ("nested", "[[64], [32]]")):
        add(f"box-{tag}", base.replace(store, store + f"\nbox = {box}"))
    add("huge-grid", base.replace("grid  = [4, 2]", "grid  = [65535, 65535]"))


def _lectures(d: Path, cases: list) -> None:
    """A scenario's ``focus``, a lesson's steps and their words, a trace
    whose sources make the inline-asm line lookup and the unrecorded-instruction scan work
    hard. Scenarios go to ``analyze``, ``export`` and the app; lessons to the app's data folder
    (Playback -> Lessons reads them); traces to ``analyze`` and the app."""
    d.mkdir(parents=True, exist_ok=True)
    for tag, value in (("zero", "0"), ("past-end", "3"), ("huge", "99999999999999999999"), ("negative", "-1"),
                       ("text", '"9"'), ("bool", "true"), ("float", "1.5"), ("table", "{ a = 1 }"),
                       ("array", "[1]"), ("long-text", '"' + "9" * 100000 + '"')):
        p = d / f"focus-{tag}.toml"
        p.write_text(SCENARIO.replace("[launch]", f"focus = {value}\n[launch]", 1), "utf-8")
        for c in (("analyze",), ("export",), ("app",)):
            cases.append((p, c))
    data = d / "data-lessons"
    (data / "lessons").mkdir(parents=True)
    steps = {
        "unknown-field": 'say = "{__class__.__mro__}"', "format-spec": 'say = "{sectors:>99999999}"',
        "huge-say": 'say = "' + "x" * 300000 + '"', "brace-bomb": 'say = "' + "{" * 100000 + '"',
        "nested": 'say = "{{sectors}}"', "say-table": "say = { a = 1 }", "bad-instruction": "instruction = 0",
        "traversal": 'scenario = "../../../../etc/passwd"', "fifo-name": 'scenario = "/dev/zero"',
    }
    for name, line in steps.items():
        scen = "" if line.startswith("scenario") else 'scenario = "coalesced"\n'
        (data / "lessons" / f"{name}.toml").write_text(f'title = "{name}"\n[[step]]\n{scen}{line}\n', "utf-8")
    (data / "lessons" / "both.toml").write_text('scenarios = ["coalesced"]\n[[step]]\nscenario = "coalesced"\n')
    (data / "lessons" / "many-steps.toml").write_text('[[step]]\nscenario = "coalesced"\n' * 600, "utf-8")
    cases.append((data, ("app-data",)))
    cases.append((data, ("lessons-app",)))
    shipped = ROOT / "assets" / "traces" / "ldmatrix_cpasync.wvtrace"
    with zipfile.ZipFile(shipped) as z:
        members = {n: z.read(n) for n in z.namelist()}
    header = json.loads(members["header.json"])
    name = next(iter(header["sources"]))
    asm_walls = {
        # the .loc line inside a long asm statement whose lines never name the mnemonic
        "asm-wall": "asm(\n" + '"nop;"\n' * 50000,
        # a carried PTX of many wgmma lines, each with its own .loc
        "wgmma-flood": "\n".join(f".loc 1 {k} 1\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{}};"
                                 for k in range(1, 60000)),
    }
    for tag, text in asm_walls.items():
        h = json.loads(json.dumps(header))
        if tag == "wgmma-flood":
            h["sources"] = {**h["sources"], "kernel.ptx": text}
        else:
            h["sources"] = {name: text}
            for ins in h["instructions"]:
                ins["line"] = 50000
        p = d / f"{tag}.wvtrace"
        _zip(p, {**members, "header.json": json.dumps(h).encode()})
        for c in (("analyze",), ("app",)):
            cases.append((p, c))
def _pictures(d: Path, cases: list) -> None:
    """The pictures' rows and sizes: ``--rows`` words that are not row
    names (exit 2, one line naming the words it takes), a title far too long for a
    comparison half at the smallest window canvas, and the smallest canvas the 12 px rule
    covers; each exits 0 or 2, never a traceback."""
    d.mkdir(parents=True, exist_ok=True)
    anchor = d / "README"
    anchor.write_text("picture cases: the file is only an anchor; the command line is the case\n")
    for rows in ("bogus", "x" * 5000, "lane,lane,lane", ",", "", "\x1b[2J\x1b]0;owned\x07", "addr;rm -rf ~", "ALL",
                 "all", "lane,index"):
        cases.append((anchor, ("cli", "export", "transpose-tile", "-i", "9", "--frames", "1", "--size", "1100x650",
                               "--rows", rows, "--out", "{scratch}/r.png")))
    src = (ROOT / "assets" / "scenarios" / "transpose-tile.toml").read_text("utf-8")
    long_title = "Transpose " + "through a very long title " * 400
    p = d / "long-title.toml"
    p.write_text(src.replace('title = "Transpose through a shared tile (unpadded)"', f'title = "{long_title}"', 1)
                 .replace('compare = "transpose-tile-pad"\n', "", 1), encoding="utf-8")
    cases.append((anchor, ("cli", "export", str(p), "--compare-set", "PAD=1", "-i", "9", "--frames", "1", "--size",
                           "1100x650", "--title-card", "--out", "{scratch}/t.gif")))
    for size in ("1100x650", "320x180", "1x1"):
        cases.append((anchor, ("cli", "export", "transpose-tile", "--compare", "transpose-tile-pad", "-i", "9",
                               "--frames", "1", "--size", size, "--out", "{scratch}/c.png")))


def _python_habits(d: Path, cases: list) -> None:
    """Words on the command line where a file or a name goes (the Python user's
    habits): an unknown first word is a usage error (exit 2), never the app (which would run
    until the time limit here); a shipped trace's name never reaches outside assets/traces;
    control characters are not echoed. The case's file is a placeholder: the word is the input."""
    d.mkdir(parents=True, exist_ok=True)
    words = ["bogus", "../../../../etc/passwd", "transpose_pad/../../../x", "..", ".wvtrace", "-", "x" * 5000,
             "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b[2J\x1b]0;owned\x07", "\u202etxt.exe", "$(touch pwned)", "a;b|c",
             "transpose_pad\n--json", "~/.ssh/id_rsa.wvtrace", "../traces/transpose_pad", "CON", "nul.toml"]
    for k, word in enumerate(words):
        placeholder = d / f"word{k:02d}.txt"
        placeholder.write_text(word, encoding="utf-8", errors="replace")
        for what in ("word-app", "word-analyze", "word-export", "word-matrix", "word-trace", "word-open-trace"):
            if what == "word-app" and word.startswith("../../"):
                continue          # a file that exists (/etc/passwd): the app opens it and says what is wrong
            cases.append((placeholder, (what, word)))


def _gpu_import(d: Path, cases: list) -> None:
    """JSON files the GPU panel's Import is given that are not results files.
    The panel says what a probe record is (its ``what``, cut short, as plain text: no markup
    reaches the label), keeps the measurements it had, and a later good import clears the
    message."""
    d.mkdir(parents=True, exist_ok=True)
    docs = {
        "probe-markup.json": {"what": "<img src=x onerror=alert(1)><b>bold</b> " + "probe " * 2000, "cases": []},
        "probe-what-list.json": {"what": ["not", "a", "text"], "device": "x"},
        "probe-control.json": {"what": "\x1b]52;c;cm0gLXJmIH4=\x07 probe\u202e", "validate": {}},
        "top-list.json": [{"what": "a list at the top"}],
        "format-other.json": {"format": "warpviz-measurements", "version": 99, "what": "newer"},
        "about-only.json": {"about": "x" * 100000},
    }
    for name, doc in docs.items():
        f = d / name
        f.write_text(json.dumps(doc), encoding="utf-8")
        cases.append((f, ("gpu-import",)))


# ----------------------------------------------------------------------------- running

GPU_IMPORT_DRIVER = r"""
import sys, traceback
errors = []
sys.excepthook = lambda t, v, tb: errors.append("".join(traceback.format_exception(t, v, tb)))
from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, Qt
from viz.app.main import make_app
app = make_app()
from viz.app.window import MainWindow
w = MainWindow("transpose-tile")
w.show()
deadline = QDeadlineTimer(20000)
while w.gpu_panel is None and not deadline.hasExpired():
    QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
p = w.gpu_panel
before = p.measurements
ok = p.load_measurements(sys.argv[1])
said = p.status.text()
print(("imported: " if ok else "refused: ") + said.replace("\n", " ")[:300])
bad = []
if p.status.textFormat() != Qt.TextFormat.PlainText:
    bad.append("the status label would render the file's markup")
if not ok and p.measurements is not before:
    bad.append("a refused file replaced the measurements")
from viz.app.gpu_panel import plain_for_qt
from PySide6 import QtGui
doc = QtGui.QTextDocument()
shown = plain_for_qt(said)
doc.setHtml(shown) if QtGui.Qt.mightBeRichText(shown) else doc.setPlainText(shown)
if doc.toPlainText().replace("\u2029", "\n") != said:
    bad.append("the warning box would not show the message as written (markup rendered)")
if not ok and len(said) > 4000:
    bad.append(f"the message is {len(said)} characters long")
if p.load_measurements(None) and p.status.text() and not ok:
    pass                       # the shipped file (path None) leaves the last message as it is
w.close()
if errors or bad:
    sys.stderr.write("\n".join(errors + bad))
    sys.exit(3)
sys.exit(0)
"""


APP_DRIVER = r"""
import sys, traceback
from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop
errors = []
def hook(t, v, tb):
    errors.append("".join(traceback.format_exception(t, v, tb)))
sys.excepthook = hook
from viz.app.main import make_app
app = make_app()
from viz.app.window import MainWindow
w = MainWindow(None)
w.show()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
said = []
def dismiss():                 # a user reads a modal message and closes it
    m = QApplication.activeModalWidget()
    if m is not None:
        said.append(getattr(m, "text", lambda: m.windowTitle())())
        m.reject() if hasattr(m, "reject") else m.close()
timer = QTimer()
timer.timeout.connect(dismiss)
timer.start(300)
w.open_path(__import__("pathlib").Path(sys.argv[1]))
deadline = QDeadlineTimer(4000)
while not deadline.hasExpired():
    QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
for k in range(3):             # step through a few frames and instructions as a user would
    w.session.go(instr=k) if hasattr(w.session, "go") else None
    QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 200)
alive = w.isVisible()
for m in said:
    print("dialog:", m.replace("\n", " ")[:300])
timer.stop()
w.close()
if errors:
    sys.stderr.write("\n".join(errors))
    sys.exit(3)
print("app alive" if alive else "app window gone")
sys.exit(0 if alive else 4)
"""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()


def command_line(path: Path, c: list, scratch: Path) -> list[str]:
    cli = [sys.executable, "-m", "viz.cli"]
    what = c[0]
    if what == "analyze":
        return cli + ["analyze", str(path)]
    if what == "analyze-set":
        return cli + ["analyze", str(path), "--set", c[1]]
    if what == "export":
        return cli + ["export", str(path), "--out", str(scratch / "out.png"), "-i", "0"]
    if what == "trace":
        return cli + ["trace", str(path), "--out", str(scratch / "t.wvtrace")]
    if what == "bench-dry":
        return cli + ["bench", "--traces", str(path), "--dry-run", "--out", str(scratch / "r.json")]
    if what == "trace-blocks":
        return cli + ["trace", str(path), "--blocks", c[1], "--out", str(scratch / "t.wvtrace")]
    if what == "bench-show":
        return cli + ["bench", "--traces", "--show", str(path)]
    if what == "calibrate-show":
        return cli + ["calibrate", "--show", str(path)]
    if what == "bench-traces":
        return cli + ["bench", "--traces", str(path), "--dry-run", "--out", str(scratch / "r.json")]
    if what == "analyze-short":
        return cli + ["analyze", str(path)]
    if what == "trace-short":
        return cli + ["trace", str(path), "--out", str(scratch / "t.wvtrace")]
    if what == "export-compare":
        return cli + ["export", str(path), "--compare", "--out", str(scratch / "out.svg"), "-i", "1"]
    if what == "validate":
        return cli + ["validate", str(path)]
    if what == "app":
        return [sys.executable, "-c", APP_DRIVER, str(path)]
    if what == "gpu-import":
        return [sys.executable, "-c", GPU_IMPORT_DRIVER, str(path)]
    if what == "dataloss":
        return [sys.executable, "-c", DATALOSS_DRIVER, str(path)]
    if what.startswith("word-"):          # _python_habits: the word itself is the input
        word = c[1]
        if what == "word-app":
            return cli + [word]
        if what == "word-export":
            return cli + ["export", word, "--out", str(scratch / "out.png"), "-i", "1"]
        if what == "word-trace":
            return cli + ["trace", word, "--out", str(scratch / "t.wvtrace")]
        if what == "word-open-trace":
            probe = ("import sys, warpviz\ntry:\n    warpviz.open_trace(sys.argv[1])\nexcept warpviz.WarpvizError as e:\n"
                     "    print(e, file=sys.stderr); sys.exit(2)")
            return [sys.executable, "-c", probe, word]
        return cli + [what[len("word-"):], word]
    if what == "cli":               # the case is the command line ("{scratch}": the case's own folder)
        return cli + [a.replace("{scratch}", str(scratch)) for a in c[1:]]
    if what == "app-data":          # the app, with ``path`` as its data folder, opening a built-in
        return ["env", f"WARPVIZ_DATA_DIR={path}", sys.executable, "-c", APP_DRIVER,
                str(ROOT / "assets" / "scenarios" / "transpose-tile.toml")]
    if what == "api":
        return [sys.executable, "-c", API_HUGE, *c[1:]]
    if what == "lessons-app":       # _lectures: the app with ``path`` as its data folder, every lesson started
        return ["env", f"WARPVIZ_DATA_DIR={path}", sys.executable, "-c", LESSONS_DRIVER]
    if what == "gpu-description":   # _gpus: a description file read as warpviz reads assets/gpus/*.toml
        probe = ("import sys\nfrom viz import gpus\ntry:\n    gpus.read(sys.argv[1])\nexcept gpus.GpuDescriptionError as e:\n"
                 "    print(e, file=sys.stderr); sys.exit(2)")
        return [sys.executable, "-c", probe, str(path)]
    if what == "gpu-env":           # _gpus: $WARPVIZ_GPU as the user set it
        return ["env", f"WARPVIZ_GPU={c[1]}", *cli, "analyze", "transpose-tile"]
    raise ValueError(what)


LESSONS_DRIVER = r"""
import sys
from viz.app.main import make_app
app = make_app()
from viz.app.window import MainWindow
w = MainWindow("coalesced")
w.show()
keys = w.lesson_keys
keys.menu.aboutToShow.emit()                      # Playback -> Lessons: every file read (bad ones said)
for a in keys.menu.actions():
    if a.isEnabled():
        a.trigger()
        for _ in range(3):
            keys.step(1)
        app.processEvents()
print(w.statusBar().currentMessage()[:300])
from viz.app.main import close_window
from viz.app.worker import Runner
Runner.wait_all(20000)
close_window(w)                                   # deleted while Python is whole (viz.app.main)
sys.exit(0)
"""


def run_case(root: Path, rel: str, c: list, k: int) -> dict:
    path = root / rel
    scratch = root / "scratch" / str(k)
    scratch.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "WARPVIZ_SETTINGS": str(scratch / "settings.ini"),
           "WARPVIZ_DATA_DIR": str(scratch / "data"), "PYTHONPATH": str(ROOT)}
    cmd = command_line(path, c, scratch)
    started = time.time()
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=scratch, env=env, capture_output=True, text=True, errors="replace",
                           timeout=TIME_LIMIT_S, preexec_fn=_limits, stdin=subprocess.DEVNULL)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (
            e.stdout or ""), (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    seconds = time.monotonic() - t0
    problems = []
    if rc == "timeout":
        problems.append(f"ran past {TIME_LIMIT_S} s")
    elif rc not in (0, 2):
        problems.append(f"exit {rc}")
    if "Traceback (most recent call last)" in out + err:
        problems.append("traceback")
    if "MemoryError" in out + err:
        problems.append("MemoryError")
    problems += _outside_problems(c, cmd, out or "", err or "", scratch, started)
    last = [ln for ln in (err or out).strip().splitlines() if ln.strip()][-1:] or [""]
    return {"file": rel, "command": c, "rc": rc, "seconds": round(seconds, 2), "problems": problems,
            "last_line": last[0][:300]}


def run(root: Path, jobs: int, only: str | None) -> int:
    cases = json.loads((root / "cases.json").read_text())
    if only:
        cases = [c for c in cases if only in c[0]]
    markers = root / MARKER_DIR_NAME
    for m in markers.iterdir():
        m.unlink()
    t0 = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda kc: run_case(root, kc[1][0], kc[1][1], kc[0]), enumerate(cases)))
    planted = sorted(m.name for m in markers.iterdir())
    for f in (Path.cwd() / "marker", root / "launch" / "marker"):
        if f.exists():
            planted.append(str(f))
    (root / "results.json").write_text(json.dumps({"results": results, "planted": planted}, indent=1))
    bad = [r for r in results if r["problems"]]
    for r in bad:
        print(f"FAIL {r['file']} {' '.join(r['command'])}: {', '.join(r['problems'])} ({r['seconds']} s) "
              f"| {r['last_line']}")
    slowest = max(results, key=lambda r: r["seconds"]) if results else None
    print(f"\n{len(results)} cases, {len(results) - len(bad)} passed, {len(bad)} failed; planted commands that "
          f"ran: {planted or 'none'}; slowest {slowest['seconds'] if slowest else 0} s "
          f"({slowest['file'] if slowest else ''}); {time.monotonic() - t0:.0f} s in all")
    return 1 if bad or planted else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir", type=Path)
    r = sub.add_parser("run")
    r.add_argument("dir", type=Path)
    r.add_argument("-j", "--jobs", type=int, default=2)
    r.add_argument("--only", help="run the cases whose file path contains this text")
    a = ap.parse_args(argv)
    if a.what == "make":
        make(a.dir.resolve())
        return 0
    return run(a.dir.resolve(), a.jobs, a.only)


if __name__ == "__main__":
    sys.exit(main())
