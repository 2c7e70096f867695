"""The layers of the code: the model (``viz/`` outside ``viz/app/`` and ``viz/render/``) never
imports PySide6, pyqtgraph or PyCUDA; ``viz/render`` never imports ``viz/app``; the modules of
``viz/app`` import each other without a cycle.

Two checks for the model: every ``import`` statement in its files (the AST, so imports inside
functions count too), and every model module imported in a fresh interpreter where those
packages cannot be imported at all.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VIZ = ROOT / "viz"
FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "pycuda")

# Where the model hands over to Qt or to the GPU on purpose, each inside one function that
# imports what it needs when called: the exporter draws its pictures with the painter (Qt),
# and the GPU runner loads PyCUDA. Nothing else in the model may; a new entry here needs a reason.
ALLOWED = {
    ("viz/export.py", "ensure_qt"): "a QGuiApplication for the painter's fonts",
    ("viz/export.py", "paint_step"): "draws a picture with viz.render",
    ("viz/export.py", "render_image"): "the picture as a QImage",
    ("viz/export.py", "check_settings"): "the theme's name, checked against viz.render's themes",
    ("viz/export.py", "_write_svg"): "the picture as SVG (QSvgGenerator)",
    ("viz/gpu/runner.py", "_import_driver"): "PyCUDA, loaded only to run kernels on a GPU",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def model_files() -> list[Path]:
    return sorted(p for p in VIZ.rglob("*.py")
                  if p.relative_to(VIZ).parts[0] not in ("app", "render"))


def imports(path: Path):
    """(absolute module imported, line, enclosing function or None) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, func
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[:len(package) - child.level + 1]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module
                yield mod, child.lineno, func
                for alias in child.names:      # `from . import settings` imports viz.app.settings
                    yield f"{mod}.{alias.name}", child.lineno, func
            yield from visit(child, inner)

    yield from visit(tree, None)


def top(mod: str) -> str:
    return mod.split(".")[0]


def test_the_checks_see_the_whole_model_and_resolve_relative_imports():
    names = {module_name(p) for p in model_files()}
    assert {"viz", "viz.engine", "viz.scenario", "viz.export", "viz.gpu.runner", "viz.gpu.codegen"} <= names
    assert not any(n.startswith(("viz.app", "viz.render")) for n in names)
    found = {m for m, _, _ in imports(VIZ / "app" / "window.py")}
    assert {"viz.render.theme", "viz.app.state", "PySide6.QtWidgets", "viz.app.window_files"} <= found
    found = {m for m, _, _ in imports(VIZ / "app" / "window_actions.py")}     # a lazy import inside a function
    assert {"viz.app.export_dialog", "viz.app.settings"} <= found


def test_the_model_never_imports_qt_pyqtgraph_or_pycuda():
    bad, used = [], set()
    for path in model_files():
        rel = path.relative_to(ROOT).as_posix()
        for mod, line, func in imports(path):
            if top(mod) in FORBIDDEN or mod.startswith(("viz.app", "viz.render")) and top(mod) == "viz":
                if (rel, func) in ALLOWED:
                    used.add((rel, func))
                elif mod.startswith(("viz.app",)) and (rel, func) == ("viz/cli.py", "cmd_gui"):
                    continue      # `warpviz` with no command opens the app: the one way in
                else:
                    bad.append(f"{rel}:{line} ({func or 'module level'}) imports {mod}")
    assert bad == []
    assert used == set(ALLOWED), "an allowed place no longer imports Qt or PyCUDA: drop it from ALLOWED"


BLOCKER = """
import importlib, importlib.abc, json, sys
FORBIDDEN = {forbidden!r}
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in FORBIDDEN:
            raise ImportError(f"the model imported {{name}}")
sys.meta_path.insert(0, Blocker())
failed = {{}}
for name in {modules!r}:
    try:
        importlib.import_module(name)
    except Exception as err:
        failed[name] = f"{{type(err).__name__}}: {{err}}"
loaded = sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN or m.startswith(("viz.app", "viz.render")))
print(json.dumps({{"failed": failed, "loaded": loaded}}))
"""


def test_every_model_module_imports_without_qt_pyqtgraph_or_pycuda():
    modules = sorted(module_name(p) for p in model_files())
    code = BLOCKER.format(forbidden=FORBIDDEN, modules=modules)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"failed": {}, "loaded": []}


def test_render_never_imports_the_app():
    bad = [f"{p.relative_to(ROOT)}:{line} imports {mod}"
           for p in sorted((VIZ / "render").rglob("*.py"))
           for mod, line, _ in imports(p) if mod.startswith("viz.app")]
    assert bad == []


def app_graph() -> dict[str, set[str]]:
    """Which viz.app modules each viz.app module imports (at any level, lazily or not)."""
    mods = {module_name(p): p for p in (VIZ / "app").glob("*.py")}
    return {m: {i for i, _, _ in imports(p) if i in mods and i != m} for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_app_modules_import_each_other_without_a_cycle():
    graph = app_graph()
    assert "viz.app.export_dialog" in graph["viz.app.window_actions"]     # the graph sees lazy imports (File → Export…)
    assert cycles(graph) == []


@pytest.mark.parametrize("name", ["viz.app.export_dialog", "viz.app.window"])
def test_app_modules_import_on_their_own(name):
    """Each side of the old window ↔ export dialog circle imports first in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
