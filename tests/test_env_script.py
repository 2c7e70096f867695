"""tools/env.sh (behind ./run-app and ./run-tests): the app's environment holds the app's
dependencies, the tests add theirs on demand, and nothing is reinstalled without a reason.
Run against a made-up environment in tmp_path whose `python` only logs what it was asked
to do (no venv is created, nothing is downloaded)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV_SH = ROOT / "tools" / "env.sh"
HASH = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a bash script")


@pytest.fixture
def venv(tmp_path) -> Path:
    v = tmp_path / "venv"
    (v / "bin").mkdir(parents=True)
    py = v / "bin" / "python"
    py.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path}/log"\n')
    py.chmod(0o755)
    return v


def env_sh(venv: Path, *args: str, extras: str | None = None) -> list[str]:
    """Run tools/env.sh; the pip installs it asked the made-up python for (only the -e ones)."""
    log = venv.parent / "log"
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "WARPVIZ_EXTRAS"}
    env["WARPVIZ_VENV"] = str(venv)
    if extras is not None:
        env["WARPVIZ_EXTRAS"] = extras
    proc = subprocess.run(["bash", str(ENV_SH), *args], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(venv)                 # ./run-app and ./run-tests read the path
    calls = log.read_text().splitlines() if log.exists() else []
    return [c.split(" -e ", 1)[1] for c in calls if " -e " in c]


def stamp(venv: Path) -> str:
    return (venv / ".warpviz-installed").read_text().strip()


def test_run_app_installs_the_app_and_run_tests_adds_the_test_extra(venv):
    assert env_sh(venv) == [str(ROOT)]                        # ./run-app on a fresh clone: no extra
    assert stamp(venv) == HASH
    assert env_sh(venv) == []                                 # again: nothing to do
    assert env_sh(venv, "test") == [f"{ROOT}[test]"]          # ./run-tests: the test extra added
    assert stamp(venv) == f"{HASH} test"
    assert env_sh(venv, "test") == [] and env_sh(venv) == []  # ./run-app after ./run-tests: nothing


def test_a_changed_pyproject_reinstalls_keeping_the_extras_there(venv):
    (venv / ".warpviz-installed").write_text("0123456789abcdef test\n")
    assert env_sh(venv) == [f"{ROOT}[test]"]                  # ./run-app keeps the tests' tools
    assert stamp(venv) == f"{HASH} test"


def test_warpviz_extras_adds_to_what_the_script_asks_for(venv):
    assert env_sh(venv, "test", extras="gpu") == [f"{ROOT}[gpu,test]"]
    assert stamp(venv) == f"{HASH} gpu,test"
    assert env_sh(venv) == []


def test_the_stamp_of_the_old_script_is_read(venv):
    """Before, the stamp read HASH-EXTRA and every install had the test extra."""
    (venv / ".warpviz-installed").write_text(f"{HASH}-test\n")
    assert env_sh(venv, "test") == [] and env_sh(venv) == []


def test_run_scripts_ask_for_what_they_need():
    assert '"$here/tools/env.sh")"' in (ROOT / "run-app").read_text()
    assert '"$here/tools/env.sh" test)"' in (ROOT / "run-tests").read_text()
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("exec ./run-tests")
