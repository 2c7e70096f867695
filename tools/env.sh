#!/usr/bin/env bash
# Create or refresh the project's virtual environment (.venv) and print its path.
# Reinstalls only when pyproject.toml changed since the last install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${WARPVIZ_VENV:-$root/.venv}"
py="${PYTHON:-python3}"
stamp="$venv/.warpviz-installed"
want="$(sha256sum "$root/pyproject.toml" | cut -c1-16)-${WARPVIZ_EXTRAS:-test}"
if [ ! -x "$venv/bin/python" ]; then
  echo "warpviz: creating the environment in $venv (first run, a few minutes)" >&2
  "$py" -m venv "$venv" >&2
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "warpviz: installing dependencies into $venv" >&2
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q -e "$root[${WARPVIZ_EXTRAS:-test}]" >&2
  echo "$want" > "$stamp"
fi
echo "$venv"
