"""Fuzzing launch files: random bit flips, truncations and field mutations of the shipped
launch files (``kernels/**/*.launch.toml``). ``load_launch`` either returns a ``Launch`` or
raises ``TraceError`` (never another exception), and every ``Launch`` it returns is safe to
hand to nvcc (its command line holds nothing ``sh`` would act on, its files stay in the
launch file's folder). The CLI's commands that take a launch file exit 2 with one paragraph
for hostile files. Work is bounded by the files' size limits, not timed.
"""

from __future__ import annotations

import shutil
import tempfile
import tomllib
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viz.cli import main
from viz.trace import TraceError
from viz.trace.build import nvcc_command
from viz.trace.launch import C_IDENTIFIER, Launch, load_launch, unsafe_chars
from viz.trace.names import parse_kernel_name

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p.relative_to(ROOT / "kernels") for p in (ROOT / "kernels").rglob("*.launch.toml"))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    """A copy of kernels/ (the sources the launch files name), where the fuzzed files are written."""
    d = tmp_path_factory.mktemp("fuzz") / "kernels"
    shutil.copytree(ROOT / "kernels", d)
    return d


def check(path: Path) -> Launch | None:
    """load_launch's outcome; a returned Launch must be safe for nvcc's command line."""
    try:
        launch = load_launch(path)
    except TraceError as err:
        assert err.problem and str(err).startswith(str(path))
        return None
    folder = path.parent.resolve()
    assert launch.source.is_relative_to(folder) and launch.source.suffix == (".ptx" if launch.ptx else ".cu")
    assert all(d.is_relative_to(folder) for d in launch.include_dirs)
    assert not (launch.ptx and (launch.include_dirs or launch.defines))
    assert all(a.path is None or a.path.is_relative_to(folder) for a in launch.args)
    if launch.format < 2:
        assert C_IDENTIFIER.fullmatch(launch.kernel)
    else:                                       # a C++ name: nothing that could leave a declaration
        k = parse_kernel_name(launch.kernel)
        assert not set(';{}#/"\'\\\n') & set(k.template_id + "".join(k.params or ()))
    assert all(C_IDENTIFIER.fullmatch(k) and "\n" not in v and "\0" not in v for k, v in launch.defines.items())
    with tempfile.TemporaryDirectory() as tmp:
        cmd = nvcc_command(launch, "sm_90", "nvcc", Path(tmp))    # builds the list only (and the header)
    assert all(unsafe_chars(a) == "" for a in cmd[1:])
    return launch


def _fuzz_path(kernels: Path, rel: Path) -> Path:
    return kernels / rel.parent / "fuzzed.launch.toml"            # beside the original: its source resolves


@FUZZ
@given(rel=st.sampled_from(SHIPPED), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)),
                                                   min_size=1, max_size=8))
def test_bit_flips(kernels, rel, flips):
    data = bytearray((kernels / rel).read_bytes())
    for at, bit in flips:
        data[at % len(data)] ^= 1 << bit
    p = _fuzz_path(kernels, rel)
    p.write_bytes(bytes(data))
    check(p)


@FUZZ
@given(rel=st.sampled_from(SHIPPED), cut=st.integers(0, 10**6), tail=st.binary(max_size=40))
def test_truncations(kernels, rel, cut, tail):
    data = (kernels / rel).read_bytes()
    p = _fuzz_path(kernels, rel)
    p.write_bytes(data[:cut % (len(data) + 1)] + tail)
    check(p)


HOSTILE_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["$(touch pwned)", "`touch pwned`", "a;touch pwned", "x\\", "\x00", "a\nb", "../../etc",
                     "/etc/passwd", "~/x.cu", "..", ".", "", "copy.cu", "../copy.cu", "trace", "common.cuh",
                     "float*", "int", "void*", "random", "iota", "k\u00e9", "\ufeff", "a" * 5000]),
)
HOSTILE = st.recursive(
    st.one_of(HOSTILE_TEXT, st.integers(-(2**70), 2**70), st.sampled_from([0, -1, 1, 2**31, 2**63, 2**64]),
              st.floats(allow_nan=True, allow_infinity=True), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(HOSTILE_TEXT, inner, max_size=4)),
    max_leaves=12,
)
KEYS = ["format", "title", "notes", "source", "kernel", "block", "grid", "shared_bytes", "defines", "include_dirs",
        "arg", "compare", "colour"]


