"""Hostile launch files: nothing a launch file says reaches a shell, and every bad file is a
one-paragraph TraceError (exit 2), never a traceback, a hang or an unbounded read.

nvcc runs its sub-steps through ``sh`` and puts paths and ``-D`` values between double
quotes without escaping ``$`` or the backquote (and a trailing backslash ends its quotes
early). The tests below plant commands that create a file named ``pwned`` in every value a
launch file hands to nvcc (define values and names, include folders, the source's file and
folder names, the launch file's own folder, the kernel name) and run the real code paths with
the real nvcc: ``warpviz bench --traces --dry-run``, ``warpviz trace``, the fault finder's
build and the GPU panel's recorder (its GPU child replays a shipped trace, the compile is
real). Each case either is refused with a TraceError / exit 2 naming the key, or compiles
(the characters were harmless where they went); no case creates the file.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from helpers import HAVE_NVCC
from viz.cli import main
from viz.trace import TraceError
from viz.trace.launch import MAX_LAUNCH_FILE_BYTES, MAX_SOURCE_BYTES, Launch, load_launch, parse_launch

ROOT = Path(__file__).resolve().parents[1]
REDUCE = ROOT / "kernels" / "trace" / "reduce_shfl.launch.toml"
REDUCE_CU = REDUCE.with_name("reduce_shfl.cu")
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
MARK = "pwned"

# Names a file or folder may have (no "/" or NUL): the shell syntax that must not run, and
# whether warpviz must refuse it (True) or may pass it to nvcc, where it is harmless inside
# nvcc's double quotes (False).
NAMES = [
    (f"$({'touch'} {MARK})", True),
    (f"`touch {MARK}`", True),
    (f"x;touch {MARK};#", False),
    (f"x|touch {MARK}", False),
    (f"x&touch {MARK}", False),
    (f"x&&touch {MARK}>y", False),
    (f"x\ntouch {MARK}", True),
    (f'x"; touch {MARK}; "', True),
    (f"x'; touch {MARK}; '", True),
    ("x\\", True),                                 # with a second include folder (below)
]


def _toml(s: str) -> str:
    """``s`` as a TOML basic string."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _launch_text(source: str = "reduce_shfl.cu", extra: str = "", kernel: str = "reduce_shfl") -> str:
    text = REDUCE.read_text().replace('source = "reduce_shfl.cu"', f"source = {_toml(source)}")
    text = text.replace('kernel = "reduce_shfl"', f"kernel = {_toml(kernel)}")
    return extra + text


def _planted(tmp_path: Path) -> list[Path]:
    return [p for p in list(tmp_path.rglob("*")) + list(Path.cwd().iterdir()) if p.name == MARK]


def _case(tmp_path: Path, field: str, name: str) -> Path:
    """A launch file of kernels/trace/reduce_shfl with ``name`` planted in ``field``; the
    files and folders it names exist."""
    home = tmp_path / "home"
    home.mkdir()
    if field == "folder":                       # the launch file's own folder
        home = home / name
        home.mkdir()
    src = "reduce_shfl.cu"
    extra = ""
    if field == "source file":
        src = f"{name}.cu"
    elif field == "source folder":
        (home / name).mkdir()
        src = f"{name}/reduce_shfl.cu"
    elif field == "include_dirs":
        (home / name).mkdir()
        (home / f";touch {MARK};#").mkdir()
        extra = f"include_dirs = [{_toml(name)}, {_toml(f';touch {MARK};#')}]\n"
    elif field == "define value":
        extra = f"defines = {{ VAL = {_toml(name)}, ABS = {_toml(f'$(touch {tmp_path / MARK})')} }}\n"
    elif field == "define name":
        extra = f"defines = {{ {_toml(name)} = 1 }}\n"
    kernel = name if field == "kernel" else "reduce_shfl"
    shutil.copy(REDUCE_CU, home / src)
    p = home / "k.launch.toml"
    p.write_text(_launch_text(src, extra, kernel))
    return p


FIELDS = ["source file", "source folder", "include_dirs", "folder", "define value", "define name", "kernel"]


