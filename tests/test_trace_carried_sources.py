"""A trace carries only the source files its kernel was compiled from: a
PTX's ``.file`` lines, or a CUDA file's ``#line``, that name ``.env``, a file of another kind,
a file outside the launch file's folder or too large a file make the trace say which file it
left out and why, never carry its text."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from app_helpers import make_window, user_dirs  # noqa: F401 - fixture
from fake_gpu import TRACES
from helpers import HAVE_NVCC
from viz.gpu.trace_pipeline import MAX_CARRIED_FILE_BYTES, SOURCE_SUFFIXES, Recorder, trace_sources
from viz.trace import tracefile
from viz.trace.analysis import analyze_trace, to_table
from viz.trace.launch import load_launch

ROOT = Path(__file__).resolve().parents[1]
SECRET = "API_KEY=hunter2-do-not-share"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")


def _launch_folder(tmp_path: Path) -> Path:
    d = tmp_path / "launch"
    d.mkdir()
    for name in ("reduce_shfl.cu", "reduce_shfl.launch.toml"):
        shutil.copy(ROOT / "kernels" / "trace" / name, d / name)
    return d


def _files(d: Path) -> dict[str, str]:
    """Files a hostile line table may name, each holding the secret."""
    made = {".env": SECRET, ".git/config": SECRET, "notes.txt": SECRET, "id_rsa": SECRET,
            "helper.cuh": "// helper\n", "kernel.py": "# a Triton kernel\n", "sub/.hidden/x.h": SECRET,
            "big.h": "// " + "x" * (MAX_CARRIED_FILE_BYTES + 10) + "\n"}
    for name, text in made.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    (d.parent / "outside.h").write_text(SECRET)
    return made


def test_only_source_files_inside_the_folder_are_carried_and_the_rest_is_listed(tmp_path):
    d = _launch_folder(tmp_path)
    _files(d)
    launch = load_launch(d / "reduce_shfl.launch.toml")
    named = [".env", ".git/config", "notes.txt", "id_rsa", "helper.cuh", "kernel.py", "sub/.hidden/x.h", "big.h",
             "../outside.h", str(d.parent / "outside.h"), "missing.cu", str(d / ".env")]
    left: list[dict] = []
    got = trace_sources(launch, [SimpleNamespace(file=f) for f in named], left)
    assert sorted(got) == ["helper.cuh", "kernel.py", "reduce_shfl.cu"]
    assert all(SECRET not in text for text in got.values())
    why = {e["file"]: e["why"] for e in left}
    assert set(why) == {".env", ".git/config", "notes.txt", "id_rsa", "sub/.hidden/x.h", "big.h", "../outside.h",
                        str(d.parent / "outside.h"), "missing.cu"}
    assert why[".env"].startswith("a hidden file") and why[".git/config"].startswith("a hidden file")
    assert why["sub/.hidden/x.h"].startswith("a hidden file")
    assert why["notes.txt"].startswith("not a source file by its extension") and ".cu" in why["notes.txt"]
    assert why["id_rsa"].startswith("not a source file")
    assert why["../outside.h"] == "outside the launch file's folder"
    assert "over the 1 MiB a carried source may be" in why["big.h"]
    assert why["missing.cu"] == "does not exist"
    assert SOURCE_SUFFIXES == (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".py")


def test_sources_given_through_the_api_have_the_same_limits(tmp_path):
    d = _launch_folder(tmp_path)
    launch = load_launch(d / "reduce_shfl.launch.toml")
    launch = dataclasses.replace(launch, extra_sources={"k.py": "x = 1\n", "../../huge.py": "#" * (MAX_CARRIED_FILE_BYTES + 1)})
    left: list[dict] = []
    got = trace_sources(launch, [], left)
    assert sorted(got) == ["k.py", "reduce_shfl.cu"]
    assert [e["file"] for e in left] == ["huge.py"] and "over the 1 MiB" in left[0]["why"]


@nvcc
def test_a_line_directive_naming_dot_env_does_not_put_it_in_the_recorded_trace(tmp_path, monkeypatch):
    """The recording end to end (the GPU run replayed by tests/fake_gpu.py): the CUDA source
    says its loads are lines of ``.env``; the trace names .env as left out, carries none of it."""
    from fake_gpu import replayed_counters

    d = _launch_folder(tmp_path)
    _files(d)
    src = d / "reduce_shfl.cu"
    text = src.read_text()
    src.write_text(text.replace("    float v = i < n ? in[i] : 0.0f;\n",
                                f'#line 1 "{d}/.env"\n    float v = i < n ? in[i] : 0.0f;\n#line 7 "{src}"\n'))
    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(TRACES / "reduce_shfl.wvtrace"))
    monkeypatch.delenv("WARPVIZ_FAKE_HANG", raising=False)
    monkeypatch.delenv("WARPVIZ_FAKE_FAULT", raising=False)
    rec = Recorder(child="fake_gpu:ReplaySession", counters=replayed_counters(TRACES / "reduce_shfl.wvtrace"))
    try:
        out = tmp_path / "shared.wvtrace"
        rec.record(d / "reduce_shfl.launch.toml", validate=False, out=out)
    finally:
        rec.close()
    t = tracefile.load(out)
    assert list(t.header["sources"]) == ["reduce_shfl.cu"]
    assert SECRET not in out.read_bytes().decode("latin-1")
    assert any(i.get("file") == ".env" for i in t.header["instructions"])      # the line table said so
    assert t.header["sources_left_out"] == [{"file": ".env", "why": "a hidden file or folder (its name starts "
                                                                    "with a dot): never carried"}]
    assert "sources not carried: .env (a hidden file or folder" in to_table(analyze_trace(t))


def test_the_source_panel_says_which_files_the_trace_left_out(qtbot, user_dirs, tmp_path):  # noqa: F811
    """The app's Source panel lists, under the code, the files the trace does not carry and why."""
    import json
    import zipfile

    with zipfile.ZipFile(TRACES / "transpose_pad.wvtrace") as z:
        members = {n: z.read(n) for n in z.namelist()}
    h = json.loads(members["header.json"])
    h["sources_left_out"] = [{"file": ".env", "why": "a hidden file or folder (its name starts with a dot): "
                                                     "never carried"}]
    members["header.json"] = json.dumps(h).encode()
    path = tmp_path / "left.wvtrace"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    w = make_window(qtbot, str(path))
    w.docks["source"].show()
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)
    panel = w.trace_source
    qtbot.waitUntil(lambda: "not carried" in panel.source.toPlainText(), timeout=10000)
    assert panel.source.toPlainText().splitlines()[-1] == ("// not carried in the trace: .env (a hidden file or "
                                                           "folder (its name starts with a dot): never carried)")
    w.close()
