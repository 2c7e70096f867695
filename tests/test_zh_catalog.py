"""The Chinese catalogue reads as Chinese: no known mistranslation, the placeholders of every
entry equal the English ones, every string the model and the app pass to tr() has an entry,
and the model's messages come out in Chinese while the CLI keeps its English."""

from __future__ import annotations

import ast
import re
import string
import tomllib
from pathlib import Path

import pytest

from viz import i18n
from viz.scenario import ScenarioError, loads

ROOT = Path(__file__).resolve().parents[1]
CATALOG = tomllib.loads((ROOT / "assets" / "translations" / "zh_CN.toml").read_text("utf-8"))

# Renderings a native reader flagged, with what they wrongly say.
BANNED = {
    "交织": "interleaving: the opposite of a swizzle (keep \"Swizzle\")",
    "变化量": "increment: a sweep's \"Vary\" is the 扫描变量",
    "两个半线程束": "reads as \"two and a half warps\"",
    "四个四分之一线程束": "reads as \"four quarter warps\" run together",
    "半线程束阶段": "say 2 个阶段（每个阶段半个线程束，即 16 个通道）",
    "四分之一线程束阶段": "say 4 个阶段（每个阶段四分之一个线程束，即 8 个通道）",
    "得到服务": "unnatural (\"obtains service\")",
    "整个启动": "unnatural; the launch is 整次启动",
    "未激活": "inactive lanes are 非活跃, one word everywhere",
    "幻灯片": "the export writes videos and pictures, not a slide deck",
    "加载": "load is 读 everywhere",
    "补齐": "pad is 填充 everywhere",
    "扇区利用率": "sector efficiency is 扇区效率",
    "异或重排": "not every swizzle is an XOR: gloss it as 地址重排",
    "共享内存级": "a pipeline stage is a 流水级 (级 alone reads as a level)",
}

# 线 only inside these words; a 128-byte line is a 缓存行 (global) or a 128 字节段 (shared)
LINE_WORDS = ("线程", "流水线", "曲线", "直线", "虚线", "下划线", "线性", "对角线", "时间线")


def lone_line(text: str) -> list[str]:
    """The places where 线 stands for a line on its own."""
    out = []
    for m in re.finditer("线", text):
        if not any(text[max(0, m.start() - len(w) + 1):m.start() + len(w)].find(w) >= 0 for w in LINE_WORDS):
            out.append(text[max(0, m.start() - 8):m.end() + 8])
    return out


def test_a_line_is_never_a_lone_xian():
    assert [v for v in CATALOG.values() if lone_line(v)] == []
    assert lone_line("一条 128 字节的线；") and not lone_line("线程束、流水线、对角线、线性同余")


def test_the_header_terms_for_figures_metrics_notes():
    assert CATALOG["Figures"] == "统计" and CATALOG["Figure"] == "统计项" and CATALOG["metric"] == "指标"
    for k, v in CATALOG.items():
        if re.search(r"\bnotes?\b", k, re.I):
            assert "说明" not in v and ("备注" in v or "notes" not in k.lower() or "notes_zh" in k), (k, v)
        if re.search(r"\bfigures?\b", k, re.I):
            assert "指标" not in v, (k, v)
    assert CATALOG["Swizzle"] == "Swizzle（地址重排）"


def _fields(text: str) -> list[tuple[str, str, str]]:
    return sorted((name, spec or "", conv or "") for _, name, spec, conv in string.Formatter().parse(text)
                  if name is not None)


@pytest.mark.parametrize("word", sorted(BANNED))
def test_no_banned_rendering(word):
    hits = [k for k, v in CATALOG.items() if word in v]
    assert hits == [], f"{word}: {BANNED[word]} — in {hits}"


def test_store_is_always_xie_and_issue_is_fashe():
    for k, v in CATALOG.items():
        assert "存储" not in v.replace("存储体", ""), f"store is 写, 存储 is only in 存储体 (bank): {k!r}"
        if re.search(r"\bissue[sd]?\b", k):
            assert "发出" not in v and "发射" in v, f"instruction issue is 发射: {k!r} = {v!r}"
        if re.search(r"\bswizzle\b", k, re.I):
            assert "swizzle" in v.lower(), f"keep the word Swizzle: {k!r} = {v!r}"
        if "half-warp" in k:
            assert "16 个通道" in v, k
        if "quarter-warp" in k:
            assert "8 个通道" in v, k


