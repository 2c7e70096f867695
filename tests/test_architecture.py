"""The architecture (docs/ARCHITECTURE.md) holds: the import contracts of pyproject.toml
(``[tool.importlinter]``: the layers, the order inside each package, the pictures and the GPU
branch apart, Qt only in the app and the pictures, PyCUDA only in the runner, only ``viz.cli``
importing a command line, no cycle between a package's parts) are kept, and ``viz/`` has no
import cycle, neither between modules nor between packages (``viz.gpu`` -> ``viz.trace`` ->
``viz.toolchain`` and never back). Imports inside functions count (grimp reads every import statement).

The checks run the real tools (import-linter, grimp) on the real code. The cycle finders are shown
to fail here on a copy of ``viz/`` with one cycle added; tests/test_contracts_fail.py breaks each
import contract the same way.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` over the package ``viz`` found in ``root`` (with this project's contracts)."""
    return subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=root, capture_output=True, text=True, timeout=300)


def cycles(graph) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected groups of more than one module
    (Tarjan's algorithm, iterative), each sorted; a module importing itself is not one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    group.append(m)
                    if m == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def package_graph(graph, package: str):
    """The imports between the children of ``package`` (its modules and subpackages, each
    subpackage standing for everything inside it): an import graph whose modules are those
    children. Imports of ``package`` itself or of anything outside it are left out."""
    depth = package.count(".") + 2
    children = grimp.ImportGraph()
    for m in graph.modules:
        if m.startswith(package + "."):
            children.add_module(".".join(m.split(".")[:depth]))
    for m in graph.modules:
        if not m.startswith(package + "."):
            continue
        a = ".".join(m.split(".")[:depth])
        for d in graph.find_modules_directly_imported_by(m):
            if d.startswith(package + "."):
                b = ".".join(d.split(".")[:depth])
                if a != b:
                    children.add_import(importer=a, imported=b)
    return children


def packages(graph) -> list[str]:
    """Every package of ``graph``: a module with a module inside it."""
    return sorted({m.rsplit(".", 1)[0] for m in graph.modules if "." in m})


def package_cycles(graph) -> list[tuple[str, list[str], str]]:
    """The cycles between the children of every package: (package, cycle, the imports that
    close it, as the modules that make them)."""
    found = []
    for p in packages(graph):
        pg = package_graph(graph, p)
        for group in cycles(pg):
            members = set(group)
            lines = []
            for m in sorted(graph.modules):
                if not m.startswith(p + "."):
                    continue
                a = ".".join(m.split(".")[:p.count(".") + 2])
                if a not in members:
                    continue
                for d in sorted(graph.find_modules_directly_imported_by(m)):
                    b = ".".join(d.split(".")[:p.count(".") + 2])
                    if b in members and b != a and d.startswith(p + "."):
                        lines.append(f"  {m} -> {d}")
            found.append((p, group, "\n".join(lines)))
    return found


def describe(graph, group: list[str]) -> str:
    """One cycle as the imports that close it, with their lines: ``a -> b (a.py:12)``."""
    out = []
    members = set(group)
    for m in group:
        for d in sorted(graph.find_modules_directly_imported_by(m) & members):
            lines = sorted({i["line_number"] for i in graph.get_import_details(importer=m, imported=d)})
            out.append(f"  {m} -> {d} (line {', '.join(map(str, lines))})")
    return "\n".join(out)


def test_the_import_contracts_are_kept():
    result = lint(ROOT)
    assert result.returncode == 0, "an import breaks docs/ARCHITECTURE.md's layers:\n" + result.stdout + result.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    assert len(contracts) >= 13 and f"{len(contracts)} kept, 0 broken" in result.stdout


def test_viz_has_no_import_cycle():
    graph = grimp.build_graph("viz", cache_dir=None)
    assert len(graph.modules) > 100          # the whole package was read (114 modules in 2026)
    found = cycles(graph)
    assert not found, "import cycles in viz/ (move the shared code down a layer, docs/ARCHITECTURE.md):\n" + \
        "\n\n".join(describe(graph, g) for g in found)


def test_viz_has_no_package_cycle():
    graph = grimp.build_graph("viz", cache_dir=None)
    top = package_graph(graph, "viz")
    assert {"viz.gpu", "viz.trace", "viz.toolchain", "viz.kinds", "viz.app", "viz.engine"} <= top.modules
    assert "viz.gpu" in top.find_modules_that_directly_import("viz.trace")      # the order the docs name
    assert "viz.trace" in top.find_modules_that_directly_import("viz.toolchain")
    found = package_cycles(graph)
    assert not found, "import cycles between the parts of a package (docs/ARCHITECTURE.md):\n" + \
        "\n\n".join(f"{p}: {' <-> '.join(g)}\n{how}" for p, g, how in found)


def test_the_package_cycle_finder_sees_a_cycle_through_the_parts_of_two_packages():
    g = grimp.ImportGraph()
    for a, b in [("p.x.a", "p.y.b"), ("p.y.c", "p.x.d"), ("p.x.d", "p.z"), ("p.y.b", "p.y.c"),
                 ("p.y.b", "p"), ("p.q.r.s", "p.q.t")]:
        g.add_import(importer=a, imported=b)
    assert cycles(g) == []                                     # no cycle between modules
    found = package_cycles(g)
    assert [(p, c) for p, c, _ in found] == [("p", ["p.x", "p.y"])]
    assert "p.x.a -> p.y.b" in found[0][2] and "p.y.c -> p.x.d" in found[0][2]
    g.remove_import(importer="p.y.c", imported="p.x.d")
    assert package_cycles(g) == []


def test_the_cycle_finder_finds_cycles_and_nothing_else():
    g = grimp.ImportGraph()
    for a, b in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.d", "p.e"),
                 ("p.e", "p.d"), ("p.f", "p.a"), ("p.g", "p.g")]:
        g.add_import(importer=a, imported=b)
    assert cycles(g) == [["p.a", "p.b", "p.c"], ["p.d", "p.e"]]
    g.remove_import(importer="p.c", imported="p.a")
    g.remove_import(importer="p.e", imported="p.d")
    assert cycles(g) == []


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(ROOT / "viz", root / "viz", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _add_import(root: Path, module: str, line: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text(encoding="utf-8") + "\n\ndef _added():\n    " + line + "\n", encoding="utf-8")


def test_a_cycle_added_inside_a_function_is_found_with_its_lines(tmp_path):
    root = _copy(tmp_path)
    _add_import(root, "viz.kinds.ldmatrix", "from ..engine import analyze  # noqa")
    script = ("import sys, grimp\n"
              f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              "from test_architecture import cycles, describe\n"
              "g = grimp.build_graph('viz', cache_dir=None)\n"
              "print(g.find_modules_directly_imported_by('viz.kinds.ldmatrix'))\n"
              "for c in cycles(g):\n"
              "    print('CYCLE', ' '.join(c))\n"
              "    print(describe(g, c))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env={"PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    found = [ln.split()[1:] for ln in out.stdout.splitlines() if ln.startswith("CYCLE ")]
    assert len(found) == 1 and {"viz.kinds.ldmatrix", "viz.engine", "viz.scenario"} <= set(found[0])
    assert "viz.kinds.ldmatrix -> viz.engine (line " in out.stdout


def test_a_package_cycle_added_inside_a_function_is_found(tmp_path):
    """The trace package importing the GPU package again (as it did before ``viz.toolchain``):
    no module cycle, but a cycle between the two packages, named with the imports that make it."""
    root = _copy(tmp_path)
    _add_import(root, "viz.trace.analysis", "from ..gpu import costmodel  # noqa")
    script = ("import sys, grimp\n"
              f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
              "from test_architecture import cycles, package_cycles\n"
              "g = grimp.build_graph('viz', cache_dir=None)\n"
              "print('MODULE CYCLES', len(cycles(g)))\n"
              "for p, c, how in package_cycles(g):\n"
              "    print('CYCLE', p, ' '.join(c))\n"
              "    print(how)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env={"PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "MODULE CYCLES 0" in out.stdout
    found = [ln.split()[1:] for ln in out.stdout.splitlines() if ln.startswith("CYCLE ")]
    assert found == [["viz", "viz.gpu", "viz.trace"]]
    assert "viz.trace.analysis -> viz.gpu.costmodel" in out.stdout
    assert "viz.gpu.tracemodel -> viz.trace.analysis" in out.stdout


# ---------------------------------------------------------------------------- private names

# Imports of another module's private name (``from x import _y``) that are meant: none. A helper
# two modules share gets a public name where it is defined, or moves to where both can import it.
PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str]] = set()


def private_imports(package_dir: Path) -> list[tuple[str, int, str, str]]:
    """Every ``from X import _name`` in the package at ``package_dir`` where X is a module of
    that package (relative or absolute): (file, line, importing module, X._name). Dunder names
    (``__version__``) are public."""
    import ast

    top = package_dir.name
    found = []
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_init else parts)
        package = module.split(".") if is_init else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != top and not target.startswith(top + "."):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append((str(path.relative_to(package_dir.parent)), node.lineno, module,
                                  f"{target}.{alias.name}"))
    return found


