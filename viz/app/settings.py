"""Where the app keeps its settings and the user's scenarios.

``WARPVIZ_SETTINGS`` (an .ini path) and ``WARPVIZ_DATA_DIR`` (a folder) override the
platform locations, so tests and demos never touch a user's real settings.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

ORG = "warpviz"
APP = "warpviz"


def settings() -> QSettings:
    path = os.environ.get("WARPVIZ_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORG, APP)


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


def get(key: str, default, kind=None):
    """A setting with a type (QSettings' ini backend returns strings)."""
    s = settings()
    v = s.value(key, default)
    if kind is bool:
        return v if isinstance(v, bool) else str(v).lower() in ("1", "true", "yes")
    if kind is not None and v is not None:
        try:
            return kind(v)
        except (TypeError, ValueError):
            return default
    return v


def put(key: str, value) -> None:
    s = settings()
    s.setValue(key, value)
    s.sync()
