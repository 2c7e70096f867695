"""The built-ins' titles and notes in Chinese (``title_zh`` / ``notes_zh``): present for every
built-in, with the same figures as the English, in the right terms; shown instead of the
English wherever a person reads a title or notes while the interface is Chinese."""

from __future__ import annotations

import re

import pytest

from viz import i18n
from viz import export as ex
from viz.scenario import ScenarioError, builtin_names, load, loads

from app_helpers import user_dirs, window  # noqa: F401 - fixtures

NUM = re.compile(r"\d+(?:\.\d+)?")
CJK = re.compile(r"[\u4e00-\u9fff]")
# An English word in the notes, and the Chinese term the translation must then use.
TERMS = [("wavefront", "波前"), ("bank", "存储体"), ("sector", "扇区"), ("warp", "线程束"),
         ("lane", "通道"), ("coalesced", "合并"), ("phase", "阶段")]
SMALL = """title = "Copy"
title_zh = "拷贝"
notes = "One float per thread."
notes_zh = "每个线程一个 float。"
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
"""


@pytest.fixture
def chinese():
    i18n.set_language("zh_CN")
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("name", builtin_names())
def test_builtin_has_chinese_title_and_notes_with_the_same_figures(name):
    sc = load(name)
    assert CJK.search(sc.title_zh), "title_zh must be Chinese"
    assert set(NUM.findall(sc.title_zh)) <= set(NUM.findall(sc.title)), "a figure the English title does not have"
    zh, en = sc.notes_zh.strip().splitlines(), sc.notes.strip().splitlines()
    assert len(zh) == len(en), "one Chinese paragraph per English one"
    assert all(CJK.search(line) for line in zh), "a paragraph left in English"
    assert set(NUM.findall(sc.notes_zh)) <= set(NUM.findall(sc.notes)), "a figure that the English notes do not have"


@pytest.mark.parametrize("name", builtin_names())
def test_builtin_chinese_notes_use_the_terms(name):
    sc = load(name)
    english = re.sub("|".join(rf"\b{re.escape(n)}\b" for n in builtin_names()), "", sc.notes)  # names stay
    for word, term in TERMS:
        if re.search(rf"\b{word}s?\b", english, re.I):
            assert term in sc.notes_zh, f"{word!r} in the notes, no {term} in notes_zh"
    assert "交织" not in sc.notes_zh + sc.title_zh, "swizzle stays Swizzle"
    if re.search(r"\bswizzl", sc.notes + sc.title, re.I) and "swizzle = " not in sc.notes:
        assert "Swizzle" in sc.notes_zh + sc.title_zh


@pytest.mark.parametrize("name", builtin_names())
def test_builtin_chinese_uses_the_catalogues_terms(name):
    """The terms of assets/translations/zh_CN.toml's header: no rendering it bans, no 线 for a
    line, no English bin or halo outside code (hist[bin]) or a gloss in brackets（halo）."""
    from test_zh_catalog import BANNED, lone_line

    sc = load(name)
    zh = sc.title_zh + "\n" + sc.notes_zh
    assert [w for w in BANNED if w in zh] == []
    assert lone_line(zh) == []
    bare = re.sub(r"\w*\[[^\]]*\]|（\w+）", " ", zh)        # code with an index, glosses in brackets
    assert not re.search(r"\b(?:bins?|halos?)\b", bare), bare


def test_the_figures_of_the_h100_quotes_are_in_the_chinese_notes_too():
    """The measured figures (checked against h100.json by test_quotes.py) are not dropped."""
    for name in builtin_names():
        sc = load(name)
        for figure in re.findall(r"(\d[\d.]*) (?:GB/s|ms)", sc.notes):
            assert figure in sc.notes_zh, (name, figure)


def test_every_builtin_tag_has_a_chinese_name():
    from viz.app.library import tag_label

    tags = sorted({t for n in builtin_names() for t in load(n).tags})
    assert i18n.missing("zh_CN", [f"tag:{t}" for t in tags]) == []
    assert [tag_label(t) for t in tags] == tags                     # English: the tags themselves
    i18n.set_language("zh_CN")
    try:
        assert tag_label("coalescing") == "合并访问（coalescing）" and tag_label("swizzle") == "swizzle"
    finally:
        i18n.set_language("en")


def test_shown_title_and_notes_follow_the_interface_language():
    sc = loads(SMALL)
    assert (sc.shown_title, sc.shown_notes) == ("Copy", "One float per thread.")
    i18n.set_language("zh_CN")
    try:
        assert (sc.shown_title, sc.shown_notes) == ("拷贝", "每个线程一个 float。")
        bare = loads(SMALL.replace('title_zh = "拷贝"\n', ""))
        assert bare.shown_title == "Copy", "no title_zh: the English title"
    finally:
        i18n.set_language("en")


def test_title_zh_must_be_a_string():
    with pytest.raises(ScenarioError, match=r"line 2.*title_zh must be a string"):
        loads(SMALL.replace('title_zh = "拷贝"', "title_zh = 3"), source="bad.toml")


def test_a_title_card_in_chinese_uses_title_zh(chinese):
    sc = load("transpose-tile")
    plan = ex.make_plan(sc, ex.Settings(size=(320, 180), fps=10, hold=0.2, title_card=True),
                        ex.Selection(instructions=(8,)))
    assert plan.steps[0].title_card[0] == sc.title_zh


def test_app_in_chinese_shows_chinese_titles_and_notes(window, qtbot):  # noqa: F811
    sc = load("transpose-tile")
    lib = window.library
    assert lib.item_for("transpose-tile").text(0) == sc.title
    window.a_langs["zh_CN"].trigger()
    qtbot.waitUntil(lambda: lib.item_for("transpose-tile").text(0) == sc.title_zh)
    assert sc.notes_zh.strip() in lib.item_for("transpose-tile").toolTip(0)
    assert window.windowTitle().startswith(sc.title_zh)
    lib.search.setText("存储体冲突")                       # search finds the Chinese notes
    qtbot.waitUntil(lambda: "reduction-tree" in lib.visible_names())
    lib.search.setText("padded")                          # and the English ones still
    qtbot.waitUntil(lambda: "transpose-tile-pad" in lib.visible_names())
    lib.search.clear()
    lib.tag.setCurrentIndex(lib.tag.findText("转置（transpose）"))   # the tag list in Chinese
    qtbot.waitUntil(lambda: lib.visible_names() and all("transpose" in load(n).tags for n in lib.visible_names()))
    assert "transpose-tile" in lib.visible_names() and "coalesced" not in lib.visible_names()
    window.a_langs["en"].trigger()
    qtbot.waitUntil(lambda: lib.item_for("transpose-tile").text(0) == sc.title)
    assert window.windowTitle().startswith(sc.title)
