"""A scenario names files only in its own folder: a ``compare`` that leads
outside it (an absolute path, ``~``, ``..`` above the folder) is an error naming the file, the
line and the fix, and the file it names is never opened or drawn, in the CLI, the export and
the app alike. Built-in names and files beside the scenario still work."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app_helpers import make_window, user_dirs  # noqa: F401 - fixture
from viz.cli import main
from viz.scenario import ScenarioError, compare_in_text, compare_outside, compare_path, load, resolve

SECRET = "SECRET OUTSIDE TITLE"


def _scenario(title: str, compare: str | None = None) -> str:
    text = resolve("stride-2").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("compare = ")]
    out = "\n".join(lines) + "\n"
    out = out.replace(next(ln for ln in lines if ln.startswith("title = ")), f'title = "{title}"', 1)
    if compare is not None:
        out = out.replace(f'title = "{title}"', f'title = "{title}"\ncompare = "{compare}"', 1)
    return out


@pytest.fixture
def layout(tmp_path):
    """tmp/secret.toml (not the user's to share) and tmp/proj/a/b/mine.toml beside its partner."""
    (tmp_path / "secret.toml").write_text(_scenario(SECRET))
    folder = tmp_path / "proj" / "a" / "b"
    folder.mkdir(parents=True)
    (folder / "partner.toml").write_text(_scenario("the partner"))
    return tmp_path, folder


@pytest.mark.parametrize("value", ["../../../secret.toml", "{tmp}/secret.toml", "~/secret.toml",
                                   "deeper/../../../../secret.toml", ".."])
def test_a_compare_outside_the_folder_is_an_error_and_never_opened(layout, value):
    tmp, folder = layout
    value = value.format(tmp=tmp)
    mine = folder / "mine.toml"
    mine.write_text(_scenario("mine", value))
    with pytest.raises(ScenarioError) as err:
        load(mine)
    msg = str(err.value)
    assert msg.startswith(f"{mine}, line 2: compare: compare = \"{value}\" leads outside this scenario's folder")
    assert "Copy the other scenario next to this file" in msg
    # the helpers that find a partner for an invalid file do not reach it either
    assert compare_outside(value, str(mine))
    assert compare_path(value, str(mine)) is None
    assert compare_in_text(mine.read_text(), str(mine)) is None


def test_inside_the_folder_and_built_in_names_still_work(layout):
    _, folder = layout
    mine = folder / "mine.toml"
    for value, want in (("partner.toml", folder / "partner.toml"), ("partner", folder / "partner.toml"),
                        ("./partner.toml", folder / "partner.toml"), ("../b/partner.toml", folder / "partner.toml"),
                        ("transpose-tile", resolve("transpose-tile"))):
        mine.write_text(_scenario("mine", value))
        sc = load(mine)
        assert compare_path(sc.compare, sc.source).resolve() == want.resolve(), value
    (folder / "deeper").mkdir()
    (folder / "deeper" / "x.toml").write_text(_scenario("below"))
    mine.write_text(_scenario("mine", "deeper/x.toml"))
    assert compare_path(load(mine).compare, str(mine)) == folder / "deeper" / "x.toml"


def test_text_without_a_file_cannot_name_a_file_outside_either(layout):
    tmp, _ = layout
    from viz.scenario import loads

    for value in (f"{tmp}/secret.toml", "../secret.toml"):
        with pytest.raises(ScenarioError) as err:
            loads(_scenario("pasted", value), source="<pasted>")
        assert "leads outside this scenario's folder" in str(err.value)


def test_the_cli_exits_2_and_the_export_draws_nothing_outside(layout, tmp_path, capsys, qapp):
    tmp, folder = layout
    mine = folder / "mine.toml"
    mine.write_text(_scenario("mine", f"{tmp}/secret.toml"))
    out = tmp_path / "pair.svg"
    assert main(["analyze", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "compare" in err and "leads outside" in err and "Traceback" not in err
    assert main(["export", str(mine), "--compare", "--out", str(out)]) == 2
    assert not out.exists()
    # inside the folder, the partner is drawn beside it
    mine.write_text(_scenario("mine", "partner.toml"))
    assert main(["export", str(mine), "-i", "1", "--compare", "--out", str(out)]) == 0, capsys.readouterr().err
    texts = [e.text for e in ET.parse(out).getroot().iter() if e.tag.endswith("text") and e.text]
    assert "the partner" in texts and SECRET not in texts


def test_the_app_shows_the_message_keeps_running_and_never_opens_the_outside_file(qtbot, user_dirs, layout):  # noqa: F811
    from PySide6.QtCore import Qt

    tmp, folder = layout
    mine = folder / "mine.toml"
    mine.write_text(_scenario("mine", "../../../secret.toml"))
    w = make_window(qtbot, str(mine))
    s = w.session
    assert s.error is not None and "leads outside this scenario's folder" in str(s.error)
    qtbot.waitUntil(lambda: w.editor.banner.isVisible(), timeout=10000)
    assert "leads outside" in w.editor.banner.text()
    assert "../../../secret.toml" in w.editor.text.toPlainText()       # the user's text is kept
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    qtbot.keyClick(w, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)     # compare mode
    assert w.a_compare.isChecked()
    w.session.wait()
    right = w.compare.right
    assert right.path is None or Path(right.path).resolve() != (tmp / "secret.toml").resolve()
    assert w.compare.view_right.options.title != SECRET
    assert w.isVisible()
    w.close()