def _refused(field: str, name: str, refuse: bool) -> bool:
    if field == "define value":                 # a value is only ever preprocessor text in a header
        return "\n" in name or name.endswith("\\")
    if field in ("define name", "kernel"):      # C identifiers only
        return True
    return refuse


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("name, refuse", NAMES, ids=[repr(n) for n, _ in NAMES])
def test_no_planted_command_runs_on_bench_dry_run(tmp_path, monkeypatch, capsys, field, name, refuse):
    monkeypatch.chdir(tmp_path)
    p = _case(tmp_path, field, name)
    rc = main(["bench", "--traces", "--dry-run", str(p)])
    err = capsys.readouterr().err
    assert _planted(tmp_path) == []
    assert "Traceback" not in err
    if _refused(field, name, refuse):
        assert rc == 2, err
        with pytest.raises(TraceError) as e:
            load_launch(p)
        key = {"source file": "source", "source folder": "source", "folder": "source",
               "define value": "defines.VAL", "define name": "defines", "kernel": "kernel"}.get(field, "include_dirs")
        # one paragraph (a newline only where the user's own path has one)
        assert e.value.where.startswith(key) and "\n" not in str(e.value).replace(str(p), "")
        assert str(e.value) in err
    else:
        assert rc == 0, err                    # harmless where it went: the kernel compiles and builds
    assert _planted(tmp_path) == []


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("field", ["source file", "include_dirs", "define value"])
def test_no_planted_command_runs_in_the_fault_finders_build(tmp_path, monkeypatch, field):
    from viz.trace.build import build_check

    monkeypatch.chdir(tmp_path)
    for k, (name, _refuse) in enumerate(NAMES):
        case = tmp_path / str(k)
        case.mkdir()
        p = _case(case, field, name)
        try:
            launch = load_launch(p)
        except TraceError:
            continue
        cubin, instrs = build_check(launch)        # what locate_fault compiles after a fault
        assert cubin and instrs
    assert _planted(tmp_path) == []


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("change", [
    {"source": Path(f"/tmp/$(touch {MARK})/k.cu")},
    {"source": Path(f"/tmp/`touch {MARK}`.cu")},
    {"include_dirs": (Path("/tmp/x\\"), Path(f"/tmp/;touch {MARK};#"))},
    {"defines": {"VAL": f"1\n#include \"/etc/passwd\"\n"}},
    {"defines": {f"X=1 $(touch {MARK})": "1"}},
    {"defines": {"VAL": "x\\"}},
], ids=["source $()", "source backquote", "include backslash", "define newline", "define name", "define backslash"])
def test_nvccs_command_line_is_checked_again_for_a_hand_made_launch(tmp_path, monkeypatch, change):
    """``Launch`` is a plain dataclass: the nvcc command line is checked where it is built."""
    from viz.trace.build import compile_ptx

    monkeypatch.chdir(tmp_path)
    launch = dataclasses.replace(load_launch(REDUCE), **change)
    with pytest.raises(TraceError) as err:
        compile_ptx(launch)
    assert "\n" not in str(err.value)
    assert _planted(tmp_path) == []


@nvcc
@pytest.mark.nvcc
def test_defines_reach_the_kernel_through_a_header_not_the_command_line(tmp_path, monkeypatch):
    """A define is seen by the source as with -D; the value, whatever it holds, is only
    preprocessor text (here an unused macro full of shell syntax compiles)."""
    from viz.trace.build import compile_ptx

    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* a) { a[0] = SCALE * 2; }\n')
    p = tmp_path / "k.launch.toml"
    p.write_text(f'source = "k.cu"\nkernel = "k"\nblock = [32]\ngrid = [1]\n'
                 f'defines = {{ SCALE = 1.5, NOISE = "$(touch {MARK}) `touch {MARK}`; touch {MARK} | x" }}\n'
                 '[[arg]]\ntype = "float*"\ncount = 32\n')
    ptx = compile_ptx(load_launch(p))
    assert "1077936128" in ptx           # 3.0f: SCALE * 2, folded by the compiler
    assert _planted(tmp_path) == []


