"""The file format is versioned: files without `format` (written before it existed) and
`format = 1` files load and analyse alike; a newer file is refused, never misread.
(The CLI side of the refusal is in test_errors.py.)"""

import pytest

from viz import assets
from viz.engine import analyze
from viz.report import to_json
from viz.scenario import FORMAT_VERSION, ScenarioError, load, loads

# The scenario format's original example file (docs/scenario-format.md), written before `format` existed.
OLD = """
title = "Transpose through a padded shared tile"
notes = "Optional text shown in the app."

[launch]
block = [32, 8]
grid  = [8, 8]

[params]
W = 256
TILE = 32
ROWS = 8

[arrays.src]
space = "global"
type  = "float"
shape = [65536]

[arrays.tile]
space   = "shared"
type    = "float"
shape   = [32, 32]
pad     = 1
swizzle = "none"
offset  = 0

[[access]]
op   = "load"
at   = "src[(blockIdx.y*TILE + threadIdx.y + j)*W + blockIdx.x*TILE + threadIdx.x]"
for  = { j = "0:TILE:ROWS" }
when = "threadIdx.x < 16"
"""


def figures(sc):
    doc = to_json(analyze(sc))
    return doc["metrics"], doc["accesses"]


def test_this_warpviz_reads_formats_1_to_3():
    assert FORMAT_VERSION == 3       # 2: array layouts (CuTe, Triton), Sw<B,M,S> and tma: swizzles;
    #                                  3: ldmatrix / stmatrix (and the other Hopper access kinds)


def test_file_without_format_keeps_loading_as_format_1():
    old = loads(OLD, source="old.toml")
    new = loads("format = 1\n" + OLD, source="new.toml")
    assert old.format == new.format == 1
    assert figures(old) == figures(new)


def test_format_1_file_on_disk_loads(tmp_path):
    path = tmp_path / "v1.toml"
    path.write_text("format = 1\n" + OLD)
    sc = load(path)
    assert sc.format == 1 and sc.title == "Transpose through a padded shared tile"


@pytest.mark.parametrize("name", sorted(p.stem for p in assets.scenario_dir().glob("*.toml")))
def test_every_builtin_is_a_format_this_warpviz_reads(name):
    try:
        sc = load(name)
    except ScenarioError:
        return  # a lesson in an error (expect_error); test_library checks those
    assert 1 <= sc.format <= FORMAT_VERSION


def test_newer_format_says_update():
    with pytest.raises(ScenarioError) as info:
        loads(OLD.replace('title =', f"format = {FORMAT_VERSION + 1}\ntitle ="), source="future.toml")
    err = info.value
    assert err.where == "format"
    assert "newer than this warpviz reads" in err.problem and "update warpviz" in err.fix and "Update warpviz" in str(err)


@pytest.mark.parametrize("value", ["0", "-1", '"1"', "1.0", "true", "[1]"])
def test_format_must_be_a_positive_integer(value):
    with pytest.raises(ScenarioError) as info:
        loads(f"format = {value}\n" + OLD, source="bad.toml")
    assert info.value.where == "format" and f"write format = {FORMAT_VERSION}" in info.value.fix
