#!/usr/bin/env bash
# Install what the X11 smoke tests (tests/test_xcb_smoke.py) need: Xvfb, xdotool and the
# libraries of Qt's xcb platform (the list in viz/app/display.py). Used by .ci/run.
# Never fails: where it cannot install (not root, no apt-get/dnf, no network) it says so,
# and those tests skip, naming what is missing.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"
say() { echo "x11 smoke tests: $*" >&2; }

have_all() {
  command -v Xvfb >/dev/null && command -v xdotool >/dev/null &&
    (cd "$root" && "$py" -c 'import sys; from viz.app.display import missing_libraries as m; sys.exit(1 if m() else 0)') 2>/dev/null
}

if have_all; then
  say "Xvfb, xdotool and Qt's X11 libraries are installed"
  exit 0
fi
if [ "$(uname -s)" != Linux ]; then
  say "not Linux; they will skip"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  say "cannot install Xvfb, xdotool and Qt's X11 libraries (not root, no password-less sudo); they will skip"
  exit 0
fi
if command -v apt-get >/dev/null; then
  # fonts-noto-cjk: the CJK font the README recommends; the suite must pass with it installed
  pkgs="xvfb xdotool fonts-noto-cjk $(cd "$root" && "$py" -m viz.app.display debian)"
  say "installing with apt-get: $pkgs"
  # Two checkouts' CI side by side both get here: the second waits for the first's apt-get (a
  # lock of our own around both steps, and apt's own lock timeout for any other apt user)
  # instead of failing on "Could not get lock /var/lib/apt/lists/lock".
  lock=()
  command -v flock >/dev/null && lock=(flock -w 900 /tmp/.warpviz-install-x11.lock)
  wait_apt=(-o DPkg::Lock::Timeout=600)
  if ! { "${sudo[@]}" "${lock[@]}" apt-get "${wait_apt[@]}" update -qq &&
         DEBIAN_FRONTEND=noninteractive "${sudo[@]}" "${lock[@]}" apt-get "${wait_apt[@]}" install -y -qq \
           --no-install-recommends $pkgs; } >&2; then
    say "apt-get could not install them (see above); they will skip"
  fi
elif command -v dnf >/dev/null; then
  pkgs="xorg-x11-server-Xvfb xdotool google-noto-sans-cjk-ttc-fonts $(cd "$root" && "$py" -m viz.app.display fedora)"
  say "installing with dnf: $pkgs"
  if ! "${sudo[@]}" dnf install -y -q $pkgs >&2; then
    say "dnf could not install them (see above); they will skip"
  fi
else
  say "no apt-get or dnf to install Xvfb, xdotool and Qt's X11 libraries; they will skip"
fi
have_all && say "installed" || say "still missing something; they will skip, saying what"
exit 0