@nvcc
@pytest.mark.nvcc
def test_no_planted_command_runs_through_the_panels_recorder(tmp_path, monkeypatch):
    """The GPU panel's Record (``viz.gpu.trace_pipeline.Recorder``; its GPU child replays the shipped
    reduce_shfl trace, nvcc is real): a harmless name records, a hostile one is the paragraph."""
    from fake_gpu import TRACES, replayed_counters
    from viz.gpu.trace_pipeline import Recorder, RecordingFailed

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(TRACES / "reduce_shfl.wvtrace"))
    rec = Recorder(child="fake_gpu:ReplaySession", counters=replayed_counters(TRACES / "reduce_shfl.wvtrace"))
    try:
        for k, (field, name) in enumerate([("define value", f"$(touch {MARK})"), ("include_dirs", f"x;touch {MARK};#"),
                                           ("source folder", f"x|touch {MARK}"), ("source folder", f"$(touch {MARK})"),
                                           ("include_dirs", "x\\"), ("define value", f"1\ntouch {MARK}")]):
            case = tmp_path / str(k)
            case.mkdir()
            p = _case(case, field, name)
            if _refused(field, name, dict(NAMES).get(name, True)):
                with pytest.raises(RecordingFailed) as err:
                    rec.record(p, validate=False, out=case / "r.wvtrace")
                assert str(err.value).startswith(str(p)) and "\n" not in str(err.value)
            else:
                r = rec.record(p, validate=False, out=case / "r.wvtrace")
                assert r.path.exists() and r.trace.records > 0
            assert _planted(tmp_path) == []
    finally:
        rec.close()


@pytest.mark.parametrize("field", ["folder", "source folder", "define name", "kernel", "include_dirs"])
def test_warpviz_trace_refuses_before_anything_runs(tmp_path, monkeypatch, capsys, field):
    monkeypatch.chdir(tmp_path)
    p = _case(tmp_path, field, f"$(touch {MARK})")
    assert main(["trace", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"warpviz: {p}") and err.count("\n") == 1 and "Traceback" not in err
    assert _planted(tmp_path) == []


# ---------------------------------------------------------------------------- paths and files


def test_source_and_include_dirs_stay_inside_the_launch_files_folder(tmp_path):
    (tmp_path / "outside.cu").write_text("//\n")
    (tmp_path / "inc").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REDUCE_CU, home / "k.cu")
    (home / "link.cu").symlink_to(tmp_path / "outside.cu")
    p = home / "k.launch.toml"
    for source, extra, where, words in [
        ("../outside.cu", "", "source", "leads outside the launch file's folder"),
        (str(tmp_path / "outside.cu"), "", "source", "not relative to the launch file"),
        ("~/k.cu", "", "source", "not relative to the launch file"),
        ("link.cu", "", "source", "leads outside"),                    # a link out is resolved first
        ("k.cu", 'include_dirs = ["../inc"]\n', "include_dirs[0]", "leads outside"),
        ("k.cu", 'include_dirs = ["/usr/include"]\n', "include_dirs[0]", "not relative"),
        ("k.cu", 'include_dirs = ["nothere"]\n', "include_dirs[0]", "is not a folder"),
        ("k.cu", 'include_dirs = ["k.cu"]\n', "include_dirs[0]", "is not a folder"),
        ("k.cu", 'include_dirs = [""]\n', "include_dirs[0]", "empty path"),
        ("", "", "source", "empty path"),
        ("k.txt", "", "source", "not a .cu file"),
        ("k.cu", "include_dirs = [" + ", ".join(['"."'] * 65) + "]\n", "include_dirs", "over the limit of 64"),
    ]:
        p.write_text(_launch_text(source, extra))
        with pytest.raises(TraceError) as err:
            load_launch(p)
        assert err.value.where == where and words in err.value.problem, (source, extra, str(err.value))
    (home / "sub").mkdir()
    shutil.copy(REDUCE_CU, home / "sub" / "k.cu")
    p.write_text(_launch_text("sub/../sub/k.cu", 'include_dirs = [".", "sub"]\n'))   # inside: fine
    la = load_launch(p)
    assert la.source == home / "sub" / "k.cu" and la.include_dirs == (home, home / "sub")
    assert la.source_text == REDUCE_CU.read_text()


