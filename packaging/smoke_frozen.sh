#!/usr/bin/env bash
# Smoke-test the frozen app (default dist/warpviz/warpviz) as a user with nothing but the
# folder would run it: from an empty directory, a fresh HOME (so an empty numba cache), no
# checkout on any path, Qt offscreen. Checks --version, list, analyze (twice: compiling,
# then from the numba cache), export of one frame (PNG) and one instruction (MP4), and the
# app's start: time to its window under Xvfb when Xvfb and xdotool exist, else that it
# stays up offscreen. Prints the timings; exits non-zero on the first failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exe="$(realpath "${1:-$root/dist/warpviz/warpviz}")"
want="warpviz $(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$root/viz/__init__.py")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/run"
cd "$work/run"
bare=(env -i HOME="$work/home" PATH=/usr/bin:/bin LANG=C.UTF-8)
run() { "${bare[@]}" QT_QPA_PLATFORM=offscreen "$exe" "$@"; }  # the binary in a bare environment
now() { echo "$EPOCHREALTIME"; }
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }

if [ -d "$(dirname "$exe")/_internal" ]; then
  echo "smoke: $exe ($(du -sh "$(dirname "$exe")" | cut -f1) folder)"
else
  echo "smoke: $exe"
fi

t0=$(now); got="$(run --version)"; t1=$(now)
[ "$got" = "$want" ] || fail "--version printed '$got', expected '$want'"
echo "smoke: --version ok ($(secs "$t0" "$t1") s)"

t0=$(now); run list > list.txt; t1=$(now)
grep -q "^transpose-tile	" list.txt || fail "list has no transpose-tile"
echo "smoke: list ok, $(wc -l < list.txt) built-ins ($(secs "$t0" "$t1") s)"

for pass in cold warm; do
  t0=$(now); run analyze transpose-tile --json > analyze.json; t1=$(now)
  python3 -c "import json; d = json.load(open('analyze.json')); assert d['name'] == 'transpose-tile'; \
assert d['metrics']['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'] > 0" \
    || fail "analyze --json is not the expected document"
  echo "smoke: analyze transpose-tile --json ok, numba cache $pass ($(secs "$t0" "$t1") s)"
done
ls "$work/home/.cache/warpviz/numba"/*/*.nbi > /dev/null 2>&1 || fail "no numba cache in ~/.cache/warpviz/numba"
echo "smoke: numba cache written to ~/.cache/warpviz/numba"

if run export --help > /dev/null 2>&1; then
  t0=$(now); run export transpose-tile --out frame.png; t1=$(now)
  [ "$(head -c 8 frame.png | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] || fail "export wrote no PNG"
  echo "smoke: export transpose-tile --out frame.png ok, $(wc -c < frame.png) bytes ($(secs "$t0" "$t1") s)"
  t0=$(now); run export transpose-tile --instruction 1 --quiet --out clip.mp4; t1=$(now)
  [ "$(head -c 12 clip.mp4 | tail -c 8 | head -c 4)" = "ftyp" ] || fail "export wrote no MP4 (is ffmpeg bundled?)"
  echo "smoke: export transpose-tile --instruction 1 --out clip.mp4 ok, $(wc -c < clip.mp4) bytes ($(secs "$t0" "$t1") s)"
else
  echo "smoke: export: this build has no 'warpviz export' command yet: skipped"
fi

# The app: time from launch to its main window mapped.
if command -v Xvfb > /dev/null && command -v xdotool > /dev/null; then
  Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3> xvfb.display > /dev/null 2>&1 &
  xvfb=$!  # -displayfd: Xvfb picks a free display and writes its number
  for _ in $(seq 1 100); do [ -s xvfb.display ] && break; sleep 0.05; done
  display=":$(cat xvfb.display)"
  t0=$(now)
  "${bare[@]}" QT_QPA_PLATFORM=xcb DISPLAY="$display" "$exe" transpose-tile > app.log 2>&1 &
  app=$!
  found=""
  for _ in $(seq 1 600); do
    if DISPLAY="$display" xdotool search --onlyvisible --name warpviz > /dev/null 2>&1; then found=1; break; fi
    kill -0 "$app" 2> /dev/null || break
    sleep 0.05
  done
  t1=$(now)
  if [ -n "$found" ] && [ -n "${SMOKE_SCREENSHOT:-}" ] && command -v import > /dev/null; then
    sleep 2; DISPLAY="$display" import -window root "$SMOKE_SCREENSHOT"
  fi
  kill "$app" 2> /dev/null || true; wait "$app" 2> /dev/null || true
  kill "$xvfb" 2> /dev/null || true; wait "$xvfb" 2> /dev/null || true
  [ -n "$found" ] || { cat app.log >&2; fail "the app showed no window within 30 s"; }
  echo "smoke: app window shown under Xvfb after $(secs "$t0" "$t1") s"
else
  "${bare[@]}" QT_QPA_PLATFORM=offscreen "$exe" transpose-tile > app.log 2>&1 &
  app=$!
  sleep 10
  kill -0 "$app" 2> /dev/null || { cat app.log >&2; fail "the app exited offscreen"; }
  kill "$app"; wait "$app" 2> /dev/null || true
  echo "smoke: app stayed up offscreen for 10 s (no Xvfb/xdotool to time its window)"
fi
echo "smoke: all ok"