@FUZZ
@given(rel=st.sampled_from(SHIPPED), edits=st.lists(st.tuples(st.sampled_from(KEYS), st.one_of(st.none(), HOSTILE),
                                                               st.integers(0, 5), st.sampled_from(["type", "count",
                                                                                                  "fill", "value",
                                                                                                  "other"])),
                                                     min_size=1, max_size=4))
def test_field_mutations(kernels, rel, edits):
    """Set, replace or delete top-level keys and [[arg]] keys with hostile values (None: delete)."""
    d = tomllib.loads((kernels / rel).read_text())
    for key, value, n, arg_key in edits:
        args = d.get("arg")
        if key == "arg" and isinstance(args, list) and args and isinstance(args[n % len(args)], dict) \
                and isinstance(value, (str, int, float)):
            args[n % len(args)][arg_key] = value                      # one key of one [[arg]]
        elif value is None:
            d.pop(key, None)
        else:
            d[key] = value
    p = _fuzz_path(kernels, rel)
    p.write_text(tomlkit.dumps(d), encoding="utf-8")
    check(p)


def test_every_shipped_launch_file_loads_and_is_safe(kernels):
    loaded = [check(kernels / rel) for rel in SHIPPED]
    assert len(loaded) == len(SHIPPED) > 50 and all(isinstance(x, Launch) for x in loaded)


# ---------------------------------------------------------------------------- the CLI


def _hostile_files(tmp_path: Path) -> dict[str, Path]:
    import os

    shutil.copy(ROOT / "kernels" / "copy.cu", tmp_path / "copy.cu")
    good = (ROOT / "kernels" / "copy_float.launch.toml").read_text()
    files = {
        "not UTF-8": b"\xff\xfe" + good.encode("utf-16-le"),
        "deep TOML": b"a = " + b"[" * 50_000,
        "NUL in source": good.replace('source = "copy.cu"', 'source = "copy\\u0000.cu"').encode(),
        "NUL in include_dirs": ('include_dirs = ["\\u0000"]\n' + good).encode(),
        "NUL in defines": ('defines = { A = "\\u0000" }\n' + good).encode(),
        "shell in define name": ('defines = { "A=$(touch pwned)" = 1 }\n' + good).encode(),
        "source outside": good.replace('source = "copy.cu"', 'source = "../copy.cu"').encode(),
        "absolute source": good.replace('source = "copy.cu"', 'source = "/etc/passwd"').encode(),
        "huge integer": ("shared_bytes = " + "9" * 5000 + "\n" + good).encode(),
        "binary": bytes(range(256)) * 4,
    }
    out = {}
    for name, data in files.items():
        p = tmp_path / f"{name.replace(' ', '_')}.launch.toml"
        p.write_bytes(data)
        out[name] = p
    if hasattr(os, "mkfifo"):
        out["FIFO"] = tmp_path / "fifo.launch.toml"
        os.mkfifo(out["FIFO"])
    out["device"] = Path("/dev/zero")
    out["folder"] = tmp_path
    return out


@pytest.mark.parametrize("command", [["trace"], ["trace", "--validate", "--json"], ["bench", "--traces", "--dry-run"],
                                     ["bench", "--traces"]])
def test_cli_refuses_hostile_launch_files_with_one_paragraph(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    for name, p in _hostile_files(tmp_path).items():
        rc = main([*command, str(p)])
        err = capsys.readouterr().err
        assert rc == 2, (name, err)
        assert err.startswith("warpviz: ") and "Traceback" not in err and err.rstrip("\n").count("\n") == 0, (name, err)
        assert str(p) in err, (name, err)
    assert not (tmp_path / "pwned").exists()
