#!/usr/bin/env bash
# Run HERE (a machine with network): download what the device machine needs to build and
# run PyCUDA into .gpu-wheels/ (git-ignored), for Python 3.12 on x86-64 Linux.
# The device has numpy, numba, llvmlite, markupsafe, pytest and hypothesis already
# (/work/.library/device/KINDS.md); it lacks pycuda, pytools, platformdirs, mako,
# siphash24, tomlkit (to_toml, launch folders from Python) and pathvalidate (safe file names). Carry the folder with the run tool's `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=.gpu-wheels
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$DEST"
PLAT=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any)
WHEELS=(pytools==2026.1.1 platformdirs==4.14.7 mako==1.4.3 siphash24==1.9 tomlkit==0.15.2 pathvalidate==3.3.1)
for w in "${WHEELS[@]}"; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLAT[@]}" -d "$DEST" "$w"
done
"$PY" -m pip download -q --no-deps --no-build-isolation --no-binary=:all: pycuda==2026.1 -d "$DEST"
ls -l "$DEST"
