"""Hostile results, calibration and compile-cache files: a FIFO, a device, a folder, a file
over its limit, deep nesting, a huge integer, NaN, text that is not UTF-8, an empty file, a
string where a number goes. Each is one ResultsError / CalibrationError naming the file and
the field (exit 2 on the command line); the app's import keeps its data and says so in a
message box; a damaged compile-cache entry is built again. Nothing here waits on a clock:
a FIFO that were opened for reading would block the test, which the suite's
faulthandler_timeout then reports."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from viz.fileio import (MAX_JSON_DEPTH, MAX_JSON_DIGITS, ReadRefused, read_bytes_limited, read_json_limited,
                        read_text_limited)
from viz.gpu import results
from viz.gpu.calibration import Calibration, CalibrationError, load_calibration
from viz.gpu.calibrate import read as read_calibration

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "r.json"
    os.mkfifo(p)
    return p


# ---------------------------------------------------------------------------- the reader


@needs_fifo
def test_a_fifo_is_refused_without_waiting_for_a_writer(fifo):
    with pytest.raises(ReadRefused, match=r"r\.json: this is a named pipe \(FIFO\), not a results file"):
        read_bytes_limited(fifo, 100, "results file")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_device_is_refused():
    with pytest.raises(ReadRefused, match="this is a device, not a scenario"):
        read_bytes_limited("/dev/zero", 1 << 20, "scenario")


def test_a_folder_a_missing_file_and_a_large_one(tmp_path):
    with pytest.raises(ReadRefused, match="folder"):
        read_bytes_limited(tmp_path, 100, "results file")
    with pytest.raises(ReadRefused, match="nothere.json: no such file"):
        read_bytes_limited(tmp_path / "nothere.json", 100, "results file")
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(1 << 30)                                          # sparse: nothing is written
    with pytest.raises(ReadRefused, match=r"over warpviz's limit of 1.0 MiB \(1,048,576 bytes\) for a results file"):
        read_bytes_limited(big, 1 << 20, "results file")
    (tmp_path / "ok").write_bytes(b"x" * 100)
    assert read_bytes_limited(tmp_path / "ok", 100, "results file") == b"x" * 100


def test_text_that_is_not_utf8(tmp_path):
    p = tmp_path / "r.json"
    p.write_bytes(b'{\n"a": "\xff"}')
    with pytest.raises(ReadRefused, match="not UTF-8 text \\(line 2 has the byte 0xff\\)"):
        read_text_limited(p, 100, "results file")
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json_limited(p, 100, "results file") == {"a": 1}


@pytest.mark.parametrize("text, problem", [
    ("", "is empty"),
    ("  \n", "is empty"),
    ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), f"nests more than {MAX_JSON_DEPTH} levels"),
    ("[" * 100_000, f"nests more than {MAX_JSON_DEPTH} levels"),
    ('{"a": ' + "9" * 5000 + "}", "an integer of 5,000 digits"),
    ('{"a": NaN}', "NaN is not a number warpviz reads"),
    ('{"a": -Infinity}', "-Infinity is not a number"),
    ('{"a": 1', "not valid JSON"),
])
def test_json_refused_with_the_reason(tmp_path, text, problem):
    p = tmp_path / "r.json"
    p.write_text(text)
    with pytest.raises(ReadRefused, match=problem):
        read_json_limited(p, 1 << 20, "results file")


def test_brackets_inside_strings_are_not_nesting(tmp_path):
    p = tmp_path / "r.json"
    doc = {"a": "[" * 1000 + '\\"{' * 100, "b": [[[1]]]}
    p.write_text(json.dumps(doc))
    assert read_json_limited(p, 1 << 20, "results file") == doc
    p.write_text('{"a": ' + "1" * MAX_JSON_DIGITS + "}")
    assert read_json_limited(p, 1 << 20, "results file") == {"a": int("1" * MAX_JSON_DIGITS)}


# ---------------------------------------------------------------------------- results files


def shipped() -> dict:
    return results.load()


def damaged(tmp_path, change) -> str:
    doc = shipped()
    change(doc)
    p = tmp_path / "damaged.json"
    p.write_text(json.dumps(doc))
    return str(p)


def first(doc: dict, section: str) -> dict:
    return next(iter(doc[section].values()))


@pytest.mark.parametrize("change, field", [
    (lambda d: first(d, "scenarios")["timing"].__setitem__("median_ms", "fast"), "timing needs a numeric median_ms"),
    (lambda d: first(d, "scenarios")["timing"].__setitem__("p90_ms", "slow"), "timing.p90_ms must be a number"),
    (lambda d: first(d, "scenarios")["timing"].__setitem__("p90_ms", 1e300), "is not a finite number"),
    (lambda d: first(d, "scenarios").__setitem__("title", ["a"]), ".title must be a text, not list"),
    (lambda d: first(d, "scenarios").__setitem__("match", "yes"), ".match must be true or false"),
    (lambda d: first(d, "scenarios").__setitem__("mismatches", {}), ".mismatches must be a list"),
    (lambda d: d["device"].__setitem__("sm_count", "132"), "device.sm_count must be a number"),
    (lambda d: first(d, "sweeps")["points"][0].__setitem__("median_ms", "x"), "points[0].median_ms must be a number"),
    (lambda d: first(d, "sweeps").__setitem__("points", [0] * (results.MAX_ITEMS + 1)), "entries (at most"),
    (lambda d: first(d, "scenarios")["model"].__setitem__(next(iter(first(d, "scenarios")["model"])), 1.5),
     "model must map metric names to integers"),
])
def test_wrong_values_named_by_field(tmp_path, change, field):
    path = damaged(tmp_path, change)
    with pytest.raises(results.ResultsError, match=re.escape(field)) as err:
        results.load(path)
    assert str(err.value).startswith(path)


def test_results_json_hostile(tmp_path):
    p = tmp_path / "r.json"
    for text, problem in (("", "is empty"), ('{"version": ' + "1" * 5000 + "}", "5,000 digits"),
                          ("[" * 50_000, "levels deep"), ('{"format": NaN}', "NaN")):
        p.write_text(text)
        with pytest.raises(results.ResultsError, match=problem):
            results.load(p)
    p.write_bytes(b"\xff\xfe{}")
    with pytest.raises(results.ResultsError, match="not UTF-8"):
        results.load(p)


@needs_fifo
def test_bench_show_of_a_fifo_exits_2(fifo, capsys):
    from viz.cli import main

    assert main(["bench", "--traces", "--show", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "named pipe (FIFO)" in err and str(fifo) in err and "Traceback" not in err


def test_bench_show_of_a_string_for_a_number_exits_2(tmp_path, capsys):
    from viz.cli import main

    doc = json.loads(results.shipped_path().with_name("h100-traces.json").read_text())
    first(doc, "traces")["timing"]["median_ms"] = "1.0"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    assert main(["bench", "--traces", "--show", str(p)]) == 2
    assert "timing needs a numeric median_ms" in capsys.readouterr().err


# ---------------------------------------------------------------------------- calibration files


def calibration_doc() -> dict:
    from viz.gpu.calibration import CALIBRATION_DIR

    return json.loads((CALIBRATION_DIR / "nvidia-h100-80gb-hbm3.json").read_text())


@pytest.mark.parametrize("change, problem", [
    (lambda d: first(d, "figures").__setitem__("value", "3000"), "value must be a finite number"),
    (lambda d: first(d, "figures").__setitem__("value", -1), "value must be a finite number from 0"),
    (lambda d: first(d, "figures").__setitem__("runs", "3"), "runs must be a whole number"),
    (lambda d: first(d, "figures").__setitem__("run_values", ["a"]), "run_values must be a list of numbers"),
    (lambda d: d.__setitem__("device", ["x"]), '"device" must be an object'),
    (lambda d: d["device"].__setitem__("name", {"a": 1}), "device.name must be a short text"),
])
def test_calibration_values_named(tmp_path, change, problem):
    doc = calibration_doc()
    change(doc)
    p = tmp_path / "nvidia-h100-80gb-hbm3.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(CalibrationError, match=problem):
        load_calibration("NVIDIA H100 80GB HBM3", tmp_path)
    with pytest.raises(CalibrationError, match=problem):
        read_calibration(p)


def test_calibration_json_hostile(tmp_path):
    p = tmp_path / "c.json"
    for text, problem in (("", "is empty"), ('{"format": ' + "1" * 5000 + "}", "5,000 digits"),
                          ("{" * 50_000, "levels deep"), ('{"figures": {"a": {"value": Infinity}}}', "Infinity")):
        p.write_text(text)
        with pytest.raises(CalibrationError, match=problem):
            read_calibration(p)
    assert Calibration.from_json(calibration_doc()).value("dram_read_gbps") > 0


@needs_fifo
def test_calibrate_show_of_a_fifo_exits_2(fifo, capsys):
    from viz.cli import main

    assert main(["calibrate", "--show", str(fifo)]) == 2
    assert "named pipe (FIFO), not a calibration file" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the compile cache


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc here")
def test_a_damaged_compile_cache_entry_is_built_again(tmp_path, monkeypatch):
    from viz.toolchain import compile as comp

    monkeypatch.setenv("WARPVIZ_CACHE", str(tmp_path))
    src = 'extern "C" __global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n'
    usage = comp.resource_usage(src)
    assert usage["k"]["registers"] > 0
    entry = next(comp.cache_dir().glob("*.usage.json"))
    cubin = next(comp.cache_dir().glob("*.cubin"))
    for text in ("[" * 100_000, "{", '{"k": {"registers": "many"}}', '{"k": {"registers": ' + "9" * 5000 + "}}"):
        entry.write_text(text)
        assert comp.resource_usage(src) == usage          # built again ...
        assert json.loads(entry.read_text()) == usage     # ... and written over the damaged entry
    cubin.write_bytes(b"not a cubin")
    assert comp.compile_cubin(src).startswith(b"\x7fELF")
    assert cubin.read_bytes().startswith(b"\x7fELF")


# ---------------------------------------------------------------------------- the app's import


@needs_fifo
def test_app_import_of_a_fifo_says_so_and_keeps_the_data(qtbot, window, fifo, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    p = window.gpu_panel
    before = p.measurements
    assert before
    shown = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(fifo), "")))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: shown.append(a[2])))
    p._import_dialog()
    assert len(shown) == 1 and "named pipe (FIFO)" in shown[0] and str(fifo) in shown[0]
    assert p.measurements is before
    bad = fifo.with_name("bad.json")
    doc = shipped()
    first(doc, "scenarios")["timing"]["p90_ms"] = "slow"
    bad.write_text(json.dumps(doc))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(bad), "")))
    p._import_dialog()
    assert len(shown) == 2 and "timing.p90_ms must be a number" in shown[1]
    assert p.measurements is before


from app_helpers import user_dirs, window  # noqa: E402,F401 - fixtures
