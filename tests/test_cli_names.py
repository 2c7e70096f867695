"""Shipped traces and launch files reached by name (no path into a checkout), ``python -m
warpviz``, an unknown first word, and shell completion.

Every command here runs from ``tmp_path``, a folder outside the checkout, as an installed
copy would (tests/test_packaging.py runs them from an installed wheel too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from viz import assets, cli

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"


def warpviz(*args: str, cwd: Path, env: dict | None = None, module: str = "warpviz") -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
         "QT_QPA_PLATFORM": "offscreen", **(env or {})}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=e, capture_output=True, text=True,
                          timeout=300)


def test_list_traces_names_every_shipped_trace(capsys):
    assert cli.main(["list", "--traces"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == sorted(p.stem for p in TRACES.glob("*.wvtrace"))
    assert len(lines) == len(list(TRACES.glob("*.wvtrace"))) > 0
    row = dict(line.split("\t", 1) for line in lines)
    assert row["transpose_pad"].startswith("Transpose through a padded 32x33 tile")


def test_analyze_export_and_matrix_take_a_shipped_traces_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["analyze", "transpose_pad", "--json"]) == 0
    by_name = capsys.readouterr().out
    assert cli.main(["analyze", str(TRACES / "transpose_pad.wvtrace"), "--json"]) == 0
    assert by_name == capsys.readouterr().out and '"accesses"' in by_name
    assert cli.main(["export", "transpose_pad", "--out", "pad.svg", "-i", "2"]) == 0
    assert (tmp_path / "pad.svg").read_text().lstrip().startswith("<?xml")
    assert cli.main(["matrix", "ldmatrix_cpasync"]) == 0
    assert "ldmatrix.x4" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pad.svg"]     # nothing else written here


def test_a_file_and_a_builtin_come_before_a_shipped_traces_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "assets" / "scenarios" / "coalesced.toml").read_text()
    (tmp_path / "transpose_pad").write_text(text.replace('title = "', 'title = "Mine: ', 1))
    assert cli.main(["analyze", "transpose_pad"]) == 0
    assert capsys.readouterr().out.startswith("Mine: ")              # the user's file, not the shipped trace
    assert assets.trace_argument("transpose-tile") is None            # a built-in scenario
    assert assets.trace_argument("no_such_name") is None
    assert assets.trace_argument("dir/transpose_pad") is None         # a path is a path
    assert assets.trace_argument("x.wvtrace") == "x.wvtrace"          # a trace file's name, as given
    assert assets.trace_argument("copy_float.wvtrace") == str(TRACES / "copy_float.wvtrace")


def test_an_unknown_name_suggests_shipped_traces_too(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["analyze", "transpose_pd"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("warpviz: transpose_pd: is neither a file nor a built-in scenario.")
    assert "transpose_pad" in err and "Traceback" not in err


def test_open_trace_takes_a_shipped_traces_name(tmp_path, monkeypatch):
    import warpviz
    from viz.trace import TraceError

    monkeypatch.chdir(tmp_path)
    t = warpviz.open_trace("transpose_pad")
    assert t.records == warpviz.open_trace(TRACES / "transpose_pad.wvtrace").records > 0
    with pytest.raises(TraceError, match="no_such_trace"):
        warpviz.open_trace("no_such_trace")


def test_a_shipped_launch_file_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert assets.named_launch("transpose_pad") == ROOT / "kernels" / "trace" / "transpose_pad.launch.toml"
    assert assets.launch_argument("transpose_pad") == str(ROOT / "kernels" / "trace" / "transpose_pad.launch.toml")
    assert assets.launch_argument("mine.launch.toml") == "mine.launch.toml"     # not shipped: as given
    assert assets.named_launch("../transpose_pad") is None


def test_trace_by_name_writes_its_trace_here_not_into_the_install(tmp_path, monkeypatch):
    """``warpviz trace transpose_pad`` records the shipped launch file; the trace goes to
    ./transpose_pad.wvtrace (never beside the launch file in the installed package)."""
    from viz.gpu import trace_cli

    seen = {}

    def fake_trace(launch, blocks, args):
        seen["launch"], seen["out"] = launch.path, args.out
        return 0

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(trace_cli, "_trace", fake_trace)
    assert cli.main(["trace", "transpose_pad"]) == 0
    assert Path(seen["launch"]) == ROOT / "kernels" / "trace" / "transpose_pad.launch.toml"
    assert seen["out"] == "transpose_pad.wvtrace"
    assert cli.main(["trace", "transpose_pad", "--out", "x.wvtrace"]) == 0 and seen["out"] == "x.wvtrace"


@pytest.mark.parametrize("word, opened", [("transpose_pad", str(TRACES / "transpose_pad.wvtrace")),
                                          ("transpose-tile", "transpose-tile")])
def test_warpviz_name_opens_the_app(word, opened, monkeypatch, tmp_path):
    pytest.importorskip("PySide6")
    import viz.app.main as app_main

    got = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(app_main, "run_app", lambda arg: got.append(arg) or 0)
    assert cli.main([word]) == 0
    assert got == [opened]


def test_warpviz_an_existing_file_opens_the_app(monkeypatch, tmp_path):
    pytest.importorskip("PySide6")
    import viz.app.main as app_main

    got = []
    (tmp_path / "mine").write_text("x")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(app_main, "run_app", lambda arg: got.append(arg) or 0)
    assert cli.main(["mine"]) == 0 and got == ["mine"]


@pytest.mark.parametrize("word, start", [
    ("bogus", "warpviz: unknown command or file 'bogus'; commands: list, analyze, "),
    ("nothere.toml", "warpviz: 'nothere.toml': no such file; commands: "),
    ("\x1b]52;c;cm0gLXJmIH4=\x07", "warpviz: unknown command or file '\\x1b]52;c;cm0gLXJmIH4=\\x07'; "),
])
def test_an_unknown_first_word_is_a_usage_error(word, start, tmp_path, monkeypatch, capsys):
    import viz.app.main as app_main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(app_main, "run_app", lambda arg: pytest.fail("the app must not open"))
    assert cli.main([word]) == 2
    err = capsys.readouterr().err
    assert err.startswith(start) and "\x1b" not in err and err.count("\n") == 1
    assert "completion" in err and "`warpviz list --traces`" in err


def test_python_dash_m_warpviz_is_the_command(tmp_path):
    r = warpviz("--version", cwd=tmp_path)
    from viz import __version__

    assert r.returncode == 0 and r.stdout.strip() == f"warpviz {__version__}"
    r = warpviz("bogus", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("warpviz: unknown command or file 'bogus'")
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("shell, marker", [("bash", "complete "), ("zsh", "#compdef warpviz"),
                                           ("fish", "complete --command warpviz")])
def test_completion_prints_each_shells_script(shell, marker, capsys):
    pytest.importorskip("argcomplete")
    assert cli.main(["completion", shell]) == 0
    out = capsys.readouterr().out
    assert marker in out and "_ARGCOMPLETE" in out


def test_completion_of_a_bad_shell_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(["completion", "powershell9"])
    assert err.value.code == 2 and "invalid choice: 'powershell9'" in capsys.readouterr().err


def _complete(line: str, tmp_path: Path) -> list[str]:
    """What the shell script's function gets back for ``line`` (argcomplete's protocol)."""
    out = tmp_path / "completions.txt"
    r = warpviz(cwd=tmp_path, env={"_ARGCOMPLETE": "1", "_ARGCOMPLETE_IFS": "\n", "COMP_LINE": line,
                                   "COMP_POINT": str(len(line)), "_ARGCOMPLETE_STDOUT_FILENAME": str(out)})
    assert r.returncode == 0, r.stderr
    return [w.strip() for w in out.read_text().split("\n") if w.strip()]


def test_completion_offers_commands_names_and_files(tmp_path):
    pytest.importorskip("argcomplete")
    (tmp_path / "transpose_mine.toml").write_text("")
    assert _complete("warpviz an", tmp_path) == ["analyze"]
    got = _complete("warpviz analyze transpose_", tmp_path)
    assert set(got) == {"transpose_pad", "transpose_tile_pad1", "transpose_mine.toml"} | {
        n for n in assets.trace_names() if n.startswith("transpose_")}
    assert "transpose-tile" in _complete("warpviz export transpose-t", tmp_path)
    assert _complete("warpviz completion f", tmp_path) == ["fish"]
