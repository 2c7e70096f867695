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

# Tests that draw (pictures, exports, the API's frames) need an application object before any
# QFont or QPainter, and it must be pytest-qt's QApplication (a bare QGuiApplication made first
# would break the app tests that run later in the same process): such a test module says
# ``pytestmark = pytest.mark.usefixtures("qapp")`` instead of a fixture of its own.

# The app tests' ``window`` fixture (tests/app_helpers.py) needs ``undo_clock``: defined here
# once, every test module that imports ``window`` finds it.
from app_helpers import undo_clock  # noqa: E402,F401 - fixture

# Hypothesis: the same examples every run (derandomized), so a property test cannot pass once
# and fail the next time on a loaded CI machine with inputs nobody has seen. To explore new
# inputs on purpose: WARPVIZ_HYPOTHESIS=explore ./run-tests tests/test_x.py (failures found then
# become explicit regression examples).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

# No clock in either profile: Hypothesis's default deadline fails an example that takes over
# 200 ms and its too_slow health check fails a test whose inputs take long to generate, both
# wall-clock checks that a loaded machine fails at random (speed belongs in benchmarks/). A
# test's own suppress_health_check list replaces this one: it names too_slow too.
from hypothesis import HealthCheck as _HealthCheck  # noqa: E402

_no_clock = dict(deadline=None, suppress_health_check=[_HealthCheck.too_slow])
_hypothesis_settings.register_profile("warpviz", derandomize=True, print_blob=True, **_no_clock)
_hypothesis_settings.register_profile("explore", derandomize=False, print_blob=True, **_no_clock)
_hypothesis_settings.load_profile("explore" if os.environ.get("WARPVIZ_HYPOTHESIS") == "explore" else "warpviz")


# Waits end on an event, never on the clock. pytest-qt's waits (waitUntil, waitSignal, ...)
# return as soon as their condition holds; their ``timeout`` is only the point at which a test
# that will never pass is given up. The tests' own figures (3 s, 5 s, pytest-qt's default 5 s)
# were written on an idle machine; a 2-core machine running two suites side by side (load 6-7)
# takes many times longer for the same events. So every wait gets at least WAIT_CEILING_MS
# (WARPVIZ_TEST_WAIT_MS=N to change it): a passing test is not slowed by a single millisecond,
# a failing one reports after two minutes instead of failing at random under load.
import functools  # noqa: E402

try:
    from pytestqt.qtbot import QtBot as _QtBot  # noqa: E402
except ImportError:             # the GPU machine runs the non-Qt test files without pytest-qt
    _QtBot = None

WAIT_CEILING_MS = int(os.environ.get("WARPVIZ_TEST_WAIT_MS", "120000"))


def _generous(method):
    @functools.wraps(method)
    def wait(self, *args, timeout=5000, **kwargs):
        if timeout is not None and timeout > 0:       # None/0: pytest-qt's "wait for ever" stays so
            timeout = max(timeout, WAIT_CEILING_MS)
        return method(self, *args, timeout=timeout, **kwargs)
    wait.generous = True
    return wait


for _name in ("waitUntil", "waitSignal", "waitSignals", "waitExposed", "waitActive", "waitCallback",
              "wait_until", "wait_signal", "wait_signals", "wait_exposed", "wait_active", "wait_callback"):
    _method = getattr(_QtBot, _name, None) if _QtBot is not None else None
    if _method is not None and not getattr(_method, "generous", False):
        setattr(_QtBot, _name, _generous(_method))