def test_nul_bytes_and_control_characters_are_refused(tmp_path):
    home = tmp_path
    shutil.copy(REDUCE_CU, home / "k.cu")
    p = home / "k.launch.toml"
    for extra, source, kernel, where in [
        ("", "k\u0000.cu", "reduce_shfl", "source"),
        ('include_dirs = ["a\\u0000b"]\n', "k.cu", "reduce_shfl", "include_dirs[0]"),
        ('defines = { V = "1\\u0000" }\n', "k.cu", "reduce_shfl", "defines.V"),
        ('defines = { V = "1\\r2" }\n', "k.cu", "reduce_shfl", "defines.V"),
        ('defines = { "V\\u0000" = 1 }\n', "k.cu", "reduce_shfl", "defines"),
        ("", "k.cu", "reduce_shfl\u0000", "kernel"),
        ("", "k.cu", "réduce", "kernel"),                        # ASCII identifiers only
    ]:
        p.write_text(_launch_text(source, extra, kernel))
        with pytest.raises(TraceError) as err:
            load_launch(p)
        assert err.value.where == where and "\n" not in str(err.value) and "\x00" not in str(err.value)


def test_defines_limits(tmp_path):
    shutil.copy(REDUCE_CU, tmp_path / "reduce_shfl.cu")
    p = tmp_path / "k.launch.toml"
    many = ", ".join(f"D{k} = {k}" for k in range(257))
    for extra, where, words in [
        (f"defines = {{ {many} }}\n", "defines", "over the limit of 256"),
        (f'defines = {{ V = "{"x" * 4097}" }}\n', "defines.V", "over the limit of 4,096"),
        ("defines = { V = true }\n", "defines.V", "number or a string"),
        ("defines = { V = [1] }\n", "defines.V", "number or a string"),
        ("defines = [1]\n", "defines", "table"),
        ('defines = { "1X" = 1 }\n', "defines", "not a C identifier"),
    ]:
        p.write_text(_launch_text(extra=extra))
        with pytest.raises(TraceError) as err:
            load_launch(p)
        assert err.value.where == where and words in err.value.problem
    p.write_text(_launch_text(extra=f'defines = {{ V = "{"x" * 4096}", W = 2.5, E = "", S = "\\"a;b\\"" }}\n'))
    assert load_launch(p).defines == {"V": "x" * 4096, "W": "2.5", "E": "", "S": '"a;b"'}


