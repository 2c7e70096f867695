"""The optional `compare` key (the partner Ctrl+M opens) and the name-based fallback."""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viz import assets
from viz.cli import main
from viz.scenario import (ScenarioError, builtin_names, compare_path, load, loads, partner_name, partner_path,
                          resolve)

BUILTINS = builtin_names()


def builtin(name: str) -> Path:
    return assets.scenario_dir() / f"{name}.toml"


def test_every_builtin_names_a_partner_that_exists_and_differs():
    keyed = 0
    for name in BUILTINS:
        text = builtin(name).read_text()
        try:
            sc = load(name)
        except ScenarioError:       # a lesson in an error that fails while loading
            assert 'expect_error = "' in text
            continue
        other = partner_path(sc)
        assert other is not None and other.is_file(), name
        assert other.resolve() != builtin(name).resolve(), name
        assert other.stem in BUILTINS
        if sc.compare:
            keyed += 1
            assert f'compare = "{sc.compare}"' in text
            assert other == builtin(sc.compare)
    assert keyed >= 50   # every built-in with a natural partner names it


def test_the_lecture_pairs():
    assert load("transpose-tile").compare == "transpose-tile-pad"
    assert load("transpose-tile-pad").compare == "transpose-tile"
    assert load("coalesced").compare == "stride-32"
    assert load("aos-float3-r").compare == "soa-float-r"
    assert load("shared-stride-32").compare == "shared-stride-33"


def test_the_key_sits_after_the_title_line():
    for name in BUILTINS:
        lines = builtin(name).read_text().splitlines()
        at = [k for k, ln in enumerate(lines) if ln.startswith("compare = ")]
        if at:
            assert lines[at[0] - 1].startswith("title = "), name


def _with_compare(value: str) -> str:
    text = resolve("coalesced").read_text()
    assert 'compare = "stride-32"' in text
    return text.replace('compare = "stride-32"', f"compare = {value}")


@pytest.mark.parametrize("value, words", [
    ('"stride-23"', ['compare = "stride-23" is not a built-in scenario', "Did you mean stride-2"]),
    ('"transpose-tile-pd"', ["Did you mean transpose-tile-pad"]),
    ('"coalesced"', ["names this scenario itself"]),
    ('""', ["compare is empty", "Name a built-in"]),
    ("3", ["compare must be a string", 'Write it in quotes']),
    ('"nowhere/other.toml"', ["no such file next to", "path relative to this file's folder"]),
    ('"../nowhere/other.toml"', ["leads outside this scenario's folder", "Copy the other scenario next to this file"]),
])
def test_a_compare_that_names_nothing_known_is_an_error_with_file_line_and_fix(value, words):
    src = str(resolve("coalesced"))
    with pytest.raises(ScenarioError) as err:
        loads(_with_compare(value), source=src, name="coalesced")
    msg = str(err.value)
    assert msg.startswith(f"{src}, line 2: compare")
    for w in words:
        assert w in msg, msg


def test_a_compare_relative_to_the_file(tmp_path):
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / "other.toml"
    other.write_text(resolve("stride-2").read_text().replace('compare = "coalesced"', ""))
    mine = tmp_path / "mine.toml"
    mine.write_text(_with_compare('"sub/other.toml"'))
    sc = load(mine)
    assert sc.compare == "sub/other.toml"
    assert partner_path(sc) == tmp_path / "sub" / "other.toml"
    # A sibling by name (NAME.toml next to the file) wins over a built-in of that name.
    (tmp_path / "stride-32.toml").write_text(resolve("stride-32").read_text())
    mine.write_text(_with_compare('"stride-32"'))
    assert partner_path(load(mine)) == tmp_path / "stride-32.toml"
    assert compare_path("stride-32", "<scenario>") == builtin("stride-32")
    assert compare_path("", str(mine)) is None


def test_the_cli_reports_a_bad_compare_with_status_2(tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text(_with_compare('"no-such-scenario"'))
    assert main(["analyze", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}, line 2: compare" in err and "not a built-in scenario" in err


def test_fallback_by_name():
    names = ["transpose-tile", "transpose-tile-bitrev", "transpose-tile-pad", "transpose-tile-xor", "coalesced",
             "shared-stride-1", "shared-stride-32", "mine"]
    assert partner_name("transpose-tile", names) == "transpose-tile-pad"       # not the alphabetical -bitrev
    assert partner_name("transpose-tile-xor", names) == "transpose-tile"       # the scenario it varies
    assert partner_name("transpose-tile-xor-edited", names) == "transpose-tile-xor"
    assert partner_name("shared-stride-8", names) == "shared-stride-1"
    assert partner_name("mine", ["mine"]) is None
    # A file of the user's without a key: its name decides.
    assert partner_path(loads(resolve("transpose-tile").read_text().replace('compare = "transpose-tile-pad"\n', ""),
                              source="/elsewhere/transpose-tile-swz.toml")).stem == "transpose-tile"


@given(st.lists(st.from_regex(r"[a-z]{1,3}(-[a-z0-9]{1,3}){0,3}", fullmatch=True), min_size=1, max_size=12),
       st.integers(0, 11))
def test_fallback_is_another_of_the_names(names, k):
    name = names[k % len(names)]
    got = partner_name(name, names)
    if set(names) == {name}:
        assert got is None
    else:
        assert got in names and got != name


def test_a_copy_of_a_builtin_under_its_own_name_may_compare_with_that_builtin(tmp_path):
    mine = tmp_path / "transpose-tile.toml"            # the user's copy of transpose-tile-pad, renamed
    mine.write_text(resolve("transpose-tile-pad").read_text())
    assert partner_path(load(mine)) == builtin("transpose-tile")
    with pytest.raises(ScenarioError, match="names this scenario itself"):
        loads(resolve("transpose-tile-pad").read_text(), name="transpose-tile")   # text alone, named like its key
