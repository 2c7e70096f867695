"""The GPU panel's kernel tabs: the hand-written kernel of a built-in scenario (``kernels/*.cu``)
or the open launch file's source, the kernel warpviz generates for a GPU run, and its SASS
memory instructions (compiled on the panel's helper thread, never on the GUI thread).

``KernelTabsPart`` is one of the parts ``viz.app.gpu_panel.GpuPanel`` is made of.
"""

from __future__ import annotations

from pathlib import Path

from ..gpu import front
from ..gpu.front import GpuUnavailable
from ..i18n import tr
from .gpu_texts import gpu_reason, kernel_line


class KernelTabsPart:
    """The Kernel source, Generated kernel and SASS tabs."""

    def handwritten(self) -> list:
        """The hand-written kernels (``viz.gpu.handwritten.HandKernel``) of the open scenario:
        those of ``kernels/manifest.toml`` for a built-in opened from the built-ins' folder."""
        path = self.session.path
        if path is None or self.session.scenario is None:
            return []
        from .. import assets

        try:
            if Path(path).resolve().parent != assets.scenario_dir().resolve():
                return []
            return front.hand_kernels(Path(path).stem)
        except (OSError, ValueError, KeyError):  # a broken manifest must not break the panel
            return []

    def _show_handwritten(self) -> None:
        kernels = self.handwritten()
        key = "|".join(k.name for k in kernels)
        if key == self._hand_for:
            return
        self._hand_for = key
        i = self.tabs.indexOf(self.hand_box)
        if not kernels:
            if self.tabs.currentIndex() == i:
                self.tabs.setCurrentWidget(self.kernel)
            self.tabs.setTabVisible(i, False)
            self.hand.clear()
            self.hand_info.setText("")
            return
        first = kernels[0]
        try:
            text = first.path.read_text(encoding="utf-8")
        except OSError as err:
            text = str(err)
        self.hand.setPlainText(text)
        lines = text.splitlines()
        where = [kernel_line(lines, k.function) for k in kernels]
        names = ", ".join(tr("{function} (line {line})", function=k.function, line=n) for k, n in zip(kernels, where))
        self.hand_info.setText(tr("kernels/{file}: {names}. The readable kernel this scenario copies, with the same "
                                  "memory instructions; the H100 timings are its. The next tab has the kernel "
                                  "warpviz generates.", file=first.file, names=names))
        self._mark_line(where[0])
        self.tabs.setTabVisible(i, True)

    def _mark_line(self, line: int) -> None:
        """Select and centre the kernel's definition (1-based ``line``)."""
        from PySide6.QtGui import QTextCursor

        block = self.hand.document().findBlockByLineNumber(max(0, line - 1))
        cur = QTextCursor(block)
        cur.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
        self.hand.setTextCursor(cur)
        self.hand.centerCursor()

    def _tab_shown(self) -> None:
        sc = self.session.scenario
        if sc is None or self.mode() != "scenario":
            return
        w = self.tabs.currentWidget()
        if w is self.kernel:
            def source(_p, _c, sc=sc):
                return ("source", front.generated_source(sc))

            self.aux.submit(source)
        elif w is self.sass:
            def sass(_p, _c, sc=sc):
                from ..toolchain.compile import compile_cubin, find_tool, sass_memory_instructions

                try:
                    cubin = compile_cubin(front.generated_source(sc))
                except GpuUnavailable as err:
                    return ("sass", tr("No SASS: {why}", why=gpu_reason(err)))
                if not find_tool("cuobjdump"):
                    return ("sass", tr("No SASS: cuobjdump is not installed (it comes with the CUDA toolkit)."))
                lines = sass_memory_instructions(cubin) or []
                return ("sass", "\n".join(lines) or tr("(no memory instructions)"))

            self.aux.submit(sass)

    def _show_launch_source(self) -> None:
        """The open launch file's kernel source in the Kernel source tab (shown at once when
        the file opens: the buttons and the kernel side by side)."""
        s = self.session
        i = self.tabs.indexOf(self.hand_box)
        key = f"launch:{s.launch_path}:{s.launch is not None}"
        if key == self._launch_shown:
            return
        self._launch_shown = key
        if s.launch is None:
            self.tabs.setTabVisible(i, False)
            return
        text = s.launch.source_text            # read (bounded, checked) when the launch file was opened
        self.hand.setPlainText(text)
        line = kernel_line(text.splitlines(), getattr(s.launch, "short_name", s.launch.kernel))
        self.hand_info.setText(tr("{file}: {names}.", file=s.launch.source.name,
                                  names=tr("{function} (line {line})", function=s.launch.kernel, line=line)))
        self._mark_line(line)
        self.hand.horizontalScrollBar().setValue(0)
        self.tabs.setTabVisible(i, True)
        self.tabs.setCurrentIndex(i)
