"""Every built-in opens in the app and steps to its last frame without an error."""

from __future__ import annotations

import pytest

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from viz.scenario import builtin_names, load


@pytest.fixture(scope="module")
def shared_window(qtbot_module):
    import os
    import tempfile

    d = tempfile.mkdtemp(prefix="warpviz-app-builtins-")
    with pytest.MonkeyPatch.context() as mp:      # the module's own folders, given back after it
        mp.setenv("WARPVIZ_SETTINGS", os.path.join(d, "settings.ini"))
        mp.setenv("WARPVIZ_DATA_DIR", os.path.join(d, "data"))
        w = make_window(qtbot_module, "coalesced")
        yield w
        w.close()


@pytest.fixture(scope="module")
def qtbot_module(qapp, request):
    from pytestqt.qtbot import QtBot

    return QtBot(request)


@pytest.mark.parametrize("name", builtin_names())
def test_builtin_opens_and_steps_to_the_end(shared_window, name):
    from viz.scenario import resolve

    w = shared_window
    s = w.session
    w.library.item_for(name)  # listed in the library
    w.open_path(resolve(name))
    sc = load(name)
    if sc.expect_error:
        assert s.error is not None or (s.wait(600_000) or s.error is not None)
        assert sc.expect_error.lower() in s.error.message().lower()
        return
    assert s.error is None, s.error
    steps = 0
    while True:
        w.view.repaint()  # paints synchronously through the painter
        assert w.view.layout_ is not None
        if not s.step("frame", 1):
            break
        steps += 1
        if steps > 120:  # long programs: jump to the end, as Ctrl+End does
            s.end(whole=True)
            break
    assert s.at_end() or steps > 120
    assert s.frame.kind in ("summary", "idle")
    s.end(whole=True)
    assert s.at_end()
    w.view.repaint()
    s.step("warp", 1)  # another warp renders too
    s.wait(600_000)                    # a ceiling: returns when the analysis ends
    assert s.error is None, s.error
