#!/usr/bin/env bash
# Build the frozen one-folder app: dist/warpviz/warpviz (Linux; macOS works the same way,
# Windows: see packaging/README.md). Steps: a clean build venv (build/frozen-venv), the
# wheel (python -m build), that wheel installed with the [packaging] extra (PyInstaller),
# then `pyinstaller packaging/warpviz.spec`. Prints the folder's size at the end.
# Then run packaging/smoke_frozen.sh to try the result offscreen.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${WARPVIZ_FROZEN_VENV:-$root/build/frozen-venv}"
py="${PYTHON:-python3}"
cd "$root"
if [ ! -x "$venv/bin/python" ]; then
  echo "build_frozen: creating the build environment in $venv" >&2
  "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip build
rm -rf build/wheel
"$venv/bin/python" -m build --outdir build/wheel . >&2
wheel="$(ls build/wheel/warpviz-*.whl)"
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel"
"$venv/bin/python" -m pip install -q "${wheel}[packaging]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
rm -rf dist/warpviz
# From outside the checkout, so that `import viz` finds the installed wheel, not ./viz.
mkdir -p build/pyinstaller
(cd build/pyinstaller && "$venv/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$root/dist" --workpath "$root/build/pyinstaller" "$root/packaging/warpviz.spec")
echo "build_frozen: $(du -sh dist/warpviz | cut -f1) in dist/warpviz ($(find dist/warpviz -type f | wc -l) files)"
