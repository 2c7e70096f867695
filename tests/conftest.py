"""Shared test setup: Qt offscreen, and user folders redirected to a temporary place."""

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_tmp = Path(tempfile.mkdtemp(prefix="warpviz-tests-"))
# Keep tests away from the real user's settings, scenarios and autosaves.
os.environ.setdefault("XDG_CONFIG_HOME", str(_tmp / "config"))
os.environ.setdefault("XDG_DATA_HOME", str(_tmp / "data"))
sys.path.insert(0, str(Path(__file__).parent))

# The app tests' ``window`` fixture (tests/app_helpers.py) needs ``undo_clock``: defined here
# once, every test module that imports ``window`` finds it.
from app_helpers import undo_clock  # noqa: E402,F401 - fixture
