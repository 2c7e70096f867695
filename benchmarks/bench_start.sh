#!/usr/bin/env bash
# Start-up times of an installed warpviz: the frozen folder's binary or a venv's script.
#   benchmarks/bench_start.sh dist/warpviz/warpviz
#   benchmarks/bench_start.sh /tmp/venv-wheel/bin/warpviz
# Each run is a bare environment (env -i, a temporary HOME, an empty working directory).
# Commands: 5 runs each after one warm-up (numba cache filled), wall min / median and the
# least CPU time. Window: fresh HOME each time, launch to the main window mapped under
# Xvfb (needs Xvfb and xdotool), 4 runs. Docs: docs/PERFORMANCE.md, "Install and frozen build".
set -euo pipefail
exe="$(realpath "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/run"
cd "$work/run"
summary() {  # lines "wall user sys" on stdin
  python3 -c "
import statistics as st, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
wall = [r[0] for r in rows]
cpu = min(r[1] + r[2] for r in rows)
print(f'$1: wall min {min(wall):.2f} s, median {st.median(wall):.2f} s' + (f'; cpu min {cpu:.2f} s' if cpu else ''))"
}
echo "bench_start: $exe, load average $(cut -d' ' -f1-3 /proc/loadavg)"
env -i HOME="$work/home" PATH=/usr/bin:/bin QT_QPA_PLATFORM=offscreen "$exe" analyze transpose-tile > /dev/null
for args in "--version" "list" "analyze transpose-tile"; do
  for _ in 1 2 3 4 5; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S" -o time.txt env -i HOME="$work/home" PATH=/usr/bin:/bin \
      QT_QPA_PLATFORM=offscreen "$exe" $args > /dev/null
    cat time.txt
  done | summary "$args"
done
if command -v Xvfb > /dev/null && command -v xdotool > /dev/null; then
  Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3> xvfb.display > /dev/null 2>&1 &
  xvfb=$!  # -displayfd: Xvfb picks a free display and writes its number
  for _ in $(seq 1 100); do [ -s xvfb.display ] && break; sleep 0.05; done
  display=":$(cat xvfb.display)"
  for i in 1 2 3 4; do
    home="$(mktemp -d -p "$work")"
    t0=$EPOCHREALTIME
    env -i HOME="$home" PATH=/usr/bin:/bin LANG=C.UTF-8 DISPLAY="$display" QT_QPA_PLATFORM=xcb \
      "$exe" transpose-tile > "app-$i.log" 2>&1 &  # not through a function: $! must be the app
    app=$!
    for _ in $(seq 1 1500); do
      DISPLAY="$display" xdotool search --onlyvisible --name warpviz > /dev/null 2>&1 && break
      kill -0 "$app" 2> /dev/null || { cat "app-$i.log" >&2; exit 1; }
      sleep 0.02
    done
    t1=$EPOCHREALTIME
    echo "$(python3 -c "print($t1 - $t0)") 0 0"
    sleep 2
    kill "$app"; wait "$app" 2> /dev/null || true
    while DISPLAY="$display" xdotool search --onlyvisible --name warpviz > /dev/null 2>&1; do sleep 0.1; done
  done | summary "window (fresh HOME)"
  kill "$xvfb"; wait "$xvfb" 2> /dev/null || true
fi
