"""Can Qt open a window here? Checked before the QApplication is made, because Qt itself
aborts the process (a core dump, exit 134) when it has no display or when its X11 platform
plugin (``xcb``) is missing system libraries.

``problem()`` returns ``None`` when the app can start, else the paragraph to print (the CLI
exits with status 2). It imports nothing from Qt: it reads the environment, asks the dynamic
loader for the libraries that the xcb plugin of PySide6 6.6–6.11 links against (the list
below; ``tests/test_display.py`` compares it with the installed plugin's), and opens and
closes one connection to the X server.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from typing import Callable, Mapping

from ..i18n import tr

# Qt platforms that need no display at all.
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "eglfs",
                                "vkkhrdisplay"})


@dataclass(frozen=True)
class Library:
    soname: str     # what the dynamic loader looks for
    debian: str     # the package that has it on Debian and Ubuntu
    fedora: str     # ... on Fedora, RHEL and their kin


# What Qt 6's xcb platform plugin (PySide6/Qt/plugins/platforms/libqxcb.so and
# PySide6/Qt/lib/libQt6XcbQpa.so.6) needs from the system, with the packages that have it.
XCB_LIBRARIES: tuple[Library, ...] = (
    Library("libxcb.so.1", "libxcb1", "libxcb"),
    Library("libX11.so.6", "libx11-6", "libX11"),
    Library("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    Library("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    Library("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    Library("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    Library("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    Library("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    Library("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    Library("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    Library("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    Library("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    Library("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    Library("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    Library("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    Library("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    Library("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    Library("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
)


def loadable(soname: str) -> bool:
    """Whether the dynamic loader finds and loads ``soname`` (exactly what Qt will ask it)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def platforms(env: Mapping[str, str]) -> list[str]:
    """The platforms of ``QT_QPA_PLATFORM`` in Qt's order ("wayland;xcb", "xcb:opt=1")."""
    value = env.get("QT_QPA_PLATFORM", "")
    return [p.split(":", 1)[0].strip().lower() for p in value.split(";") if p.strip()]


def uses_xcb(env: Mapping[str, str]) -> bool:
    """Whether Qt will start on X11 (assuming a display is set)."""
    chosen = platforms(env)
    if chosen:
        return chosen[0] == "xcb"
    if env.get("WAYLAND_DISPLAY") and (not env.get("DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland"):
        return False          # a Wayland session: Qt picks its wayland plugin
    return True               # Qt's default on Linux


def missing_libraries(load: Callable[[str], bool] = loadable) -> list[Library]:
    return [lib for lib in XCB_LIBRARIES if not load(lib.soname)]


def x_server_error(display: str) -> int:
    """0 when an X server answers at ``display``; else libxcb's error code (or -1: no libxcb)."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return -1
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    if not conn:
        return -1
    err = xcb.xcb_connection_has_error(conn)
    xcb.xcb_disconnect(conn)   # also frees the error object that a failed connect returns
    return int(err)


def no_display_message() -> str:
    return tr("the app cannot open its window: there is no display here (neither DISPLAY nor "
              "WAYLAND_DISPLAY is set, as on a server or over ssh without -X). To make videos and "
              "pictures without a window, use `warpviz export SCENARIO --out FILE` (see `warpviz "
              "export --help`); to run the app without a screen, for scripts or tests, set "
              "QT_QPA_PLATFORM=offscreen.")


def missing_libraries_message(missing: list[Library]) -> str:
    def unique(names):
        return " ".join(dict.fromkeys(names))

    return tr("the app cannot open its window: Qt's X11 platform (xcb) needs system libraries that "
              "are not installed: {libs}.\n"
              "  Debian, Ubuntu: sudo apt-get install {debian}\n"
              "  Fedora: sudo dnf install {fedora}\n"
              "The install guide (docs/guide/install.md) lists them all. Without a window, "
              "`warpviz export` still writes videos and pictures, and QT_QPA_PLATFORM=offscreen "
              "runs the app without a screen.",
              libs=", ".join(lib.soname for lib in missing), debian=unique(lib.debian for lib in missing),
              fedora=unique(lib.fedora for lib in missing))


def unreachable_message(display: str) -> str:
    return tr("the app cannot open its window: no X server answers at DISPLAY={display} (is it "
              "running, and may this user connect to it? Over ssh, use ssh -X). Without a window, "
              "`warpviz export` still writes videos and pictures, and QT_QPA_PLATFORM=offscreen "
              "runs the app without a screen.", display=display)


def problem(env: Mapping[str, str] | None = None, system: str | None = None,
            load: Callable[[str], bool] = loadable,
            connect: Callable[[str], int] = x_server_error) -> str | None:
    """Why Qt could not open a window here (the paragraph to print), or None."""
    env = os.environ if env is None else env
    system = sys.platform if system is None else system
    if not system.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None               # Windows and macOS: Qt's own platform, always there
    chosen = platforms(env)
    if chosen and chosen[0] in HEADLESS_PLATFORMS:
        return None
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return no_display_message()
    if not uses_xcb(env):
        return None
    if not env.get("DISPLAY"):
        return no_display_message()
    missing = missing_libraries(load)
    if missing:
        return missing_libraries_message(missing)
    if connect(env["DISPLAY"]) != 0:
        return unreachable_message(env["DISPLAY"])
    return None


if __name__ == "__main__":   # `python3 -m viz.app.display debian|fedora`: the packages (tools/install-x11.sh)
    print(" ".join(dict.fromkeys(getattr(lib, sys.argv[1]) for lib in XCB_LIBRARIES)))
