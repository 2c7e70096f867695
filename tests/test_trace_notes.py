"""A partial trace's note (the header's ``note``) is made of ``viz.trace.schema.PARTIAL_NOTES``
templates and split back into them (``note_parts``) for the app to translate; a note in no known
form (another version's, or a file's own text) is never taken for a template."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from viz import i18n
from viz.app.gpu_texts import partial_text
from viz.trace.schema import PARTIAL_NOTES, note_parts, partial_note

counts = st.integers(0, 10**12)
blocks = st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=20).map(
    lambda b: ",".join(str(x) if k % 2 else f"{x}-{x + 3}" for k, x in enumerate(sorted(set(b)))))
PART = st.one_of(
    st.fixed_dictionaries({"executed": counts, "limit": counts, "blocks": blocks}).map(lambda v: ("over-limit", v)),
    st.fixed_dictionaries({"recorded": counts, "executed": counts}).map(lambda v: ("size-limit", v)),
    st.fixed_dictionaries({"counted": counts, "recorded": counts}).map(lambda v: ("runs-differ", v)))


@given(st.lists(PART, min_size=1, max_size=3))
def test_a_note_splits_back_into_its_parts(parts):
    assert note_parts(partial_note(*parts)) == parts


def test_the_recorders_notes_read_in_chinese():
    note = partial_note(("size-limit", {"recorded": 4_000_000, "executed": 5_242_880}),
                        ("runs-differ", {"counted": 5_242_880, "recorded": 5_242_881}))
    assert note == ("recorded 4,000,000 of 5,242,880 warp-level executions (the size limit); the counting run saw "
                    "5,242,880 executions and the recording run 5,242,881 (the kernel's control flow depends on "
                    "timing or data it changes)")
    assert partial_text(note) == note
    i18n.set_language("zh_CN")
    try:
        assert partial_text(note) == ("录制了 5,242,880 次线程束级执行中的 4,000,000 次（达到大小上限）；计数运行看到 "
                                      "5,242,880 次执行，录制运行看到 5,242,881 次（内核的控制流取决于时序或它自己修改的数据）")
        over = partial_note(("over-limit", {"executed": 9_000_000, "limit": 4_000_000, "blocks": "0-15,63"}))
        assert partial_text(over) == "整次启动需要 9,000,000 条记录，超过上限 4,000,000：只录制了线程块 0-15,63"
        # text in no known form is shown as it is, never used as a template
        for odd in ("recorded {x.__class__} of 3 warp-level executions (the size limit)", "some other note",
                    "recorded 1,2 of 3 warp-level executions (the size limit)", ""):
            assert note_parts(odd) is None and partial_text(odd) == odd
    finally:
        i18n.set_language("en")


def test_every_template_is_known_to_the_catalogue():
    assert i18n.missing("zh_CN", list(PARTIAL_NOTES.values())) == []
