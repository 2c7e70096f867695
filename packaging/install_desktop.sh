#!/usr/bin/env bash
# Put warpviz in the desktop's application menu: the .desktop entry, the icons (hicolor
# theme) and the AppStream metadata, under $XDG_DATA_HOME (default ~/.local/share), or
# under PREFIX/share with --prefix PREFIX (e.g. /usr/local, as root).
#   packaging/install_desktop.sh                          # Exec=warpviz (pipx, pip, PATH)
#   packaging/install_desktop.sh /opt/warpviz/warpviz     # Exec= that binary (frozen folder)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
icons="$here/../assets/icons"
share="${XDG_DATA_HOME:-$HOME/.local/share}"
if [ "${1:-}" = "--prefix" ]; then share="$2/share"; shift 2; fi
exe="${1:-warpviz}"
[ "$exe" = warpviz ] || exe="$(realpath "$exe")"
install -d "$share/applications" "$share/metainfo" "$share/icons/hicolor/scalable/apps"
sed -e "s|^Exec=warpviz|Exec=$exe|" -e "s|^TryExec=warpviz|TryExec=$exe|" \
  "$here/warpviz.desktop" > "$share/applications/warpviz.desktop"
install -m 644 "$here/io.github.warpviz.Warpviz.metainfo.xml" "$share/metainfo/"
install -m 644 "$icons/warpviz.svg" "$share/icons/hicolor/scalable/apps/warpviz.svg"
for png in "$icons"/png/warpviz-*.png; do
  n="${png##*-}"; n="${n%.png}"
  install -D -m 644 "$png" "$share/icons/hicolor/${n}x${n}/apps/warpviz.png"
done
command -v update-desktop-database > /dev/null && update-desktop-database -q "$share/applications" || true
echo "installed warpviz.desktop (Exec=$exe) under $share"
