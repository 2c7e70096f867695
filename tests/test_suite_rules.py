"""The suite's own rules, so that it stays green on a loaded 2-core machine: a test waits for
an event, never for a stretch of time; a wait's timeout is only where a test that can never
pass gives up; nothing depends on how fast the machine is (speed belongs in benchmarks/)."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = sorted(p for p in HERE.glob("*.py") if p.name != Path(__file__).name)

# Where a sleep is the behaviour under test, not a wait: the fake GPU worker's kernel that
# never ends (a child process that only Cancel, killing it, stops).
SLEEP_ALLOWED = {"fake_gpu.py"}
# Clocks that measure how long something took: an elapsed time is a benchmark's business.
# (time.time() stays allowed: tests date files with it, e.g. a cache entry 200 s old.)
CLOCKS = {("time", "sleep"), ("time", "monotonic"), ("time", "perf_counter"), ("time", "process_time"),
          ("time", "monotonic_ns"), ("time", "perf_counter_ns")}


def _calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
            yield node, name, node.func.attr


def test_the_rules_see_the_test_files():
    assert len(SOURCES) > 100 and HERE / "app_helpers.py" in SOURCES


def test_no_test_sleeps_or_reads_the_clock():
    bad = [problem for path in SOURCES for problem in _clock_problems(path)]
    assert not bad, "\n".join(bad)


def _clock_problems(path: Path) -> list[str]:
    bad = [f"{path.name}:{node.lineno}: {owner}.{attr}()" for node, owner, attr in _calls(path)
           if (owner, attr) in CLOCKS and not (attr == "sleep" and path.name in SLEEP_ALLOWED)]
    bad += [f"{path.name}:{node.lineno}: qtbot.wait() is a sleep: wait for the event (qtbot.waitUntil, "
            f"app_helpers.after)" for node, owner, attr in _calls(path) if attr == "wait" and owner.startswith("qtbot")]
    return bad


def test_every_child_process_has_a_ceiling():
    """A hung compiler or child fails its test instead of stalling the whole run."""
    bad = [f"{path.name}:{node.lineno}: subprocess.{attr}() without timeout="
           for path in SOURCES for node, owner, attr in _calls(path)
           if owner == "subprocess" and attr in ("run", "check_output", "check_call")
           and not any(k.arg in ("timeout", None) for k in node.keywords)]
    assert not bad, "\n".join(bad)


def test_no_hypothesis_deadline():
    """Hypothesis's deadline fails an example that a loaded machine runs slowly."""
    bad = [problem for path in SOURCES for problem in _deadline_problems(path)]
    assert not bad, "\n".join(bad)


def _deadline_problems(path: Path) -> list[str]:
    bad = [f"{path.name}:{node.lineno}: deadline={ast.unparse(k.value)}"
           for node, _owner, _attr in _calls(path) for k in node.keywords
           if k.arg == "deadline" and not (isinstance(k.value, ast.Constant) and k.value.value is None)]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("settings", "hsettings"):
            bad += [f"{path.name}:{node.lineno}: deadline={ast.unparse(k.value)}" for k in node.keywords
                    if k.arg == "deadline" and not (isinstance(k.value, ast.Constant) and k.value.value is None)]
    return bad


def test_the_profile_has_no_clock():
    from hypothesis import HealthCheck, settings

    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    assert settings.default.derandomize      # the same examples every run (conftest.py)


def test_a_short_timeout_is_only_a_ceiling(qtbot):
    """A wait written with a short timeout still ends on its event, however late the event
    comes on a loaded machine: conftest.py gives every pytest-qt wait two minutes at least."""
    from PySide6.QtCore import QObject, QTimer, Signal

    from conftest import WAIT_CEILING_MS

    assert WAIT_CEILING_MS >= 60_000
    fired = []
    QTimer.singleShot(300, lambda: fired.append(1))
    qtbot.waitUntil(lambda: bool(fired), timeout=1)           # 1 ms as written: the event comes later

    class Source(QObject):
        done = Signal()

    src = Source()
    with qtbot.waitSignal(src.done, timeout=1):
        QTimer.singleShot(300, src.done.emit)
