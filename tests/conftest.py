"""Shared test setup: Qt offscreen, and user folders redirected to a temporary place."""

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_tmp = Path(tempfile.mkdtemp(prefix="warpviz-tests-"))
# Keep tests away from the real user's settings, scenarios and autosaves. Under pytest-xdist
# (./run-tests runs one worker per core) each worker process gets folders of its own: the
# workers inherit the controller's environment, so a plain setdefault would share its folders.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["XDG_CONFIG_HOME"] = str(_tmp / "config")
    os.environ["XDG_DATA_HOME"] = str(_tmp / "data")
os.environ.setdefault("XDG_CONFIG_HOME", str(_tmp / "config"))
os.environ.setdefault("XDG_DATA_HOME", str(_tmp / "data"))
sys.path.insert(0, str(Path(__file__).parent))

# The app tests' ``window`` fixture (tests/app_helpers.py) needs ``undo_clock``: defined here
# once, every test module that imports ``window`` finds it.
from app_helpers import undo_clock  # noqa: E402,F401 - fixture

# Hypothesis: the same examples every run (derandomized), so a property test cannot pass once
# and fail the next time on a loaded CI machine with inputs nobody has seen. To explore new
# inputs on purpose: WARPVIZ_HYPOTHESIS=explore ./run-tests tests/test_x.py (failures found then
# become explicit regression examples).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("warpviz", derandomize=True, print_blob=True)
_hypothesis_settings.register_profile("explore", derandomize=False, print_blob=True)
_hypothesis_settings.load_profile("explore" if os.environ.get("WARPVIZ_HYPOTHESIS") == "explore" else "warpviz")