def test_count_labels_end_in_shu():
    for k in ("wavefronts", "sectors", "lines", "phases", "bank conflicts", "active lanes", "requests",
              "warp instructions", "bytes asked", "bytes moved", "wavefronts (this warp)", "sectors (this warp)",
              "global load sectors", "shared store wavefronts"):
        assert "数" in CATALOG[k], (k, CATALOG[k])


def test_placeholders_match_the_english():
    for k, v in CATALOG.items():
        assert _fields(v) == _fields(k), f"{k!r} = {v!r}"


def _tr_literals() -> list[str]:
    files = [*sorted((ROOT / "viz").glob("*.py")), *sorted((ROOT / "viz" / "app").glob("*.py")),
             *sorted((ROOT / "viz" / "render").glob("*.py")), *sorted((ROOT / "viz" / "gpu").glob("*.py")),
             *sorted((ROOT / "viz" / "kinds").glob("*.py"))]
    out = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args:
                a = node.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    out.add(a.value)
    return sorted(out - {"threadIdx.x"})


def test_every_tr_string_of_model_and_app_has_an_entry():
    strings = _tr_literals()
    assert len(strings) > 350  # the model's error messages are in the list, not only the app's labels
    assert [s for s in strings if s not in CATALOG] == []
    # and the words the code passes through tr() as values
    for word in ("load", "store", "row", "column", "index", "negative", "out of bounds", "param", "array",
                 "loop variable", "passed", "failed", "shared memory", "instruction issue", "TOML syntax"):
        assert word in CATALOG, word


BAD = """
title = "x"
[launch]
block = [64]
grid = [1]
[arrays.g]
space = "global"
type = "flaot"
shape = [64]
[[access]]
op = "load"
at = "g[threadIdx.x]"
"""


def _message(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        loads(text, source="case.toml")
    return info.value.message()


def test_errors_follow_the_language_and_use_fullwidth_punctuation():
    english = _message(BAD)
    assert english == "case.toml, line 8: arrays.g: unknown type 'flaot'. Did you mean 'float'?"
    i18n.set_language("zh_CN")
    try:
        chinese = _message(BAD)
        expr = _message(BAD.replace('type = "flaot"', 'type = "float"').replace("threadIdx.x]", "threadIdx.x 2]"))
        access = _message(BAD.replace('type = "flaot"', 'type = "float"').replace("g[threadIdx.x]", "h[threadIdx.x]"))
    finally:
        i18n.set_language("en")
    assert chinese == "case.toml，第 8 行：arrays.g：未知的类型 'flaot'。你是不是想写 'float'？"
    assert expr == ("case.toml，第 12 行：访存 0：at = \"g[threadIdx.x 2]\"：完整的表达式后面出现了意外的 '2'"
                    "（第 15 列），位于 `g[threadIdx.x 2]`。请检查是否漏了运算符或多了括号。")
    assert access.startswith("case.toml，第 12 行：访存 0（读 h[threadIdx.x]）：未知的数组 'h'。")
    # The language is back to English: the same input gives the English message again.
    assert _message(BAD) == english


def test_sep_gives_fullwidth_punctuation_only_in_chinese():
    assert [i18n.sep(s) for s in (": ", "; ", ", ", ". ", " (", ")")] == [": ", "; ", ", ", ". ", " (", ")"]
    i18n.set_language("zh_CN")
    try:
        assert [i18n.sep(s) for s in (": ", "; ", ", ", ". ", " (", ")")] == ["：", "；", "，", "。", "（", "）"]
    finally:
        i18n.set_language("en")


def test_chinese_text_uses_fullwidth_punctuation():
    """No ASCII colon, semicolon, comma or bracket touches a Chinese character (code such as
    "(&O)", "({x},{y},{z})" or the range syntax 起:止[:步长] aside)."""
    ascii_next_to_han = re.compile(r"[\u4e00-\u9fff][:;,]|[\u4e00-\u9fff] ?\((?![&*{\d])|[\u4e00-\u9fff]\)|\)[\u4e00-\u9fff]")
    bad = [v for v in CATALOG.values() if ascii_next_to_han.search(v.replace("起:止[:步长]", ""))]
    assert bad == []
