"""Every interface string of the app, the frame captions and the painter has a Chinese entry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from viz import i18n

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*sorted((ROOT / "viz" / "app").glob("*.py")), ROOT / "viz" / "frames.py", ROOT / "viz" / "report.py",
           *sorted((ROOT / "viz" / "render").glob("*.py"))]


def ui_strings() -> list[str]:
    """Literal first arguments of tr() (and the two forms given to frames._plural)."""
    out = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None)
            args = node.args[:1] if name == "tr" else node.args[1:3] if name == "_plural" else []
            out += [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    from viz.app.figures import FIGURE_NAMES, METRIC_LABELS
    from viz.app.sweep import FIGURES
    from viz.app.window import THEME_LABELS
    from viz.frames import KIND_NAMES, NOUNS, OP_NAMES, SPACE_NAMES

    out += [s for pair in NOUNS.values() for s in pair]
    out += [*OP_NAMES.values(), *KIND_NAMES.values(), *SPACE_NAMES.values()]
    out += [*FIGURE_NAMES, *METRIC_LABELS.values(), *THEME_LABELS.values(), *FIGURES, "pad", "swizzle", "type"]
    from viz.gpu.caveats import TEMPLATES      # the GPU panel shows them through tr()

    out += list(TEMPLATES.values())
    from viz.trace.schema import PARTIAL_NOTES      # a partial trace's note, translated by gpu_texts.partial_text

    out += list(PARTIAL_NOTES.values())
    out += gpu_unavailable_templates()        # the GPU panel's reasons for no GPU run (gpu_texts.gpu_reason)
    from viz.app.gpu_texts import BOUND_NAMES, OTHER_LABELS, STAGE_LABELS, STALL_WORDS, TERM_NAMES

    out += [n for n in (*BOUND_NAMES.values(), *OTHER_LABELS.values(), *STAGE_LABELS.values(), *STALL_WORDS.values(),
                        *TERM_NAMES.values()) if not re.fullmatch(r"[A-Z0-9]+", n)]   # DRAM, L2: as written
    return sorted(set(out) - {"threadIdx.x"})


def gpu_unavailable_templates() -> list[str]:
    """The sentences warpviz raises ``GpuUnavailable`` with (its first argument, a literal: a
    driver's or a tool's words go in its fields), anywhere in ``viz/``."""
    out = []
    for path in sorted((ROOT / "viz").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "GpuUnavailable" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name) and first.id == "template":
                    continue            # viz.gpu.worker: the child process's error made again
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                    f"{path.name}:{node.lineno}: GpuUnavailable's sentence must be a literal template")
                out.append(first.value)
    return out


def test_every_ui_string_is_translated():
    strings = ui_strings()
    assert len(strings) > 200
    assert i18n.missing("zh_CN", strings) == []


def test_translations_keep_their_placeholders():
    strings = ui_strings()
    i18n.set_language("zh_CN")
    try:
        pairs = [(s, i18n.tr(s)) for s in strings]
    finally:
        i18n.set_language("en")
    for s, zh in pairs:
        assert set(re.findall(r"\{(\w+)", s)) == set(re.findall(r"\{(\w+)", zh)), s


def test_every_stall_reason_has_a_name():
    """Every stall reason Nsight Compute is asked for (and the H100's ``no_instruction``) is
    named in words in a translation, not shown as its snake_case name."""
    from viz.app.gpu_texts import STALL_WORDS, _stall
    from viz.gpu.ncu import STALL_REASONS

    assert set(STALL_REASONS) | {"no_instruction"} <= set(STALL_WORDS)
    i18n.set_language("zh_CN")
    try:
        shown = {r: _stall(r) for r in STALL_WORDS}
    finally:
        i18n.set_language("en")
    assert all(not re.search("[A-Za-z]{2,}", v.replace("L1TEX", "").replace("MIO", "")) for v in shown.values()), shown
    assert len(set(shown.values())) == len(shown) - 1       # no_instruction(s): one name
    assert _stall("long_scoreboard") == "long_scoreboard"   # English: Nsight Compute's own name
