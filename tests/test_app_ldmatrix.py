"""ldmatrix / stmatrix in the app: the form offers the matrix ops and the format-2 swizzles,
the picture names the instruction, and a bad edit is shown at its field while the app keeps
the last valid state and the text."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt

from app_helpers import after, make_window, user_dirs, wait_analysis  # noqa: F401 - fixtures
from test_numbering import view_texts
from viz import assets

LDSM_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"


def test_form_shows_and_changes_the_matrix_op(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "ldmatrix-x4-tile")
    try:
        op = w.editor.fields[("access", 0, "op")].widget
        assert op.currentText() == "ldmatrix.x4"
        assert {"load", "store", "ldmatrix.x1", "stmatrix.x4.trans"} <= {op.itemText(i) for i in range(op.count())}
        texts = view_texts(w.view)
        assert any(t.startswith("ldmatrix.x4") for t in texts)               # the header names the op
        assert any("phase 1: matrix 0" in t for t in texts)                  # phases are the matrices
        assert w.session.analysis.metrics[LDSM_WF] == 512
        op.setCurrentText("ldmatrix.x2")
        wait_analysis(qtbot, w)
        assert 'op   = "ldmatrix.x2"' in w.editor.text.toPlainText()
        m = w.session.analysis.metrics
        assert m[LDSM_WF] == 256 and m["smsp__inst_executed_op_ldsm.sum"] == 16
    finally:
        w.close()


def test_form_offers_the_tma_swizzles_and_they_remove_the_conflicts(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "stmatrix-accumulator")
    try:
        sw = w.editor.fields[("arrays", "c", "swizzle")].widget
        assert {"Sw<3,3,3>", "tma:32B", "tma:64B", "tma:128B"} <= {sw.itemText(i) for i in range(sw.count())}
        sw.setCurrentText("tma:128B")
        wait_analysis(qtbot, w)
        assert 'swizzle = "tma:128B"' in w.editor.text.toPlainText()
        m = w.session.analysis.metrics
        assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 64
        assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0
    finally:
        w.close()


def test_when_on_a_matrix_op_is_refused_at_its_field_and_nothing_is_lost(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "ldmatrix-x4-tile")
    try:
        before = w.session.scenario
        when = w.editor.fields[("access", 0, "when")].widget
        w.editor.tabs.setCurrentIndex(0)
        when.setFocus()
        qtbot.keyClicks(when, "lane < 8")
        w.editor.flush()
        qtbot.waitUntil(lambda: w.session.error is not None)
        assert ".sync.aligned" in w.session.error.problem and "remove when" in w.session.error.fix
        assert w.session.scenario is before                       # the last valid state stays on screen
        assert 'when = "lane < 8"' in w.editor.text.toPlainText()  # and the edit is kept
    finally:
        w.close()


def test_gpu_panel_lists_the_ldsm_instruction_counter(qtbot, user_dirs):  # noqa: F811
    from test_app_gpu_panel import panel, table

    from viz.engine import METRIC_NAMES

    w = make_window(qtbot, "ldmatrix-x4-tile")
    try:
        wait_analysis(qtbot, w)
        qtbot.waitUntil(lambda: w.gpu_panel is not None, timeout=20000)   # built after the first frame
        p = panel(w)
        p.refresh()
        rows = table(p)
        assert set(rows) == set(METRIC_NAMES) | {"smsp__inst_executed_op_ldsm.sum"}
        assert rows["smsp__inst_executed_op_ldsm.sum"][0] == "16"
        assert rows["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"][0] == "512"
    finally:
        w.close()


def test_view_menu_shows_the_fragments_and_follows_the_timeline(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "stmatrix-accumulator")
    try:
        assert w.a_matrix in w.m_view.actions()
        w.a_matrix.trigger()
        dlg = w.matrix_dialog
        qtbot.waitUntil(dlg.isVisible)
        assert dlg.map is not None and dlg.map.op.text == "stmatrix.x4" and not dlg.picture.pixmap().isNull()
        assert (dlg.map.wavefronts, dlg.map.conflicts) == (32, 28)
        assert "stmatrix.x4: lane l gives row l % 8" in dlg.note.text()
        qtbot.keyClick(w.view, Qt.Key.Key_PageDown)                  # next warp: the dialog follows
        qtbot.waitUntil(lambda: "warp 1" in dlg.map.where)
        assert dlg.map.rows[0].byte_addr == 16 * 128
    finally:
        w.close()


def test_the_fragments_dialog_says_when_the_instruction_is_plain(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "transpose-tile")
    try:
        dlg = w.show_matrix()
        assert dlg.map is None and "not an ldmatrix or stmatrix" in dlg.note.text()
    finally:
        w.close()


def test_a_matrix_access_is_named_by_its_kind_in_the_top_line_and_in_figures(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "ldmatrix-x4-tile-sw128")
    try:
        wait_analysis(qtbot, w)
        assert w.source.text().startswith("ldmatrix.x4 tile[16 * warp + lane % 16]")
        qtbot.waitUntil(lambda: w.figures.tree.topLevelItemCount() > 0, timeout=20000)
        top = w.figures.tree.topLevelItem(0)
        assert top.text(1) == "ldmatrix.x4"
        w.open_path(assets.scenario_dir() / "stmatrix-accumulator.toml")
        wait_analysis(qtbot, w)
        assert w.source.text().startswith("stmatrix.x4 ")
        qtbot.waitUntil(lambda: w.figures.tree.topLevelItemCount() > 0 and
                        any(w.figures.tree.topLevelItem(k).text(1) == "stmatrix.x4"
                            for k in range(w.figures.tree.topLevelItemCount())), timeout=20000)
        w.open_path(assets.scenario_dir() / "transpose-tile.toml")     # a plain access: load / store
        assert w.source.text().startswith("load tile[")     # its focus, instruction 9: the column read
    finally:
        w.close()


def test_the_fragments_window_opens_beside_the_picture_and_fits_its_width(qtbot, user_dirs):  # noqa: F811
    """On a 1920x1080 window: the dialog does not cover the picture, the map is drawn to the
    viewport's width (no horizontal scroll bar) at a readable scale, and it follows a resize."""
    from viz.app.matrix_dialog import FIT_FLOOR

    w = make_window(qtbot, "ldmatrix-x4-tile-sw128")
    try:
        w.setGeometry(0, 0, 1920, 1040)
        w.default_layout(1920)
        qtbot.waitUntil(lambda: w.width() == 1920)
        after(qtbot, 50)
        dlg = w.show_matrix()
        qtbot.waitUntil(dlg.isVisible)
        picture = QRect(w.stack.mapToGlobal(QPoint(0, 0)), w.stack.size())
        assert not dlg.frameGeometry().intersects(picture.adjusted(1, 1, -1, -1)), (dlg.frameGeometry(), picture)
        qtbot.waitUntil(lambda: dlg.picture.pixmap().width() <= dlg.scroll.viewport().width(), timeout=3000)
        assert not dlg.scroll.horizontalScrollBar().isVisible()
        assert 0.6 <= dlg.scale <= 1.0 and not dlg.map.op.num == 4 or dlg.across in (1, 2)
        before = dlg.picture.pixmap().width()
        dlg.resize(dlg.width() + 200, dlg.height())
        qtbot.waitUntil(lambda: dlg.picture.pixmap().width() != before, timeout=3000)
        assert dlg.picture.pixmap().width() <= dlg.scroll.viewport().width()
    finally:
        w.close()
