"""The launch-file and Python examples of the docs stay true: every launch file shown in
docs/trace-format.md, the README and the tracing guides loads (with the files it names made
beside it), every ``warpviz.X(...)`` call in their Python blocks names a function of the API
with keywords it takes, and the Chinese guide pages carry the same code as the English ones."""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest

import warpviz
from viz.trace.launch import BUFFER_TYPES, COMPONENT, parse_launch

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ptx"
PAGES = [ROOT / "docs" / "trace-format.md", ROOT / "README.md", ROOT / "docs" / "guide" / "trace-triton.md",
         ROOT / "docs" / "guide" / "trace-real-project.md", ROOT / "docs" / "guide" / "trace-triton.zh.md",
         ROOT / "docs" / "guide" / "trace-real-project.zh.md", ROOT / "docs" / "guide" / "notebooks.md",
         ROOT / "docs" / "guide" / "your-own-kernel.md"]
FENCE = re.compile(r"^ {0,3}```(\w*)\n(.*?)^ {0,3}```", re.M | re.S)


def blocks(lang: str) -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        for m in FENCE.finditer(page.read_text(encoding="utf-8")):
            if m.group(1) == lang:
                out.append((page.name, "\n".join(ln[2:] if ln.startswith("  ") and m.group(0).startswith("  ")
                                                 else ln for ln in m.group(2).splitlines())))
    return out


def launch_examples() -> list[tuple[str, str]]:
    found = []
    for page, text in blocks("toml"):
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue                      # a fragment (several `kernel =` lines side by side)
        if "kernel" in d and "block" in d and "grid" in d:
            found.append((page, text))
    return found


EXAMPLES = launch_examples()


def test_the_docs_show_launch_files_of_every_kind():
    texts = [t for _, t in EXAMPLES]
    assert any('ptx = "' in t for t in texts) and any("npy:" in t for t in texts) and any("file:" in t for t in texts)
    assert any("format = 2" in t and "<" in t for t in texts)          # a template
    assert len({p for p, _ in EXAMPLES}) >= 4


def _make_files(folder: Path, d: dict) -> None:
    """The files a launch file names: its source or PTX and include folders, and data files
    of the sizes its [[arg]] tables need."""
    if "source" in d:
        p = folder / d["source"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("__global__ void k() {}\n")
    if "ptx" in d:
        shutil.copy(DATA / "triton_softmax.ptx", folder / d["ptx"])
    for inc in d.get("include_dirs", []):
        (folder / inc).mkdir(parents=True, exist_ok=True)
    for a in d.get("arg", []):
        fill = str(a.get("fill", ""))
        if fill.startswith("file:"):
            (folder / fill[5:]).write_bytes(b"\0" * (a["count"] * BUFFER_TYPES[a["type"]]))
        elif fill.startswith("npy:"):
            kind, size = COMPONENT[a["type"]]
            per = BUFFER_TYPES[a["type"]] // size
            np.save(folder / fill[4:], np.zeros(a["count"] * per, f"{'f' if kind == 'f' else 'i'}{size}"))


@pytest.mark.parametrize("page, text", EXAMPLES, ids=[f"{p}-{k}" for k, (p, _) in enumerate(EXAMPLES)])
def test_launch_files_in_the_docs_load(tmp_path, page, text):
    d = tomllib.loads(text)
    _make_files(tmp_path, d)
    la = parse_launch(text, tmp_path / "example.launch.toml")
    assert la.kernel == d["kernel"] and len(la.args) == len(d.get("arg", []))


def _calls(tree) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "warpviz"]


def test_python_examples_call_the_api_as_it_is():
    seen = set()
    for page, text in blocks("python"):
        try:
            tree = ast.parse(text)
        except SyntaxError as err:
            pytest.fail(f"{page}: a Python example does not parse: {err}")
        for call in _calls(tree):
            name = call.func.attr
            assert name in warpviz.__all__, f"{page}: warpviz.{name} does not exist"
            fn = getattr(warpviz, name)
            sig = inspect.signature(fn)
            takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
            for kw in call.keywords:
                assert kw.arg is None or kw.arg in sig.parameters or takes_any, \
                    f"{page}: warpviz.{name}(..., {kw.arg}=...) is not a parameter"
            seen.add(name)
    assert {"trace_triton", "trace_ptx", "trace_launch", "open_trace"} <= seen


def _code_only(text: str, lang: str) -> str:
    """A code block without its comments (translated in the Chinese pages) and spacing."""
    mark = "//" if lang == "cpp" else "#"
    lines = []
    for ln in text.splitlines():
        if lang in ("toml", "python", "bash", "cpp"):
            quoted = False
            for k, c in enumerate(ln):
                if c == '"':
                    quoted = not quoted
                if not quoted and ln.startswith(mark, k):
                    ln = ln[:k]
                    break
        if ln.strip():
            lines.append(" ".join(ln.split()))
    return "\n".join(lines)


@pytest.mark.parametrize("name", ["trace-triton", "trace-real-project"])
def test_chinese_pages_carry_the_same_code_and_links(name):
    en = (ROOT / "docs" / "guide" / f"{name}.md").read_text(encoding="utf-8")
    zh = (ROOT / "docs" / "guide" / f"{name}.zh.md").read_text(encoding="utf-8")
    code = lambda t: [(m.group(1), _code_only(m.group(2), m.group(1))) for m in FENCE.finditer(t)]  # noqa: E731
    assert code(en) == code(zh)
    links = lambda t: sorted(set(re.findall(r"\]\(([^)#]+\.md)", t)) - {f"{name}.md", f"{name}.zh.md"})  # noqa: E731
    assert links(en) == links(zh)
    assert f"]({name}.zh.md)" in en and f"]({name}.md)" in zh
