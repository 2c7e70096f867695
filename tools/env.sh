#!/usr/bin/env bash
# Create or refresh the project's virtual environment (.venv) and print its path.
#   tools/env.sh            the app's own dependencies only (what ./run-app needs)
#   tools/env.sh test       also the test stack (pytest, pytest-qt, build, nbclient...: ./run-tests)
# One environment, upgraded on demand: ./run-app on a fresh clone installs only what the app
# imports; ./run-tests adds the `test` extra to the same .venv the first time it runs. Extras
# once installed stay (the stamp lists them), so ./run-app after ./run-tests reinstalls nothing.
# Reinstalls when pyproject.toml changed since the last install. WARPVIZ_VENV=DIR uses another
# folder; WARPVIZ_EXTRAS=a,b adds extras (e.g. gpu).
set -euo pipefail
set -f          # the extras are split on commas below: no file-name globbing of them
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${WARPVIZ_VENV:-$root/.venv}"
py="${PYTHON:-python3}"
stamp="$venv/.warpviz-installed"
hash="$(sha256sum "$root/pyproject.toml" | cut -c1-16)"
wanted="${1:-},${WARPVIZ_EXTRAS:-}"
# the stamp: "HASH EXTRA,EXTRA" (older stamps read "HASH-EXTRA")
old="$(cat "$stamp" 2>/dev/null || true)"
old_hash="${old%%[ -]*}"
old_extras=""
case "$old" in *" "*) old_extras="${old#* }" ;; *-*) old_extras="${old#*-}" ;; esac
# the extras to have: those asked for plus those already there (sorted, no duplicates)
extras="$(printf '%s\n' ${wanted//,/ } ${old_extras//,/ } | awk 'NF && !seen[$0]++' | sort | paste -sd, -)"
if [ ! -x "$venv/bin/python" ]; then
  echo "warpviz: creating the environment in $venv (first run, a few minutes)" >&2
  "$py" -m venv "$venv" >&2
  old_hash="" extras="$(printf '%s\n' ${wanted//,/ } | awk 'NF && !seen[$0]++' | sort | paste -sd, -)"
fi
missing=0
for e in ${wanted//,/ }; do
  case ",$old_extras," in *",$e,"*) ;; *) missing=1 ;; esac
done
if [ "$old_hash" != "$hash" ] || [ "$missing" = 1 ]; then
  echo "warpviz: installing ${extras:+the extras [$extras] and }the app's dependencies into $venv" >&2
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q -e "$root${extras:+[$extras]}" >&2
  echo "$hash $extras" > "$stamp"
fi
echo "$venv"
