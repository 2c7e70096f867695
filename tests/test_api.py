"""The Python API (viz.api): scenarios from names, files, TOML and keywords; the figures of
`warpviz analyze`; frames, layout maps and animations that show themselves in Jupyter and
save through the exporter; Qt only when a picture is drawn."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from viz import api
from viz.engine import analyze
from viz.export import ExportError
from viz.layout import LayoutError
from viz.layout_text import layout_map as model_map
from viz.report import to_json
from viz.scenario import ScenarioError, load

ROOT = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG\r\n\x1a\n"


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def test_importing_and_analysing_loads_no_qt():
    code = ("import sys, viz; from viz import api; sc = api.scenario('cute-sw128-tile'); sc.analyze(); "
            "api.layout_map('(8,64):(64,1)').offsets; "
            "print([m for m in sys.modules if m.startswith(('PySide6', 'viz.render', 'pyqtgraph'))])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_four_ways_to_build_give_the_cli_figures(tmp_path):
    want = to_json(analyze(load("transpose-tile")))["metrics"]
    text = load("transpose-tile").text
    path = tmp_path / "t.toml"
    path.write_text(text)
    for sc in (api.scenario("transpose-tile"), api.scenario(file=path), api.scenario(str(path)),
               api.scenario(toml=text)):
        assert sc.analyze().metrics == want
    kw = api.scenario(block=[32, 8], grid=[8, 8], params={"W": 256, "TILE": 32, "ROWS": 8},
                      arrays={"in": {"space": "global", "type": "float", "shape": ["W", "W"]},
                              "out": {"space": "global", "type": "float", "shape": ["W", "W"]},
                              "tile": {"space": "shared", "type": "float", "shape": ["TILE", "TILE"]}},
                      access=[a for a in (
                          {"op": "load", "at": "in[blockIdx.y*TILE + threadIdx.y + j][blockIdx.x*TILE + threadIdx.x]",
                           "for": {"j": "0:TILE:ROWS"}},
                          {"op": "store", "at": "tile[threadIdx.y + j][threadIdx.x]", "for": {"j": "0:TILE:ROWS"}},
                          {"op": "load", "at": "tile[threadIdx.x][threadIdx.y + j]", "for": {"j": "0:TILE:ROWS"}},
                          {"op": "store", "at": "out[blockIdx.x*TILE + threadIdx.y + j][blockIdx.y*TILE + threadIdx.x]",
                           "for": {"j": "0:TILE:ROWS"}})])
    assert kw.analyze().metrics == want
    a = kw.analyze()
    assert a["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 65536
    assert a.json()["metrics"] == want and "totals" in a.table() and "<pre>" in a._repr_html_()


def test_keywords_with_a_layout_declare_format_2_and_strings_survive():
    sc = api.scenario(title='a "quoted" title, 中文', block=[32], grid=[1],
                      arrays={"t": {"space": "shared", "type": "int4", "layout": "Sw<3,0,3> o (64,8):(8,1)"}},
                      access={"op": "load", "at": "t[lane][0]"})
    assert sc.model.format == 2 and sc.title == 'a "quoted" title, 中文'
    assert sc.model.array("t").shape == (64, 8)


def test_params_and_with_params():
    sc = api.scenario("transpose-tile")
    assert sc.with_params(PAD=1).analyze().metrics == api.scenario("transpose-tile", set={"PAD": 1}).analyze().metrics
    assert sc.with_params(PAD=1).analyze()["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 2048


@pytest.mark.parametrize("kwargs, err, fragment", [
    ({"toml": "title = 1"}, ScenarioError, "title"),
    ({"block": [32], "grid": [1], "arrays": {"t": {"space": "shared", "type": "half", "layout": "(8,64):(65,1)"}},
      "access": [{"op": "load", "at": "t[0][lane]"}]}, ScenarioError, "codomain overflows"),
    ({"block": [32], "arrays": {"t": 3}}, ValueError, "must be a dict"),
    ({"block": [32], "params": {"X": object()}}, ValueError, "cannot be written in a scenario"),
])
def test_bad_input_raises_the_clis_message(kwargs, err, fragment):
    with pytest.raises(err, match=fragment):
        api.scenario(**kwargs)


def test_one_source_only():
    with pytest.raises(ValueError, match="give one of"):
        api.scenario("transpose-tile", toml="x")
    with pytest.raises(ValueError, match="give one of"):
        api.scenario()


def test_frame_shows_and_saves(tmp_path):
    sc = api.scenario("cute-sw128-tile")
    f = sc.frame(instruction=17, size=(640, 360))
    png = f._repr_png_()
    assert png.startswith(PNG) and f._repr_svg_() is None
    svg = sc.frame(instruction=17, size=(640, 360), prefer="svg")._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "tile[h + lane][c]" in svg          # the access shown in the frame
    out = f.save(tmp_path / "f.png")
    assert out.read_bytes().startswith(PNG)
    assert sc.frames(17)[-1] in sc.frame(instruction=17, prefer="svg").svg()
    with pytest.raises(ExportError, match="instruction '99' is outside 1..32"):
        sc.frame(instruction=99)
    with pytest.raises(ExportError, match=".png or .svg"):
        f.save(tmp_path / "f.gif")


def test_a_picture_is_an_rgb_array_with_the_png_exports_pixels(tmp_path):
    """np.asarray(picture): (height, width, 3) uint8 RGB, pixel for pixel the PNG that save()
    writes (read back here by Qt, not by the decoder the picture uses)."""
    from PySide6.QtGui import QImage, qBlue, qGreen, qRed

    f = api.scenario("transpose-tile").frame(instruction=1, size=(320, 200))
    a = np.asarray(f)
    assert a.shape == (200, 320, 3) and a.dtype == np.uint8
    img = QImage(str(f.save(tmp_path / "f.png")))
    assert (img.width(), img.height()) == (320, 200)
    points = [(0, 0), (319, 199), (160, 100), (40, 150), (280, 30)]
    for x, y in points:
        rgb = img.pixel(x, y)
        assert tuple(a[y, x]) == (qRed(rgb), qGreen(rgb), qBlue(rgb)), (x, y)
    from viz.export import image_bgra
    bgra = image_bgra(img.convertToFormat(QImage.Format.Format_RGB32))
    assert np.array_equal(a, bgra[..., 2::-1])                     # every pixel
    assert len(np.unique(a.reshape(-1, 3), axis=0)) > 10          # a drawing, not a blank
    assert np.asarray(f, dtype=np.float32).dtype == np.float32
    assert np.array_equal(np.array(f), a)
    m = np.asarray(api.layout_map("(4,8):(8,1)", type="float", size=(200, 100)))
    assert m.shape == (100, 200, 3) and m.dtype == np.uint8


def test_metrics_and_accesses_as_dataframes():
    pd = pytest.importorskip("pandas", reason="pandas is optional (in the test extra)")
    an = api.scenario("transpose-tile").analyze()
    m = an.metrics_frame()
    assert isinstance(m, pd.DataFrame) and list(m.columns) == ["value"] and m.index.name == "metric"
    assert m["value"].to_dict() == an.metrics
    assert m.loc["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "value"] == 63488
    a = an.to_dataframe()
    assert len(a) == len(an.accesses) == 4 and a.index.name == "index" and list(a.index) == [0, 1, 2, 3]
    assert list(a["op"]) == [x["op"] for x in an.accesses] == ["load", "store", "load", "store"]
    assert a.loc[0, "sectors"] == an.accesses[0]["sectors"] == 8192
    assert a.loc[2, "bank_conflicts"] == an.accesses[2]["bank_conflicts"]
    assert pd.isna(a.loc[0, "bank_conflicts"])           # a global access has no bank conflicts


def test_a_traces_figures_as_dataframes():
    pd = pytest.importorskip("pandas", reason="pandas is optional (in the test extra)")
    an = api.open_trace(Path(__file__).resolve().parent.parent / "assets" / "traces" / "transpose_pad.wvtrace").analysis()
    assert an.metrics_frame()["value"].to_dict() == an.metrics
    a = an.to_dataframe()
    assert isinstance(a, pd.DataFrame) and len(a) == len(an.accesses) > 0
    assert list(a["number"]) == [x["number"] for x in an.accesses] and list(a["op"]) == [x["op"] for x in an.accesses]


def test_dataframes_without_pandas_say_how_to_get_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real(name, *args, **kwargs)

    an = api.scenario("transpose-tile").analyze()
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    for call, name in ((an.to_dataframe, "Analysis.to_dataframe()"), (an.metrics_frame, "Analysis.metrics_frame()")):
        with pytest.raises(ImportError) as err:
            call()
        assert str(err.value).startswith(f"{name} needs pandas, which warpviz does not install: pip install pandas")
    assert an.metrics["smsp__inst_executed_op_shared_ld.sum"] == 2048       # the dicts need no pandas


def test_the_public_api_is_annotated():
    """Every function and method warpviz exports says its arguments' and its result's types (the
    wheel has py.typed, so type checkers read them; tests/test_packaging.py runs mypy on it)."""
    import inspect

    import warpviz

    missing = []

    def check(name, f):
        sig = inspect.signature(f)
        missing.extend(f"{name}({p.name})" for p in sig.parameters.values()
                       if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty)
        if sig.return_annotation is inspect.Signature.empty and not name.endswith("__init__"):
            missing.append(f"{name} -> ?")

    for n in warpviz.__all__:
        obj = getattr(warpviz, n)
        if inspect.isclass(obj):
            for k, v in vars(obj).items():
                if k.startswith("_") and k not in ("__init__", "__getitem__", "__array__"):
                    continue
                v = v.fget if isinstance(v, property) else v
                if inspect.isfunction(v):
                    check(f"{n}.{k}", v)
        elif inspect.isfunction(obj):
            check(n, obj)
    assert missing == []


def test_layout_map_object():
    m = api.layout_map("Sw<3,3,3> o (8,64):(64,1)")
    assert repr(m) == model_map("Sw<3,3,3> o (8,64):(64,1)").to_text()
    assert m.offsets[1, 0] == 72 and m.banks[1, 0] == 4
    assert m.prefer == "png" and m._repr_png_().startswith(PNG)      # 512 cells: PNG
    small = api.layout_map("(2,(2,2)):(4,(2,1))", type="float")
    svg = small._repr_svg_()
    assert small._repr_png_() is None and all(f">{v}<" in svg for v in range(8))
    with pytest.raises(LayoutError, match="not a power of two"):
        api.layout_map("SwizzledSharedLayout(8, 3, 8, [1, 0])", shape=(8, 64))


def test_an_arrays_layout_map_is_its_layout():
    sc = api.scenario("cute-sw128-tile")
    m = sc.layout_map("tile")
    assert np.array_equal(m.offsets, model_map("Sw<3,0,3> o (64,8):(8,1)", None, "int4").offsets)
    assert m.map.type_name == "int4" and m.map.text.startswith("tile: Sw<3,0,3>")
    pad = api.scenario("transpose-tile-pad").layout_map("tile")
    assert pad.offsets[1, 0] == 33 and "pad 1" in pad.map.text
    with pytest.raises(ScenarioError, match="too many for a map"):
        api.scenario("transpose-tile").layout_map("in")
    with pytest.raises(ScenarioError, match="no array 'nope'"):
        sc.layout_map("nope")


def test_animation_is_an_html5_video_and_saves(tmp_path):
    sc = api.scenario("cute-sw128-tile")
    v = sc.animation(instructions="17", frames="first,last", size=(320, 180), hold=0.5)
    assert v.pictures == 2 and v.seconds == 1.0
    html = v._repr_html_()
    assert html.startswith("<video") and 'type="video/mp4"' in html
    data = base64.b64decode(html.split("base64,")[1].split('"')[0])
    assert data[4:8] == b"ftyp"
    gif = v.save(tmp_path / "a.gif")
    assert gif.read_bytes().startswith(b"GIF8")
    with pytest.raises(ExportError, match="instruction '99' is outside 1..32"):
        sc.animation(instructions="99")


def test_to_toml_is_loadable_toml():
    import tomllib
    d = {"title": "x\n\"y\"\\", "block": [32], "params": {"N": 3}, "access": [{"op": "load", "at": "a[0]",
                                                                               "for": {"j": "0:2"}}]}
    parsed = tomllib.loads(api.to_toml(d))
    assert parsed["title"] == d["title"] and parsed["launch"] == {"block": [32]}
    assert parsed["access"][0]["for"] == {"j": "0:2"}
    json.dumps(parsed)


@pytest.mark.parametrize("name", sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "assets" /
                                                          "scenarios").glob("*.toml")))
def test_every_shipped_scenario_written_by_to_toml_reads_back_the_same(name):
    """to_toml (tomlkit) writes fields that tomllib reads back exactly, and the scenario made
    from them has the same figures as the shipped file."""
    import tomllib

    from viz import assets

    path = assets.scenario_dir() / f"{name}.toml"
    fields = tomllib.loads(path.read_text(encoding="utf-8"))
    assert tomllib.loads(api.to_toml(fields)) == fields

    def outcome(make):
        try:
            return make().analyze().metrics
        except ScenarioError as err:        # misaligned-int2 shows the GPU's fault: the same fault
            return re.sub(r"^.*?, line \d+: ", "", str(err))

    assert outcome(lambda: api.scenario(**fields)) == outcome(lambda: api.scenario(str(path)))
