"""The guided lessons: each step opens on the instruction it is about,
in English and Chinese, and every count its words quote is filled in from the model's
figures of the warp instruction on screen; a scenario's ``focus`` says where it opens."""

from __future__ import annotations

import re

import pytest

from viz import i18n
from viz.frames import Cursor, Timeline, conflict_ways
from viz.lessons import PLACEHOLDERS, figures, fill, lessons, lessons_dir, load_lesson
from viz.scenario import ScenarioError, load, loads

NEW = ("global-coalescing", "vector-loads", "xor-vs-padding", "ldmatrix-tma-swizzles")
# a count typed into the words instead of a {name}: "32 wavefronts", "4 个扇区"
TYPED = re.compile(r"\b\d[\d,]*\s*(wavefronts?|sectors?|bank conflicts?|conflicts?|phases?|requests?|lines?)\b"
                   r"|\d[\d,]*\s*个?\s*(波前|扇区|冲突|阶段|请求|缓存行)")
FIELD = re.compile(r"\{(\w+)\}")


def _raw_steps(name: str) -> list[dict]:
    import tomllib

    return tomllib.loads((lessons_dir() / f"{name}.toml").read_text("utf-8"))["step"]


def _opened_at(stop) -> int:
    """The instruction (0-based) a stop opens at: its own, else its scenario's focus, else 0."""
    if stop.instruction is not None:
        return stop.instruction
    sc = load(stop.path)
    return sc.focus - 1 if sc.focus else 0


@pytest.fixture
def english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("name", NEW)
def test_every_step_opens_on_its_instruction_and_quotes_the_models_figures(name, english):
    lesson = load_lesson(lessons_dir() / f"{name}.toml")
    raw = _raw_steps(name)
    assert len(lesson.stops) == len(raw) >= 5
    stems = [s.path.stem for s in lesson.stops]
    assert len(set(stems)) == len(stems)               # Ctrl+Right finds each step by its scenario
    for stop, entry in zip(lesson.stops, raw):
        for key in ("say", "say_zh"):
            assert entry[key] and not TYPED.search(entry[key]), (stop.path.stem, key, entry[key])
        assert set(FIELD.findall(entry["say"])) == set(FIELD.findall(entry["say_zh"])), stop.path.stem
        sc = load(stop.path)
        tl = Timeline(sc)
        k = _opened_at(stop)
        assert k > 0 or stop.instruction == 0 or sc.focus in (0, 1)
        d = tl.detail(Cursor(k, 0, 0, 0))
        quoted = set(FIELD.findall(entry["say"]))
        # a step about wavefronts is on a shared instruction, one about sectors on a global one
        if quoted & {"wavefronts", "phases", "conflicts", "ways"}:
            assert d.space == "shared", (stop.path.stem, k + 1)
        if quoted & {"sectors", "lines", "efficiency"}:
            assert d.space == "global", (stop.path.stem, k + 1)
        values = figures(d)
        assert values["wavefronts"] == d.wavefronts and values["sectors"] == len(d.sectors)
        assert values["conflicts"] == d.wavefronts - d.active_phases and values["instruction"] == k + 1
        if d.space == "shared" and d.wavefronts:
            assert values["ways"] == conflict_ways(d)          # the n-way the picture's summary says
        text = fill(stop.say, d)
        assert "{" not in text
        for field in quoted:         # each quoted figure is there, as the model gives it
            v = values[field]
            assert (f"{v:,}" if isinstance(v, int) else v) in text, (stop.path.stem, field, text)


def test_the_xor_lesson_quotes_32_wavefronts_unpadded_and_1_padded_or_swizzled(english):
    lesson = load_lesson(lessons_dir() / "xor-vs-padding.toml")
    said = {}
    for stop in lesson.stops:
        d = Timeline(load(stop.path)).detail(Cursor(_opened_at(stop), 0, 0, 0))
        said[stop.path.stem] = fill(stop.say, d)
    assert "wavefronts: 32 for phases: 1 (a 32-way bank conflict)" in said["transpose-tile"]
    assert "wavefronts: 1," in said["transpose-tile-pad"] and "wavefronts: 1," in said["transpose-tile-xor"]
    assert said["transpose-tile-xor4"].endswith("wavefronts: 32.")


def test_the_lessons_read_in_chinese(english):
    i18n.set_language("zh_CN")
    found, problems = lessons()
    assert problems == []
    by = {x.name: x for x in found}
    assert set(NEW) <= set(by)
    assert by["xor-vs-padding"].title == "XOR 重排与填充"
    stop = by["xor-vs-padding"].stops[0]
    d = Timeline(load(stop.path)).detail(Cursor(_opened_at(stop), 0, 0, 0))
    assert fill(stop.say, d).startswith("未填充分块的按列读取") and "波前 32 个" in fill(stop.say, d)


@pytest.mark.parametrize("body, problem", [
    ('[[step]]\nscenario = "coalesced"\nsay = "{sector} moved"\n', "{sector} is not a figure"),
    ('[[step]]\nscenario = "coalesced"\nsay = "a {brace"\n', "brace"),
    ('[[step]]\nscenario = "coalesced"\nsay = 3\n', "must be text"),
    ('[[step]]\nscenario = "coalesced"\nsay = "' + "x" * 2001 + '"\n', "at most 2000"),
    ('[[step]]\nscenario = "coalesced"\nsays = "hi"\n', "unknown key 'says'"),
    ('scenarios = ["coalesced"]\n[[step]]\nscenario = "coalesced"\n', "not both"),
    ('[[step]]\nscenario = "coalesced"\nsay = "{wavefronts.__class__}"\n', "is not a figure"),
])
def test_a_bad_step_is_one_paragraph_naming_the_field(tmp_path, body, problem, english):
    p = tmp_path / "mine.toml"
    p.write_text('title = "t"\n' + body, "utf-8")
    with pytest.raises(ScenarioError) as e:
        load_lesson(p)
    assert problem in str(e.value) and "mine.toml" in str(e.value)


def test_fill_without_a_picture_leaves_question_marks():
    assert fill("sectors: {sectors}", None) == "sectors: ?"
    assert fill("", None) == "" and set(PLACEHOLDERS) >= {"wavefronts", "sectors", "efficiency"}


# ------------------------------------------------------------------ scenario focus

def test_transpose_tile_is_about_its_column_read():
    sc = load("transpose-tile")
    assert sc.focus == 9
    d = Timeline(sc).detail(Cursor(sc.focus - 1, 0, 0, 0))
    assert d.space == "shared" and d.op == "load" and d.wavefronts == 32


@pytest.mark.parametrize("value, problem", [
    ("0", "from 1 to 2, not 0"), ("3", "from 1 to 2, not 3"), ('"1"', "not '1'"), ("true", "not True"),
    ("1.5", "not 1.5"), ("[1]", "not list"),
])
def test_a_bad_focus_names_the_key_and_the_range(value, problem, english):
    text = f'title = "t"\nfocus = {value}\n' + COPY
    with pytest.raises(ScenarioError) as e:
        loads(text, source="mine.toml")
    assert "focus" in str(e.value) and problem in str(e.value), str(e.value)


def test_a_good_focus_is_kept():
    assert loads('title = "t"\nfocus = 2\n' + COPY).focus == 2
    assert loads('title = "t"\n' + COPY).focus == 0


COPY = """
[launch]
block = [32]
grid = [1]
[arrays.a]
space = "global"
type = "float"
shape = [32]
[[access]]
op = "load"
at = "a[threadIdx.x]"
[[access]]
op = "store"
at = "a[threadIdx.x]"
"""