def test_a_fifo_or_a_device_is_refused_without_hanging(tmp_path):
    """Reading a FIFO without a writer would block for ever; /dev/zero would never end."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe.launch.toml"
    os.mkfifo(fifo)
    result: list = []

    def load(path):
        try:
            load_launch(path)
        except TraceError as err:
            result.append(err)
        except BaseException as err:  # noqa: BLE001 - any other outcome fails below
            result.append(err)

    for path in (fifo, Path("/dev/zero"), tmp_path):
        result.clear()
        t = threading.Thread(target=load, args=(path,), daemon=True)
        t.start()
        t.join(60)                   # generous: the refusal needs no I/O at all
        if t.is_alive():             # unblock the reader, then fail
            with open(fifo, "w"):
                pass
            pytest.fail(f"load_launch({path}) blocked")
        assert isinstance(result[0], TraceError), result
        assert "not a regular file" in result[0].problem or "is a folder" in result[0].problem
    # the source as a FIFO or a device: the launch file names it
    shutil.copy(REDUCE_CU, tmp_path / "real.cu")
    os.mkfifo(tmp_path / "k.cu")
    (tmp_path / "dev.cu").symlink_to("/dev/zero")
    for src in ("k.cu", "dev.cu"):
        p = tmp_path / "k.launch.toml"
        p.write_text(_launch_text(src))
        with pytest.raises(TraceError) as err:
            load_launch(p)
        # dev.cu resolves to /dev/zero, outside the folder: refused before it is read
        assert err.value.where == "source"
        assert "not a regular file" in err.value.problem or "leads outside" in err.value.problem


def test_oversized_files_are_refused_before_they_are_read(tmp_path):
    big = tmp_path / "big.launch.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_LAUNCH_FILE_BYTES + 1)           # sparse: no disk used
    with pytest.raises(TraceError, match="over warpviz's limit of 1,048,576"):
        load_launch(big)
    src = tmp_path / "k.cu"
    with open(src, "wb") as f:
        f.truncate(2 << 30)                             # a 2 GiB source, sparse
    p = tmp_path / "k.launch.toml"
    p.write_text(_launch_text("k.cu"))
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == "source" and f"over warpviz's limit of {MAX_SOURCE_BYTES:,}" in err.value.problem
    with pytest.raises(TraceError, match="characters, over the limit"):
        parse_launch("#" * (MAX_LAUNCH_FILE_BYTES + 1), p)


def test_non_utf8_deep_and_huge_number_files_are_paragraphs(tmp_path):
    shutil.copy(REDUCE_CU, tmp_path / "reduce_shfl.cu")
    p = tmp_path / "k.launch.toml"
    head = f'notes = "x"\n{_launch_text()}'
    cases = [
        (b'notes = "caf\xe9"\n' + _launch_text().encode(), "not UTF-8 text: line 1 ", ""),
        (head.encode() + b"# caf\xe9\n", f"not UTF-8 text: line {head.count(chr(10)) + 1} ", ""),
        (b"a = " + b"[" * 100_000, "nested too deeply", ""),
        (b"a = " + b"9" * 5000, "not a launch file", ""),
        (b'"x\\ny" = 1\n' + _launch_text().encode(), "unknown key", "'x\\ny'"),
    ]
    for data, words, where in cases:
        p.write_bytes(data)
        with pytest.raises(TraceError) as err:
            load_launch(p)
        assert words in str(err.value) and "\n" not in str(err.value)
        assert err.value.where == where
        assert main(["trace", str(p)]) == 2
    # a launch file with a byte-order mark (some editors write one) reads as without
    p.write_bytes(b"\xef\xbb\xbf" + _launch_text().encode())
    assert load_launch(p).kernel == "reduce_shfl"
    # a source that is not UTF-8: the launch file's `source` names it
    (tmp_path / "latin.cu").write_bytes(REDUCE_CU.read_bytes() + b"// caf\xe9\n")
    p.write_text(_launch_text("latin.cu"))
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == "source" and "is not UTF-8 text" in err.value.problem


def test_trace_output_is_checked_before_anything_runs(tmp_path, capsys):
    shutil.copy(REDUCE_CU, tmp_path / "reduce_shfl.cu")
    p = tmp_path / "k.launch.toml"
    p.write_text(_launch_text())
    (tmp_path / "dir.wvtrace").mkdir()
    for out, words in [(tmp_path / "reduce_shfl.cu", "a .wvtrace file"),       # never over the source
                       (tmp_path / "nothere" / "t.wvtrace", "does not exist"),
                       (tmp_path / "dir.wvtrace", "not a regular file")]:
        assert main(["trace", str(p), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1
    assert (tmp_path / "reduce_shfl.cu").read_bytes() == REDUCE_CU.read_bytes()
    assert stat.S_ISDIR(os.stat(tmp_path / "dir.wvtrace").st_mode)


def test_launch_is_a_frozen_record_of_what_was_checked():
    la = load_launch(REDUCE)
    assert isinstance(la, Launch) and la.source_text == REDUCE_CU.read_text() and la.defines == {}


@pytest.mark.parametrize("text", ["title = " + "[" * 5000 + "]" * 5000 + "\n", "\ufffe\x00 not toml", ""])
def test_the_library_lists_a_hostile_launch_file_by_its_name(tmp_path, text):
    """The library reads launch files for their title and kernel without checking them: deep
    TOML, garbage or an empty file is listed by its file name (opening it says what is wrong)."""
    pytest.importorskip("PySide6")
    from viz.app.library import read_launch_entry

    p = tmp_path / "bad.launch.toml"
    p.write_text(text, encoding="utf-8")
    e = read_launch_entry(p)
    assert e.title == "bad.launch.toml" and e.kernel == "" and "launch" in e.tags
    fifo = tmp_path / "fifo.launch.toml"
    os.mkfifo(fifo)
    assert read_launch_entry(fifo).title == "fifo.launch.toml"     # not waited on
