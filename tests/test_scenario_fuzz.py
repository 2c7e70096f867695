"""Hostile scenario text: mutations of the built-ins (bit flips, truncations, swapped lines,
values swapped for hostile ones, hostile expressions, lines of other scenarios) load and
analyse, or are refused with a ScenarioError; never another exception, and never more work
than the bound. The command line and the app answer hostile files with a message."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viz.cli import main
from viz.engine import analyze
from viz.errors import WarpvizError
from viz.frames import frames
from viz.scenario import ScenarioError, builtin_names, loads, resolve
from viz.warp import warp_detail
from viz.work import MAX_WORK, estimate

from app_helpers import user_dirs  # noqa: F401 - fixture

TEXTS = {name: resolve(name).read_text(encoding="utf-8") for name in builtin_names()}
FUZZ_WORK = MAX_WORK // 20          # what one example may analyse (the bound itself is tested elsewhere)

HOSTILE_EXPRESSIONS = [
    "1" + "+1" * 494, "1" + "*1" * 494, "1" + "<<0" * 494, "1" + "&&1" * 494, "(" * 63 + "1" + ")" * 63,
    "-" * 63 + "1", "1 ? " * 31 + "1" + " : 0" * 31, "4611686018427387904", "4611686018427387904 * 4",
    "1 << 63", "1 << 64", "1 / 0", "tid / (tid - tid)", "tid % 0", "rev(tid, 63)", "rev(tid, 62)",
    "blockIdx.x ^ tid", "min(1)", "", " ", "tid" + " " * 1990, "x" * 2001, "threadIdx.w", "__import__('os')",
    "9" * 30, "-4611686018427387904 - 4611686018427387904", "gridDim.x * blockDim.x * 99999",
]
HOSTILE_VALUES = [
    "65536", "[65536]", "[2147483647, 65535, 65535]", "[1024, 1024, 1024]", "[1024, 1]", "-1", "0", "1e99",
    "true", "nan", "inf", "\"\"", "{}", "[]", "[[[[]]]]", "9223372036854775807", "-9223372036854775808",
    "[1099511627776, 1099511627776]", "\"0:99999\"", "{ j = \"0:99999\" }", "{ j = \"0:10:0\" }",
    "{ j = \"0:99999\", k = \"0:99999\" }", "\"Sw<3,3,3> o (8,64):(64,1)\"", "\"tma:128B\"", "\"cute:16,30,30\"",
    "\"xor:99\"", "\"expr:row ^ col\"", "\"expr:row / 0\"", "\"(99999999,99999999):(1,1)\"", "[\"x:float\", \"x:int\"]",
    "\"ldmatrix.x4\"", "\"cp.async\"", "\"tma.load\"", "\"atomic\"", "[256, 256]", "4", "3",
]
KEYS = ["grid", "block", "shape", "pad", "offset", "at", "when", "for", "swizzle", "layout", "op", "type", "format",
        "box", "from", "cache", "result", "fields", "space", "compare", "N", "W", "TILE", "PAD"]


@st.composite
def mutated(draw) -> str:
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "swap", "value", "expr", "splice", "repeat"]))
        lines = text.splitlines()
        if kind == "flip" and text:
            data = bytearray(text.encode("utf-8"))
            for _ in range(draw(st.integers(1, 4))):
                i = draw(st.integers(0, len(data) - 1))
                data[i] ^= 1 << draw(st.integers(0, 7))
            text = data.decode("utf-8", "replace")
        elif kind == "cut":
            text = text[:draw(st.integers(0, len(text)))]
        elif kind == "swap" and len(lines) > 1:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == "value":
            key = draw(st.sampled_from(KEYS))
            hits = list(re.finditer(rf"^(\s*{re.escape(key)}\s*=\s*).*$", text, re.M))
            value = draw(st.sampled_from(HOSTILE_VALUES))
            if hits:
                m = hits[draw(st.integers(0, len(hits) - 1))]
                text = text[:m.start()] + m.group(1) + value + text[m.end():]
            else:
                text += f"\n{key} = {value}\n"
        elif kind == "expr":
            quoted = list(re.finditer(r'"([^"\n]*)"', text))
            expr = draw(st.one_of(st.sampled_from(HOSTILE_EXPRESSIONS),
                                  st.text(alphabet="tid+-*/%<>=!&|^~?:()[], 0123456789xyzblockIdx.", max_size=60)))
            if quoted:
                m = quoted[draw(st.integers(0, len(quoted) - 1))]
                text = text[:m.start()] + '"' + expr + '"' + text[m.end():]
        elif kind == "splice":
            other = TEXTS[draw(st.sampled_from(sorted(TEXTS)))].splitlines()
            i, j = draw(st.integers(0, len(lines))), draw(st.integers(0, len(other) - 1))
            text = "\n".join(lines[:i] + other[j:j + draw(st.integers(1, 8))] + lines[i:])
        elif kind == "repeat" and "[[access]]" in text:
            text += "\n" + text[text.index("[[access]]"):] * draw(st.integers(1, 4))
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_a_mutated_scenario_loads_and_analyses_or_is_refused(text):
    try:
        sc = loads(text, source="fuzz.toml")
    except ScenarioError as err:
        msg = str(err)
        assert msg.startswith("fuzz.toml") and "\n" not in msg and len(msg) <= 1000, msg
        return
    work = estimate(sc)
    assert work.total <= MAX_WORK
    if work.total > FUZZ_WORK:
        return
    try:
        an = analyze(sc)
        assert len(an.stats) == work.instructions
        d = warp_detail(sc, sc.instructions()[-1], sc.launch.blocks - 1, sc.launch.warps_per_block - 1)
        assert frames(d)
    except ScenarioError as err:
        assert str(err).startswith("fuzz.toml") and "\n" not in str(err), str(err)


# ---------------------------------------------------------------------------- the command line

HOSTILE_FILES = {
    "work.toml": ('[launch]\ngrid = [65536]\nblock = [1024]\n[arrays.a]\ntype = "float"\nshape = [1024]\n'
                  '[[access]]\nop = "load"\nat = "a[threadIdx.x]"\nfor = { j = "0:99999" }\n', "the analysis would take"),
    "chain.toml": ('[launch]\nblock = [32]\ngrid = [1]\n[arrays.a]\ntype = "float"\nshape = [1024]\n'
                   '[[access]]\nop = "load"\nat = "a[' + "1+" * 600 + 'threadIdx.x]"\n', "more than 1000 parts"),
    "huge.toml": ('[launch]\nblock = [32]\ngrid = [1]\n[arrays.a]\ntype = "float"\n'
                  'shape = [1099511627776, 1099511627776]\n[[access]]\nop = "load"\nat = "a[0][lane]"\n', "4 PiB"),
    "overflow.toml": ('[params]\nW = 99999999999\nN = "W * W * W"\n[launch]\nblock = [32]\ngrid = [1]\n'
                      '[arrays.a]\ntype = "float"\nshape = [1024]\n[[access]]\nop = "load"\nat = "a[lane]"\n',
                      "does not fit in 64 bits"),
    "deep.toml": ("x = " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
    "latin1.toml": (b'title = "caf\xe9"\n', "cannot be read"),
}


def _write(tmp_path, name):
    content, _ = HOSTILE_FILES[name]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def test_analyze_answers_each_hostile_file_with_one_paragraph_and_status_2(tmp_path, capsys):
    for name, (_, fragment) in HOSTILE_FILES.items():
        path = _write(tmp_path, name)
        assert main(["analyze", str(path)]) == 2, name
        out, err = capsys.readouterr()
        assert out == "" and "Traceback" not in err and err.count("\n") == 1, (name, err)
        assert str(path) in err and fragment in err, (name, err)
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    assert main(["analyze", str(fifo)]) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_the_installed_command_exits_2_without_a_traceback(tmp_path):
    path = _write(tmp_path, "work.toml")
    proc = subprocess.run([sys.executable, "-m", "viz.cli", "analyze", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stdout == ""
    assert "Even one block is too much" in proc.stderr


def test_the_app_shows_the_message_and_keeps_running(qtbot, user_dirs, tmp_path, monkeypatch):  # noqa: F811
    from PySide6.QtWidgets import QMessageBox

    from app_helpers import make_window

    shown = []       # what the window says in a message box (a file it cannot read)
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: shown.append(a[2])))
    w = make_window(qtbot, "transpose-tile")
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    for path, fragment in [*((_write(tmp_path, n), f) for n, (_, f) in HOSTILE_FILES.items()),
                           (fifo, "is not a regular file")]:
        shown.clear()
        if w.open_path(path):
            assert w.session.scenario is None and fragment in str(w.session.error), path.name
        else:                                             # not read: said in a message box
            assert len(shown) == 1 and fragment in shown[0], (path.name, shown)
        w.open_path(resolve("stride-2"))                  # and the app goes on working
        assert w.session.error is None and w.session.scenario.name == "stride-2"
    w.close()


def test_a_scenario_with_only_empty_loops_is_said_in_the_app_and_shown_by_the_cli(qtbot, user_dirs, tmp_path,  # noqa: F811
                                                                                   capsys):
    """Every loop empty (``for i = "10:0"``): the CLI's table says no instructions (exit 0);
    the app, which has no picture to step through, says why and how to fix it, and keeps
    working (it crashed in the frame count: an IndexError, found by tools/hostile.py)."""
    from app_helpers import make_window

    path = tmp_path / "empty-loop.toml"
    path.write_text('[launch]\nblock = [32]\ngrid = [1]\n[arrays.s]\nspace = "shared"\ntype = "float"\n'
                    'shape = [1024]\n[[access]]\nop = "load"\nfor = { i = "10:0" }\nat = "s[i]"\n')
    assert main(["analyze", str(path)]) == 0
    assert "[no instructions]" in capsys.readouterr().out
    w = make_window(qtbot, "transpose-tile")
    assert w.open_path(path)
    assert w.session.scenario is None and "issues no warp instruction" in str(w.session.error)
    assert "10:0:-1" in str(w.session.error)
    w.open_path(resolve("stride-2"))
    assert w.session.error is None and w.session.scenario.name == "stride-2"
    w.close()
