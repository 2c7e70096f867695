"""The library remembers what it showed of a trace's header only while the file is the same
file: a trace replaced, rewritten or damaged is read again (the window lists the traces four
times while it is built; the memory makes that one read)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from viz.app import library
from viz.trace.tracefile import read_header

TRACES = Path(__file__).resolve().parents[1] / "assets" / "traces"
A, B = TRACES / "copy_float.wvtrace", TRACES / "reduce_tree.wvtrace"


def test_a_trace_replaced_or_damaged_is_read_again(tmp_path):
    ta, tb = read_header(A)["title"], read_header(B)["title"]
    assert ta != tb
    p = tmp_path / "mine.wvtrace"
    shutil.copyfile(A, p)
    first = library.read_trace_entry(p, False)
    assert first.title == ta and first.kernel == read_header(A)["kernel"] and first.trace and not first.builtin
    assert library.read_trace_entry(p, False) == first                  # the same file: the same entry

    shutil.copyfile(B, tmp_path / "new.wvtrace")
    os.replace(tmp_path / "new.wvtrace", p)                             # replaced by another trace
    assert library.read_trace_entry(p, False).title == tb

    p.write_bytes(b"not a trace")                                       # damaged in place
    assert library.read_trace_entry(p, False).title == "mine"            # listed by its name
    shutil.copyfile(A, p)                                               # and mended: read again
    assert library.read_trace_entry(p, False).title == ta


def test_each_shipped_trace_header_is_checked_once_per_process(monkeypatch):
    from viz.trace import tracefile

    calls = []
    real = tracefile.read_header
    monkeypatch.setattr(tracefile, "read_header", lambda p: calls.append(p) or real(p))
    monkeypatch.setattr(library, "_FIELDS", {})
    monkeypatch.setattr(library, "_disk", {})              # nor the cache folder's copy
    paths = tracefile.shipped()
    first = [library.read_trace_entry(p) for p in paths]
    assert len(calls) == len(paths) > 50
    again = [library.read_trace_entry(p) for p in paths]
    assert again == first and len(calls) == len(paths)                   # no header read twice


def test_a_scenario_or_launch_file_edited_is_read_again(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('title = "first"\ntags = ["a"]\n')
    assert library.read_entry(p, False).title == "first"
    assert library.read_entry(p, False).tags == ("a",)
    p.write_text('title = "second, longer"\ntags = ["b", 3]\n')
    e = library.read_entry(p, False)
    assert (e.title, e.tags) == ("second, longer", ("b",))
    p.write_text("title = [broken")                       # unreadable: listed by its name
    assert library.read_entry(p, False).title == "mine"
    q = tmp_path / "k.launch.toml"
    q.write_text('kernel = "k1"\ntitle = "one"\n')
    assert (library.read_launch_entry(q).kernel, library.read_launch_entry(q).title) == ("k1", "one")
    q.write_text('kernel = "k22"\ntitle = "two"\n')
    assert (library.read_launch_entry(q).kernel, library.read_launch_entry(q).title) == ("k22", "two")


def test_a_window_reads_each_listed_file_once(qtbot, tmp_path, monkeypatch):
    """Building a window lists every file four times; each is parsed once."""
    from app_helpers import make_window

    monkeypatch.setenv("WARPVIZ_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("WARPVIZ_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(library, "_FIELDS", {})
    monkeypatch.setattr(library, "_disk", {})              # nor the cache folder's copy
    read = []
    for name in ("_scenario_fields", "_launch_fields", "_trace_fields"):
        real = getattr(library, name)
        monkeypatch.setattr(library, name, lambda p, real=real: read.append(p) or real(p))
    w = make_window(qtbot)
    listed = library.entries()
    assert len(listed) > 200 and sorted(read) == sorted(e.path for e in listed)
    w.close()
