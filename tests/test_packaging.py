"""The wheel carries assets/ and kernels/ as viz/_data/, and the installed copy finds them.

The wheel is built the way `python -m build` builds it (sdist first, then the wheel from
the unpacked sdist, so MANIFEST.in is exercised too), without build isolation, from a copy
of the checkout in a temporary folder: a few seconds, no network, and nothing written into
the working tree. PyInstaller is never run here (packaging/build_frozen.sh does that).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import viz
from viz import assets

ROOT = Path(__file__).resolve().parent.parent
# One parallel worker runs this module, so that the wheel (``dist``) is built once.
pytestmark = pytest.mark.xdist_group("packaging")
DATA_DIRS = ("assets", "kernels")
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md", "CITATION.cff", "viz",
           "warpviz", *DATA_DIRS)
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def shipped_files(folder: str) -> set[str]:
    """Files under a top-level data folder, as paths relative to the checkout."""
    base = ROOT / folder
    return {p.relative_to(ROOT).as_posix() for p in base.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=JUNK)
        elif path.exists():
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_root_resolves_in_the_checkout():
    assert assets.root() == ROOT / "assets"
    assert (assets.scenario_dir() / "transpose-tile.toml").is_file()
    assert assets.kernels_dir() == ROOT / "kernels"


def test_wheel_carries_assets_and_kernels(dist):
    wheel = one(dist, f"warpviz-{viz.__version__}-py3-none-any.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in DATA_DIRS:
        missing = {f for f in shipped_files(folder) if f"viz/_data/{f}" not in names}
        assert not missing, f"not in the wheel: {sorted(missing)[:10]}"
    assert "viz/_data/assets/scenarios/transpose-tile.toml" in names
    assert "viz/_data/assets/traces/transpose_pad.wvtrace" in names       # warpviz analyze transpose_pad
    assert "viz/_data/kernels/trace/transpose_pad.launch.toml" in names   # warpviz trace transpose_pad
    assert "viz/gpu/worker_child.py" in names and "warpviz/__main__.py" in names
    assert "warpviz/__init__.py" in names           # `import warpviz`: the API under the project's name
    assert not [n for n in names if n.startswith(("assets/", "kernels/", "tests/", "tools/"))]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "warpviz = viz.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_sdist_carries_assets_and_kernels(dist):
    sdist = one(dist, f"warpviz-{viz.__version__}.tar.gz")
    prefix = f"warpviz-{viz.__version__}/"
    names = {n.removeprefix(prefix) for n in tarfile.open(sdist).getnames()}
    for folder in DATA_DIRS:
        assert shipped_files(folder) <= names
    assert {"setup.py", "CHANGELOG.md", "CITATION.cff"} <= names


def test_unpacked_wheel_finds_its_own_assets(dist, tmp_path):
    """What an installed copy does: viz/_data is found, not the checkout's folders."""
    wheel = one(dist, "*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    probe = "import viz.assets as a; print(a.root()); print(a.scenario_dir())"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    root, scenarios = proc.stdout.split()
    assert Path(root) == site / "viz" / "_data" / "assets"
    listing = subprocess.run([sys.executable, "-m", "viz.cli", "list"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    names = {line.split("\t")[0] for line in listing.stdout.splitlines()}
    assert {p.stem for p in Path(scenarios).glob("*.toml")} == names
    assert "transpose-tile" in names
    version = subprocess.run([sys.executable, "-m", "viz.cli", "--version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == f"warpviz {viz.__version__}"
    api = subprocess.run([sys.executable, "-c", "import warpviz; print(warpviz.__version__, warpviz.trace_ptx.__module__)"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert api.stdout.split() == [viz.__version__, "viz.api"], api.stderr


def test_wheel_is_typed(dist):
    """PEP 561: both packages users import carry py.typed, so a type checker reads the API's annotations."""
    names = set(zipfile.ZipFile(one(dist, "*.whl")).namelist())
    assert {"viz/py.typed", "warpviz/py.typed"} <= names


def test_type_checker_sees_the_api_typed(dist, tmp_path):
    """mypy, on the installed wheel (site-packages, where py.typed decides), infers open_trace's type
    and the types it returns; without py.typed it says the module is untyped and sees Any."""
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    site = tmp_path / "site"
    zipfile.ZipFile(one(dist, "*.whl")).extractall(site)
    script = tmp_path / "user.py"
    script.write_text("import warpviz\n"
                      "reveal_type(warpviz.open_trace)\n"
                      "reveal_type(warpviz.scenario('transpose-tile').analyze().metrics)\n")
    # mypy finds packages on the sys.path of --python-executable; PYTHONPATH puts the wheel there
    env = {**os.environ, "PYTHONPATH": str(site), "MYPY_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", sys.executable,
                           "--follow-imports=silent", "--ignore-missing-imports", "--no-error-summary", str(script)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    revealed = [line for line in proc.stdout.splitlines() if "Revealed type" in line]
    assert len(revealed) == 2, proc.stdout + proc.stderr
    assert revealed[0].endswith('Revealed type is "def (path: str | os.PathLike[Any]) -> viz.api.Trace"'), revealed[0]
    assert revealed[1].endswith('Revealed type is "dict[str, int]"'), revealed[1]


# -- the wheel installed in a fresh venv: the documented commands, from elsewhere -------
# A venv of its own with the wheel installed (pip --no-deps: its `warpviz` script, its viz/ in
# its site-packages); the dependencies (numpy, numba, PySide6, ...) come from this
# environment's site-packages on PYTHONPATH, which is not a site folder there, so this
# environment's editable warpviz (a .pth finder) is not seen: only the wheel's viz is.
# Installing the dependencies from PyPI too would take minutes and the network.

@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory):
    import sysconfig
    import venv

    env_dir = tmp_path_factory.mktemp("venv") / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = next(p for p in (bindir / "python", bindir / "python.exe") if p.exists())
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-index", "--disable-pip-version-check", str(one(dist, "*.whl"))],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=sysconfig.get_paths()["purelib"], QT_QPA_PLATFORM="offscreen", PYTHONNOUSERSITE="1")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    return python, bindir / "warpviz", env, elsewhere


def _run(cmd, env, cwd, timeout=300):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_installed_wheel_runs_from_its_own_site_packages(installed):
    python, _, env, cwd = installed
    r = _run([python, "-c", "import viz, viz.assets as a; print(viz.__file__); print(a.root())"], env, cwd)
    assert r.returncode == 0, r.stderr
    where, root = r.stdout.split()
    assert ROOT not in Path(where).parents and Path(root).parts[-3:] == ("viz", "_data", "assets")


# The commands the README and docs/guide show (name forms for what ships), each run from a
# folder outside the checkout: (arguments, exit status, text the output starts with or holds).
DOCUMENTED = [
    (["--version"], 0, f"warpviz {viz.__version__}"),
    (["list", "--tag", "swizzle"], 0, "transpose-tile-xor\t"),
    (["list", "--traces"], 0, "block_sum_cg\t"),
    (["analyze", "transpose-tile"], 0, "Transpose through a shared tile"),
    (["analyze", "transpose_pad"], 0, "Transpose through a padded 32x33 tile"),
    (["analyze", "sgemm_float4"], 0, ""),
    (["analyze", "transpose_tile_pad1", "--json"], 0, "{"),
    (["export", "transpose_pad", "--out", "pad.svg", "-i", "2"], 0, "wrote"),
    (["export", "transpose_pad", "--out", "pad.gif", "--block", "2", "--warp", "5", "-i", "3-4"], 0, "wrote"),
    (["export", "transpose-tile", "-i", "9", "--frames", "5", "--out", "wavefront3.svg"], 0, "wrote"),
    (["matrix", "ldmatrix_cpasync"], 0, ""),
    (["layout", "Sw<3,3,3> o (8,64):(64,1)"], 0, ""),
    (["bench", "--traces", "--show"], 0, ""),
    (["completion", "bash"], 0, ""),
    (["bogus"], 2, "warpviz: unknown command or file 'bogus'"),
]


@pytest.mark.parametrize("args, status, text", DOCUMENTED, ids=[" ".join(a[0]) for a in DOCUMENTED])
def test_a_documented_command_works_from_the_installed_wheel(installed, args, status, text):
    _, script, env, cwd = installed
    r = _run([script, *args], env, cwd)
    assert r.returncode == status, r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "no such file" not in r.stderr
    assert text in (r.stdout + r.stderr)
    if status == 0:
        assert r.stdout.strip() or r.stderr.startswith("wrote") or "wrote" in r.stdout


def test_python_and_python_dash_m_warpviz_from_the_installed_wheel(installed):
    python, _, env, cwd = installed
    r = _run([python, "-m", "warpviz", "--version"], env, cwd)
    assert r.returncode == 0 and r.stdout.strip() == f"warpviz {viz.__version__}", r.stderr
    probe = ("import warpviz; t = warpviz.open_trace('transpose_pad'); print(t.records);"
             "print(warpviz.scenario('transpose-tile').title)")
    r = _run([python, "-c", probe], env, cwd)
    assert r.returncode == 0, r.stderr
    records, title = r.stdout.splitlines()
    assert int(records) > 0 and title == "Transpose through a shared tile (unpadded)"


def test_trace_by_name_from_the_installed_wheel_reaches_the_shipped_launch_file(installed):
    """Without a GPU it says why it cannot trace (not "no such file"); with one it records
    into the current folder, never into the installed package."""
    python, script, env, cwd = installed
    site = Path(_run([python, "-c", "import viz; print(viz.__file__)"], env, cwd).stdout.strip()).parent
    before = sorted(p.relative_to(site) for p in site.rglob("*") if "__pycache__" not in p.parts)
    r = _run([script, "trace", "transpose_pad", "--blocks", "0"], env, cwd, timeout=600)
    assert "no such file" not in r.stderr and "Traceback" not in r.stderr
    assert (r.returncode == 2 and r.stderr.startswith("warpviz: cannot trace here: ")) or \
        (r.returncode == 0 and (cwd / "transpose_pad.wvtrace").is_file()), r.stderr
    assert sorted(p.relative_to(site) for p in site.rglob("*") if "__pycache__" not in p.parts) == before


# -- desktop integration (packaging/): static checks, no PyInstaller -------------------

PACKAGING = ROOT / "packaging"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_icon_svg_and_rendered_sizes():
    import xml.etree.ElementTree as ET

    svg = ET.parse(ROOT / "assets" / "icons" / "warpviz.svg").getroot()
    assert svg.get("viewBox") == "0 0 64 64"
    for size in ICON_SIZES:
        assert png_size(ROOT / "assets" / "icons" / "png" / f"warpviz-{size}.png") == (size, size)


def test_desktop_entry_and_appstream_agree():
    import configparser
    import xml.etree.ElementTree as ET

    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str
    desktop.read(PACKAGING / "warpviz.desktop")
    entry = desktop["Desktop Entry"]
    assert entry["Exec"].split()[0] == "warpviz" and entry["Icon"] == "warpviz"
    meta = ET.parse(PACKAGING / "io.github.warpviz.Warpviz.metainfo.xml").getroot()
    assert meta.findtext("id") == "io.github.warpviz.Warpviz"
    assert meta.findtext("launchable") == "warpviz.desktop"
    assert meta.findtext("project_license") == "MIT"
    versions = [r.get("version") for r in meta.iter("release")]
    assert versions and versions[0] == viz.__version__, "add a <release> for this version"


def test_frozen_recipe_names_files_that_exist():
    spec = (PACKAGING / "warpviz.spec").read_text()
    for script in ("entry_cli.py", "entry_gui.py"):
        assert f'"{script}"' in spec and (PACKAGING / script).is_file()
    assert '"viz.kernels_numba": "py"' in spec, "numba needs the kernels' source file to cache frozen"
    for script in ("build_frozen.sh", "smoke_frozen.sh", "install_desktop.sh"):
        assert os.access(PACKAGING / script, os.X_OK), script


# the user's own libraries, imported only when the user passes their objects (never installed by warpviz)
USERS_OWN = {"cupy", "torch", "triton", "pandas"}


def test_every_library_viz_imports_is_a_declared_dependency():
    """Each third-party import in viz/ (at module level or inside a function) is in
    pyproject.toml's dependencies or an extra (pycuda: [gpu]), or one of the user's own
    libraries; and no dependency is declared that viz/ never imports (one TOML writer)."""
    import ast
    import re
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower().replace("-", "_")
                for d in meta["dependencies"] + meta["optional-dependencies"]["gpu"]}
    # import names of the distributions whose import name differs
    provides = {"pyside6_essentials": {"PySide6"}, "pillow": {"PIL"}}
    importable = set()
    for dist in declared:
        importable |= provides.get(dist, {dist})
    imported = set()
    for path in (ROOT / "viz").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"viz", "warpviz"} - USERS_OWN
    assert third_party - importable == set(), "imported but not a dependency"
    assert importable - third_party == set(), "a dependency viz/ never imports"


# the docs' sentences that state the wheel's and the sdist's size ("{}": the figure in MB)
SIZE_PROSE = [
    ("whl", "README.md", "`dist/warpviz-0.1.0-py3-none-any.whl` ({} MB;"),
    ("whl", "docs/guide/install.md", "`dist/warpviz-0.1.0-py3-none-any.whl`, about {} MB,"),
    ("whl", "packaging/README.md", "| the wheel `warpviz-VERSION-py3-none-any.whl` | {} MB |"),
    ("whl", "docs/PERFORMANCE.md", "the H100 measurements; 2026-11-29) | {} MB |"),
    ("tar.gz", "docs/PERFORMANCE.md", "| sdist (2026-11-29) | {} MB |"),
]


@pytest.mark.parametrize("ext,rel,template", SIZE_PROSE, ids=[f"{r}:{e}" for e, r, _ in SIZE_PROSE])
def test_the_docs_state_the_built_packages_size(dist, ext, rel, template):
    """Each size the docs give for the wheel or the sdist is within 10% of the one just built
    (so a figure goes stale, and fails here, once the package grows or shrinks by a tenth)."""
    import re

    text = " ".join((ROOT / rel).read_text(encoding="utf-8").split())
    pattern = re.escape(" ".join(template.split())).replace(r"\{\}", r"([\d.]+)")
    found = re.search(pattern, text)
    assert found, f"{rel} no longer has the sentence {template!r}: update SIZE_PROSE with it"
    stated = float(found[1]) * 1e6
    real = one(dist, f"*.{ext}").stat().st_size
    assert abs(stated - real) <= 0.1 * real, f"{rel} says {found[1]} MB; the built .{ext} is {real / 1e6:.2f} MB"


# CFF 1.2.0: the keys a CITATION.cff may have at its top level, and those it must have
CFF_KEYS = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi", "identifiers",
            "keywords", "license", "license-url", "message", "preferred-citation", "references", "repository",
            "repository-artifact", "repository-code", "title", "type", "url", "version"}
CFF_REQUIRED = {"authors", "cff-version", "message", "title"}


def test_citation_file_is_cff_1_2_and_names_this_version():
    yaml = pytest.importorskip("yaml", reason="PyYAML is in the test extra")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert isinstance(cff, dict) and CFF_REQUIRED <= set(cff) and set(cff) <= CFF_KEYS, set(cff) ^ CFF_KEYS
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == viz.__version__                       # a string, as the format wants
    assert cff["authors"] == [{"name": "warpviz developers"}]
    assert isinstance(cff["message"], str) and isinstance(cff["title"], str) and cff["title"].strip()
    assert all(isinstance(k, str) and k for k in cff["keywords"])
    import tomllib
    assert cff["license"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "MIT"


def test_changelog_starts_with_the_work_not_yet_released():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0].startswith("## Unreleased") and len(headings) >= 3
    assert f"version has been {viz.__version__} throughout" in " ".join(text.split())


def test_wheel_metadata_has_classifiers_and_keywords(dist):
    """The METADATA the wheel carries: real trove classifiers (Typing :: Typed among them),
    the authors, the keywords; no Project-URL (warpviz has no public address yet)."""
    import email
    import tomllib

    trove = pytest.importorskip("trove_classifiers", reason="trove-classifiers is in the test extra")
    z = zipfile.ZipFile(one(dist, "*.whl"))
    meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))))
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["classifiers"]
    assert meta.get_all("Classifier") == declared and "Typing :: Typed" in declared
    assert set(declared) <= trove.classifiers, set(declared) - trove.classifiers
    assert meta["Author"] == "warpviz developers" and "CUDA" in meta["Keywords"]
    assert meta.get_all("Project-URL") is None
