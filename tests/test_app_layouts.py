"""An array's CuTe or Triton layout in the app's editor form: shown, edited like a user
types, a bad layout shown at the field while the views keep the last valid state."""

from __future__ import annotations

from app_helpers import make_window, user_dirs, wait_analysis  # noqa: F401 - fixtures

LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"


def test_layout_field_edits_and_errors(qtbot, user_dirs):
    w = make_window(qtbot, "triton-swizzled-tile")
    try:
        f = w.editor.fields[("arrays", "tile", "layout")]
        assert f.widget.text() == "SwizzledSharedLayout(8, 1, 8, [1, 0])"
        assert ("arrays", "tile", "swizzle") not in w.editor.fields
        assert w.session.analysis.metrics[LD] == 36
        w.editor.tabs.setCurrentIndex(0)
        f.widget.setFocus()
        f.widget.selectAll()
        qtbot.keyClicks(f.widget, "SwizzledSharedLayout(6, 1, 8, [1, 0])")
        assert w.session.error is not None
        assert f.error.isVisibleTo(w.editor) and "vec = 6 is not a power of two" in f.error.text()
        assert w.session.analysis.metrics[LD] == 36          # the last valid state stays
        f.widget.selectAll()
        qtbot.keyClicks(f.widget, "NVMMASharedLayout(128)")
        wait_analysis(qtbot, w)
        assert w.session.error is None
        assert 'layout = "NVMMASharedLayout(128)"' in w.editor.text.toPlainText()
        assert w.session.analysis.metrics[LD] == 36          # the same map as (8, 1, 8)
        f.widget.selectAll()
        qtbot.keyClicks(f.widget, "(64,64):(64,1)")              # plain: the column read conflicts
        wait_analysis(qtbot, w)
        assert w.session.analysis.metrics[LD] == 4 + 8 * 32
    finally:
        w.close()
