"""The library's fields kept in the cache folder (``viz.app.library.DISK_CACHE``): the next
start lists the built-ins and shipped traces without reading them again, and a damaged or
planted cache file is ignored, never trusted (start-up)."""

from __future__ import annotations

import json

import pytest

from viz.app import library
from viz.trace import tracefile


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPVIZ_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(library, "_FIELDS", {})
    monkeypatch.setattr(library, "_disk", None)
    monkeypatch.setattr(library, "_disk_new", False)
    return tmp_path / "cache" / library.DISK_CACHE


def _fresh(monkeypatch):
    """As a new process: nothing in memory."""
    monkeypatch.setattr(library, "_FIELDS", {})
    monkeypatch.setattr(library, "_disk", None)


def test_the_next_start_reads_no_trace_header(cache, monkeypatch):
    first = library.entries()
    assert cache.is_file()
    data = json.loads(cache.read_text("utf-8"))
    assert data["version"] == 1 and len(data["fields"]) == len(first)
    _fresh(monkeypatch)
    calls = []
    real = tracefile.read_header
    monkeypatch.setattr(tracefile, "read_header", lambda p: calls.append(p) or real(p))
    again = library.entries()
    assert calls == [] and again == first


@pytest.mark.parametrize("planted", [
    "not json", "[]", '{"version": 2, "fields": {}}', '{"version": 1, "fields": []}',
    '{"version": 1, "fields": {"k": {"title": 3}}}', '{"version": 1, "fields": {"k": {"evil": "x"}}}',
    '{"version": 1, "fields": {"k": {"tags": "shared"}}}', "[" * 100_000,
])
def test_a_damaged_or_planted_cache_is_ignored_and_rewritten(cache, monkeypatch, planted):
    cache.parent.mkdir(parents=True)
    cache.write_text(planted, "utf-8")
    got = library.entries()
    byname = {e.name: e for e in got}
    assert byname["transpose-tile"].title == "Transpose through a shared tile (unpadded)"
    assert json.loads(cache.read_text("utf-8"))["version"] == 1          # rewritten with the real fields


def test_a_cached_entry_whose_file_changed_is_read_again(cache, monkeypatch, tmp_path):
    user = tmp_path / "mine.wvtrace"
    import shutil

    shutil.copy(tracefile.shipped()[0], user)
    assert library.read_trace_entry(user).title
    library.save_disk_cache()
    _fresh(monkeypatch)
    user.write_bytes(b"not a zip")                      # same path, another file: not the cached fields
    assert library.read_trace_entry(user).title == "mine"
