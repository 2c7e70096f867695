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


_data_refused: dict[str, str] = {}   # data folder -> why it is not used this session
_private_data: Path | None = None    # this session's data folder when the real one cannot be used


def configured_data_dir() -> Path:
    """The user data folder as configured: ``WARPVIZ_DATA_DIR``, else the platform's."""
    env = os.environ.get("WARPVIZ_DATA_DIR")
    if env:
        return Path(env)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(base or Path.home() / ".local" / "share") / "warpviz"


def _usable_folder(d: Path) -> str | None:
    """Why ``d`` cannot be the app's folder (made if missing, then written), else None."""
    try:
        d.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        from ..i18n import tr

        return tr("a file of that name is in the way")
    except (OSError, ValueError) as err:           # read-only, a file above it, a full disk, a NUL in the path
        return getattr(err, "strerror", None) or str(err)
    if not os.access(d, os.W_OK | os.X_OK):
        from ..i18n import tr

        return tr("it is read-only")
    return None


def _private_data_dir() -> Path:
    global _private_data
    if _private_data is None:
        _private_data = Path(tempfile.mkdtemp(prefix="warpviz-data-"))
    return _private_data


def data_dir() -> Path:
    """The user data folder (created on demand). When it cannot be made or written (a file
    in its place, a read-only folder, a full disk), a private folder for this session, so
    the app keeps running; ``data_problem()`` says why (the window shows it) and autosave is
    off (``autosave_off``)."""
    d = configured_data_dir()
    why = _usable_folder(d)
    if why is not None:
        _data_refused[str(d)] = why
        return _private_data_dir()
    _data_refused.pop(str(d), None)
    return d


def data_subdir(name: str) -> Path:
    """A folder inside the data folder (made on demand); a private one when it cannot be."""
    base = data_dir()
    d = base / name
    why = _usable_folder(d)
    if why is not None:
        _data_refused[str(d)] = why
        d = _private_data_dir() / name
        d.mkdir(parents=True, exist_ok=True)
    return d


def data_problem() -> str | None:
    """Why the data folder (or a folder in it) is not used this session, else None."""
    if not _data_refused:
        return None
    from ..i18n import tr

    path, why = next(iter(_data_refused.items()))
    if not autosave_off():                         # a folder inside it: what goes there is kept apart
        return tr("The folder {path} cannot be used ({why}): warpviz keeps what goes there in a temporary folder "
                  "this session. Fix the folder, then start warpviz again.", path=path, why=why)
    return tr("The data folder {path} cannot be used ({why}): warpviz keeps this session's scenarios and traces "
              "in a temporary folder, and autosave (crash recovery) is off. Fix the folder or set WARPVIZ_DATA_DIR, "
              "then start warpviz again.", path=path, why=why)


def user_scenario_dir() -> Path:
    return data_subdir("scenarios")


def recovery_dir() -> Path:
    """The recovery folder; OSError when it cannot be made (autosave says so, naming it)."""
    d = data_dir() / "recovery"
    d.mkdir(parents=True, exist_ok=True)
    return d


def autosave_off() -> bool:
    """No data folder this session (``data_problem``): autosave has nowhere to keep the text."""
    return str(configured_data_dir()) in _data_refused


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
