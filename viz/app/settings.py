"""Where the app keeps its settings and the user's scenarios.

``WARPVIZ_SETTINGS`` (an .ini path) and ``WARPVIZ_DATA_DIR`` (a folder) override the
platform locations, so tests and demos never touch a user's real settings.

The settings file is hostile input like any other file: it may have been edited by hand,
copied from another machine, truncated, or replaced by something else. So

- a settings file that is not a regular file (a FIFO, a device, a folder) or is larger than
  ``MAX_SETTINGS_BYTES`` is not read at all (reading a FIFO would hang the start, a device
  would fill the memory): the app starts with its defaults, keeps this session's settings in
  a private file of its own, and ``problem()`` says why (the window shows it);
- every setting is read with its type, and its range or its allowed values (``get``); a
  value that is missing, of another type, out of range, not finite or too long is the
  default. Nothing read from the file reaches the app unchecked.
"""

from __future__ import annotations

import math
import os
import stat
import tempfile
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

ORG = "warpviz"
APP = "warpviz"
MAX_SETTINGS_BYTES = 1 << 20     # a real settings file is a few KiB
MAX_TEXT = 4096                  # characters of one text setting (a path, a name)
MAX_BYTES_VALUE = 1 << 20        # bytes of one binary setting (window geometry and state)

_refused: dict[str, str] = {}    # settings path -> why it is not used
_private: Path | None = None     # this session's settings file when the real one is refused


def settings_path() -> Path:
    """The settings file: ``WARPVIZ_SETTINGS``, else the platform's (it may not exist yet)."""
    path = os.environ.get("WARPVIZ_SETTINGS")
    if path:
        return Path(path)
    return Path(QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORG, APP).fileName())


def _why_unusable(path: Path) -> str | None:
    """Why ``path`` must not be read as the settings file; None when it may (or does not exist)."""
    try:
        st = os.stat(path)                 # through a link: what would be read
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:   # ValueError: a NUL in the path
        return getattr(err, "strerror", None) or str(err)
    from ..i18n import tr

    if not stat.S_ISREG(st.st_mode):
        return tr("it is not a regular file")
    if st.st_size > MAX_SETTINGS_BYTES:
        return tr("it is {size} bytes, more than a settings file can be ({most})", size=f"{st.st_size:,}",
                  most=f"{MAX_SETTINGS_BYTES:,}")
    return None


def _private_file() -> Path:
    global _private
    if _private is None:
        _private = Path(tempfile.mkdtemp(prefix="warpviz-settings-")) / "settings.ini"
    return _private


def settings() -> QSettings:
    """The app's settings (an ini file); a private, empty one for this session when the real
    one cannot be used (``problem()``)."""
    path = settings_path()
    why = _why_unusable(path)
    if why is not None:
        _refused[str(path)] = why
        return QSettings(str(_private_file()), QSettings.Format.IniFormat)
    _refused.pop(str(path), None)
    return QSettings(str(path), QSettings.Format.IniFormat)


def problem() -> str | None:
    """Why the settings file is not used this session (for the status bar), else None."""
    path = settings_path()
    if _why_unusable(path) is None:
        _refused.pop(str(path), None)
    why = _refused.get(str(path))
    if why is None:
        return None
    from ..i18n import tr

    return tr("The settings file {path} is not used ({why}): warpviz starts with its defaults and keeps this "
              "session's settings apart.", path=path, why=why)


def data_dir() -> Path:
    """The user data folder (created on demand)."""
    env = os.environ.get("WARPVIZ_DATA_DIR")
    if env:
        d = Path(env)
    else:
        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
        d = Path(base or Path.home() / ".local" / "share") / "warpviz"
    d.mkdir(parents=True, exist_ok=True)
    return d


def user_scenario_dir() -> Path:
    d = data_dir() / "scenarios"
    d.mkdir(parents=True, exist_ok=True)
    return d


def recovery_dir() -> Path:
    d = data_dir() / "recovery"
    d.mkdir(parents=True, exist_ok=True)
    return d


# ---------------------------------------------------------------------------- typed reading

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _typed(v, kind):
    """``v`` as ``kind`` (bool, int, float, str, bytes), or raises ValueError."""
    if kind is bool:
        if isinstance(v, bool):
            return v
        if isinstance(v, int) and v in (0, 1):
            return bool(v)
        if isinstance(v, str) and v.strip().lower() in _TRUE + _FALSE:
            return v.strip().lower() in _TRUE
        raise ValueError("not a yes/no value")
    if kind is int:
        if isinstance(v, bool):
            raise ValueError("a yes/no value")
        if isinstance(v, int):
            return v
        if isinstance(v, str) and len(v) <= 20:
            return int(v.strip())
        raise ValueError("not a whole number")
    if kind is float:
        if isinstance(v, bool):
            raise ValueError("a yes/no value")
        if isinstance(v, (int, float)) or (isinstance(v, str) and len(v) <= 40):
            x = float(v)
            if not math.isfinite(x):
                raise ValueError("not a finite number")
            return x
        raise ValueError("not a number")
    if kind is str:
        if isinstance(v, str) and len(v) <= MAX_TEXT and "\0" not in v:
            return v
        raise ValueError("not a short text")
    if kind is bytes:
        if isinstance(v, QByteArray) and v.size() <= MAX_BYTES_VALUE:
            return v
        raise ValueError("not binary data")
    raise TypeError(f"no such kind of setting: {kind!r}")


def get(key: str, default, kind=None, *, lo=None, hi=None, choices=None):
    """A setting of ``kind`` (bool, int, float, str; bytes: a QByteArray), within ``lo``..``hi``
    and among ``choices`` where given; ``default`` when it is missing, unreadable, of another
    type or out of range (``kind`` None: the type of ``default``)."""
    kind = kind if kind is not None else (type(default) if default is not None else str)
    try:
        v = settings().value(key, None)
    except Exception:  # noqa: BLE001 - a value Qt cannot turn into Python: the default
        return default
    if v is None:
        return default
    try:
        v = _typed(v, kind)
    except (TypeError, ValueError, OverflowError):
        return default
    if lo is not None and v < lo or hi is not None and v > hi:
        return default
    if choices is not None and v not in choices:
        return default
    return v


def put(key: str, value) -> None:
    s = settings()
    s.setValue(key, value)
    s.sync()