def test_no_module_imports_another_modules_private_name():
    every = private_imports(ROOT / "viz")
    assert PRIVATE_IMPORTS_ALLOWED <= {(m, n) for _, _, m, n in every}, "an allowed import is gone: drop it from the list"
    found = [f for f in every if (f[2], f[3]) not in PRIVATE_IMPORTS_ALLOWED]
    assert not found, ("a module imports another module's private name: give the name a public one where "
                       "it is defined (and update its users), or move the helper where both can import it:\n" +
                       "\n".join(f"  {file}:{line}: {mod} imports {name}" for file, line, mod, name in found))


def test_the_private_import_scan_finds_relative_absolute_and_lazy_imports(tmp_path):
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import _hidden\n__version__ = '1'\n")
    (pkg / "a.py").write_text("_hidden = 1\nfrom . import __version__\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("import os\nfrom os import _exit\nfrom ..a import public\n\n"
                                      "def f():\n    from p.a import _hidden, shown\n    from .. import _top\n")
    (pkg / "sub" / "c.py").write_text("from ._c2 import thing\n")
    assert private_imports(pkg) == [
        ("p/__init__.py", 1, "p", "p.a._hidden"),
        ("p/sub/b.py", 6, "p.sub.b", "p.a._hidden"),
        ("p/sub/b.py", 7, "p.sub.b", "p._top"),
    ]
