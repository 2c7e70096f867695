"""The app on a trace whose kernel ran memory instructions warpviz does not record
(``complete: false``, the header's ``unrecorded``): the Figures panel shows a banner naming
them, in English and in Chinese; an older trace, which does not say, shows none."""

from __future__ import annotations

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from test_kinds_unrecorded import SHIPPED, _with_unrecorded
from viz import i18n


def test_the_app_shows_the_banner(qtbot, tmp_path, user_dirs):
    path = _with_unrecorded(tmp_path)
    w = make_window(qtbot)
    banner = w.figures.unrecorded
    assert not banner.isVisible()                       # a scenario: nothing unrecorded
    assert w.open_trace(path)
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)
    qtbot.waitUntil(banner.isVisible, timeout=20000)
    assert banner.text().startswith("Not recorded: the kernel ran 1 memory instructions that warpviz does not "
                                    "record, 12 warp-level executions")
    assert "PTX line 21 (copy.cu:7): cp.async.bulk.tensor.2d" in banner.text()
    assert not w.figures.warn.isVisible()               # every block's records are there: not "partial"
    try:
        i18n.set_language("zh_CN")
        w.figures.refresh()
        assert banner.isVisible() and banner.text().startswith("未录制：内核执行了 1 条")
        assert "PTX 第 21 行" in banner.text()
    finally:
        i18n.set_language("en")
    assert w.open_trace(SHIPPED)                        # an older trace: no banner (analyze says unknown)
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=20000)
