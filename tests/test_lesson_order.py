"""Lessons (viz/lessons.py): a lesson file's order, its checks, and the next / previous
scenario it gives; the shipped lesson follows docs/guide/lesson-plan.md's table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from viz import assets
from viz.lessons import Stop, lessons, lessons_dir, load_lesson, neighbour
from viz.scenario import ScenarioError, builtin_names

ROOT = Path(__file__).resolve().parents[1]


def builtin(name: str) -> Path:
    return assets.scenario_dir() / f"{name}.toml"


def test_the_shipped_lesson_follows_the_lesson_plan():
    """The table of the lesson plan, scenario by scenario, then the ones "to keep them thinking"."""
    plan = (ROOT / "docs" / "guide" / "lesson-plan.md").read_text("utf-8")
    table = plan.split("## The plan", 1)[1].split("## To keep them thinking", 1)[0]
    names: list[str] = []
    for row in table.splitlines():
        cells = row.split("|")
        if len(cells) > 3 and cells[1].strip() and not set(cells[1].strip()) <= set("-"):
            names += [n for n in re.findall(r"`([a-z0-9-]+)`", cells[2]) if n in builtin_names()]
    thinking = plan.split("## To keep them thinking", 1)[1].split("## If you have", 1)[0]
    extra = [n for n in re.findall(r"^- `([a-z0-9-]+)`(?: and `([a-z0-9-]+)`)?", thinking, re.M) for n in n if n]
    lesson = load_lesson(lessons_dir() / "coalescing-and-banks.toml")
    got = [s.path.stem for s in lesson.stops]
    want = list(dict.fromkeys(names)) + extra
    assert got == want
    assert all(s.path == builtin(s.path.stem) for s in lesson.stops)
    tile = [s for s in lesson.stops if s.path.stem.startswith("transpose-tile") and s.instruction is not None]
    assert [s.instruction for s in tile] == [8, 8, 8]      # "transpose-tile, instruction 9" (1-based in the file)


def test_next_and_previous_follow_the_lesson_then_stop_at_its_ends():
    lesson = load_lesson(lessons_dir() / "coalescing-and-banks.toml")
    paths = [s.path for s in lesson.stops]
    library = [builtin(n) for n in builtin_names()]
    walk, here = [paths[0]], paths[0]
    while (got := neighbour(here, 1, [lesson], library)) is not None:
        stop, which = got
        assert which == lesson
        walk.append(here := stop.path)
    assert walk == paths
    back = [here]
    while (got := neighbour(here, -1, [lesson], library)) is not None:
        back.append(here := got[0].path)
    assert back == paths[::-1]


def test_a_scenario_in_no_lesson_follows_the_library_order():
    lesson = load_lesson(lessons_dir() / "coalescing-and-banks.toml")
    library = [builtin(n) for n in ("vector-int", "vector-int2", "vector-int4")]
    assert neighbour(library[0], 1, [lesson], library) == (Stop(library[1]), None)
    assert neighbour(library[1], -1, [lesson], library) == (Stop(library[0]), None)
    assert neighbour(library[2], 1, [lesson], library) is None
    assert neighbour(None, 1, [lesson], library) == (Stop(library[0]), None)
    # A scenario not in the list shown (another tag chosen): the list's first, or last going back.
    assert neighbour(builtin("char-shared"), 1, [], library) == (Stop(library[0]), None)
    assert neighbour(builtin("char-shared"), -1, [], library) == (Stop(library[2]), None)
    assert neighbour(None, 1, [], []) is None


def test_the_lesson_followed_wins_where_two_lessons_list_a_scenario(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text('scenarios = ["coalesced", "stride-2"]\n')
    b = tmp_path / "b.toml"
    b.write_text('scenarios = ["coalesced", "shared-stride-1"]\n')
    la, lb = load_lesson(a), load_lesson(b)
    assert neighbour(builtin("coalesced"), 1, [la, lb], [])[0].path == builtin("stride-2")
    assert neighbour(builtin("coalesced"), 1, [la, lb], [], prefer=lb)[0].path == builtin("shared-stride-1")


def test_a_lesson_names_files_relative_to_itself_and_is_read_by_path_resolution(tmp_path, monkeypatch):
    (tmp_path / "sc").mkdir()
    (tmp_path / "sc" / "mine.toml").write_text(builtin("coalesced").read_text())
    f = tmp_path / "l.toml"
    f.write_text('title = "Mine"\nscenarios = ["sc/mine.toml", { scenario = "stride-2", instruction = 2 }]\n')
    lesson = load_lesson(f)
    assert lesson.title == "Mine"
    assert lesson.stops == (Stop(tmp_path / "sc" / "mine.toml"), Stop(builtin("stride-2"), 1))
    monkeypatch.chdir(tmp_path / "sc")
    assert lesson.index(Path("mine.toml")) == 0          # a relative path is the same file
    found, problems = lessons(tmp_path)
    shipped = sorted(lessons_dir().glob("*.toml"))          # the shipped lessons first, by file name
    assert len(shipped) >= 5 and [x.path for x in found] == shipped + [f] and problems == []


def test_a_lesson_names_a_shipped_trace_by_its_name(tmp_path):
    f = tmp_path / "l.toml"
    f.write_text('title = "Traced"\nscenarios = ["transpose-tile", { scenario = "transpose_pad", instruction = 3 }]\n')
    lesson = load_lesson(f)
    assert lesson.stops == (Stop(builtin("transpose-tile")), Stop(assets.traces_dir() / "transpose_pad.wvtrace", 2))
    f.write_text('scenarios = ["../traces/transpose_pad"]\n')        # a path stays a path: relative to the lesson
    with pytest.raises(ScenarioError, match="no such file"):
        load_lesson(f)


BAD = [
    ('scenarios = "coalesced"', "scenarios", "not a list"),
    ('title = 3\nscenarios = ["coalesced"]', "title", "must be text"),
    ("scenarios = []", "scenarios", "not a list"),
    ('scenarios = ["no-such-scenario"]', "scenarios[0]", "not a built-in"),
    ('scenarios = ["gone.toml"]', "scenarios[0]", "no such file"),
    ("scenarios = [3]", "scenarios[0]", "not a scenario name"),
    ('scenarios = [{ scenario = "coalesced", instruction = 0 }]', "scenarios[0]", "whole number"),
    ('scenarios = [{ scenario = "coalesced", instruction = true }]', "scenarios[0]", "whole number"),
    ('scenarios = [{ scenario = "coalesced", instr = 2 }]', "scenarios[0]", "unknown key 'instr'"),
    ("scenarios = [", "TOML syntax", ""),
]


@pytest.mark.parametrize("text,where,problem", BAD)
def test_a_bad_lesson_file_says_where_and_what(tmp_path, text, where, problem):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as err:
        load_lesson(f)
    assert err.value.source == str(f) and err.value.where == where and problem in err.value.problem
    assert err.value.fix
    found, problems = lessons(tmp_path)               # skipped, and said
    assert [x.path for x in found] == sorted(lessons_dir().glob("*.toml"))
    assert [p.source for p in problems] == [str(f)]


def test_a_huge_or_binary_lesson_file_is_refused(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text('scenarios = ["coalesced"]\n' + "#" * 300_000)
    with pytest.raises(ScenarioError, match="not a lesson"):
        load_lesson(big)
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00scenarios")
    with pytest.raises(ScenarioError, match="cannot be read"):
        load_lesson(binary)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(builtin_names()), min_size=1, max_size=12, unique=True),
       st.integers(0, 11), st.sampled_from([1, -1]))
def test_a_step_and_its_reverse_come_back(names, k, delta):
    """In any list of distinct scenarios, stepping one way then the other returns to the start."""
    paths = [builtin(n) for n in names]
    here = paths[k % len(paths)]
    got = neighbour(here, delta, [], paths)
    if got is None:
        assert (k % len(paths)) == (len(paths) - 1 if delta > 0 else 0)
        return
    assert neighbour(got[0].path, -delta, [], paths)[0].path == here
