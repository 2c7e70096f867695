"""The app's one current state: the scenario text, the last valid scenario and its
analysis, the error of the newest edit, and where the animation stands.

Every edit is parsed at once (milliseconds) and the current warp's detail recomputed, so
the views redraw without waiting for the whole-launch analysis, which runs on a worker
thread and is cancelled by the next edit. An edit that fails (while parsing, for the
current warp, or anywhere in the launch) leaves the last valid state on screen and puts
the message in ``error``; the text itself is always kept.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from .. import assets
from ..engine import Analysis, analyze
from ..frames import Cursor, Frame, Timeline
from ..i18n import tr
from ..scenario import Scenario, ScenarioError, loads, read_text
from ..warp import WarpDetail
from .worker import Runner


class Session(QObject):
    changed = Signal()            # a new valid scenario (views redraw, panels rebuild)
    positionChanged = Signal()    # instruction / block / warp / frame moved
    analysisChanged = Signal()    # the whole-launch analysis of ``scenario`` is ready
    errorChanged = Signal()       # ``error`` set or cleared
    textChanged = Signal()        # ``text`` replaced from outside the editor (open, recovery)
    progress = Signal(float, str)
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.text = ""
        self.path: Path | None = None
        self.name = ""
        self.scenario: Scenario | None = None
        self.analysis: Analysis | None = None
        self.error: ScenarioError | None = None
        self.cursor = Cursor()
        self._timeline: Timeline | None = None
        # Compare mode: the other side (its frame count at a cursor makes this side's story
        # as long as the longer of the two, ``viz.frames.paired_length``); None otherwise.
        self.partner: Session | None = None
        self._valid: tuple[Scenario, Analysis] | None = None  # last scenario whose analysis succeeded
        # A recorded trace (viz.trace.detail.TraceSource) when a .wvtrace is open: ``scenario``
        # is then its frame for the painter, ``text`` its launch file (read-only), and
        # ``trace_analysis`` its analysis (``analysis`` stays None).
        self.trace = None
        self.trace_analysis = None
        # A launch file (``*.launch.toml``) when one is open: nothing to picture until the GPU
        # panel records it; ``launch`` is its parsed form, or None with ``launch_error`` (the
        # CLI's paragraph) when the file is bad.
        self.launch_path: Path | None = None
        self.launch = None
        self.launch_error = None
        self.runner = Runner(self)
        self.runner.done.connect(self._analysis_done)
        self.runner.failed.connect(self._analysis_failed)
        self.runner.progress.connect(self.progress)
        self.runner.busyChanged.connect(self.busyChanged)

    # -- what is open --------------------------------------------------------

    @property
    def timeline(self):
        return self._timeline

    @timeline.setter
    def timeline(self, tl) -> None:
        self._timeline = self._paired(tl)

    def _paired(self, tl):
        if tl is not None:
            tl.paired_with = self._partner_frames if self.partner is not None else None
        return tl

    def _partner_frames(self, c: Cursor) -> int:
        """The partner's frame count where it stands for cursor ``c`` (0 when it shows nothing)."""
        p = self.partner
        if p is None or p.timeline is None:
            return 0
        try:
            return p.timeline.frame_count(c.clamped(p._bounds(c), lambda _c: 1))
        except ScenarioError:
            return 0

    def pair_with(self, partner: "Session | None") -> None:
        """Step together with ``partner`` (compare mode) or alone again (None): the frame
        count changes, so the cursor is clamped again and the views told."""
        self.partner = partner
        self._paired(self._timeline)
        self.recount()

    def recount(self) -> None:
        """The frame count at the cursor may have changed (the partner opened another
        scenario): clamp the cursor to it and tell the views."""
        if self._timeline is None:
            return
        try:
            self.cursor = self.cursor.clamped(self._bounds(self.cursor), self._timeline.frame_count)
        except ScenarioError as err:
            self._set_error(err)
        self.positionChanged.emit()

    @property
    def busy(self) -> bool:
        return self.runner.busy

    @property
    def is_builtin(self) -> bool:
        return self.path is not None and self.path.parent.resolve() == assets.scenario_dir().resolve()

    @property
    def source(self) -> str:
        return str(self.path) if self.path else (self.name or "<scenario>")

    def open(self, path: Path | str, text: str | None = None) -> None:
        """Open a scenario file (or a built-in's path); ``text`` overrides the file's (recovery)."""
        path = Path(path)
        if text is None:
            text = _read_scenario(path)       # before anything changes: a file that cannot be read opens nothing
        self.path = path
        self.name = path.stem
        self._valid = None
        self.trace = self.trace_analysis = None
        self.launch_path = self.launch = self.launch_error = None
        self.scenario = None
        self.analysis = None
        self.cursor = Cursor()
        if self.set_text(text) and self.scenario.focus:
            self.go(instr=self.scenario.focus - 1, frame=0)      # the instruction the scenario is about (`focus`)
        self.textChanged.emit()

    def open_text(self, text: str, name: str = "untitled") -> None:
        self.path, self.name, self._valid = None, name, None
        self.trace = self.trace_analysis = None
        self.launch_path = self.launch = self.launch_error = None
        self.scenario = self.analysis = None
        self.cursor = Cursor()
        self.set_text(text)
        self.textChanged.emit()

    def clear(self) -> None:
        """Show nothing (the comparison's right side before it has a partner)."""
        self.runner.cancel()
        self.path, self.name, self.text = None, "", ""
        self.scenario = self.analysis = self.timeline = self._valid = None
        self.trace = self.trace_analysis = None
        self.launch_path = self.launch = self.launch_error = None
        self._set_error(None)
        self.changed.emit()
        self.positionChanged.emit()

    @property
    def is_trace(self) -> bool:
        return self.trace is not None

    def open_trace(self, path: Path | str, src=None) -> None:
        """Open a recorded trace (``.wvtrace``), or show ``src``, the ``TraceSource`` already
        loaded from it (the window loads a large file off the GUI thread). Raises
        ``viz.trace.TraceError`` (one paragraph) for a missing, corrupt, truncated or newer
        file; what was open then stays open."""
        from ..trace.analysis import analyze_trace
        from ..trace.detail import TraceSource, TraceTimeline

        path = Path(path)
        if src is None:
            src = TraceSource.open(path)
        timeline = self._paired(TraceTimeline(src))
        self.runner.cancel()
        self.path, self.name = path, path.stem
        self.trace, self.trace_analysis = src, None
        self.launch_path = self.launch = self.launch_error = None
        self.text = src.header.get("launch_file", "")
        self.scenario, self.analysis, self._valid = src.scenario, None, None
        self.timeline = timeline
        self.cursor = timeline.clamp(Cursor())
        self._set_error(None)
        self.textChanged.emit()
        self.changed.emit()
        self.positionChanged.emit()
        trace = src.trace
        self.runner.submit(lambda progress, cancel: analyze_trace(trace, progress, cancel))

    @property
    def is_launch(self) -> bool:
        return self.launch_path is not None

    def open_launch(self, path: Path | str) -> None:
        """Open a launch file: its text (read-only) and its kernel's source; the picture waits
        for a recording. A bad file opens too, with ``launch_error`` set (the CLI's paragraph),
        and so does one that cannot be read (a pipe, a device, a huge or non-UTF-8 file: its
        text is then empty). Nothing unbounded is read here (``read_text_file``)."""
        from ..trace import TraceError
        from ..trace.launch import MAX_LAUNCH_FILE_BYTES, launch_name, parse_launch, read_text_file

        path = Path(path)
        text = ""
        try:
            text = read_text_file(path, "launch file", MAX_LAUNCH_FILE_BYTES)
            launch, error = parse_launch(text, path), None
        except TraceError as err:
            launch, error = None, err
        self.runner.cancel()
        self.path, self.name, self.text = path, launch_name(path), text
        self.trace = self.trace_analysis = None
        self.scenario = self.analysis = self.timeline = self._valid = None
        self.launch_path, self.launch, self.launch_error = path, launch, error
        self.cursor = Cursor()
        self._set_error(None)
        self.textChanged.emit()
        self.changed.emit()
        self.positionChanged.emit()

    # -- editing -------------------------------------------------------------

    def set_text(self, text: str) -> bool:
        """Take the editor's text; True when it is valid (the views then show it)."""
        if self.trace is not None or self.launch_path is not None:
            return False            # a launch file (a trace's, or one to record) is shown, not edited
        self.text = text
        self.runner.cancel()
        try:
            sc = loads(text, source=self.source, name=self.name)
            timeline = self._paired(Timeline(sc))
            if timeline.bounds.instructions == 0:
                # every access's loop is empty (for i = "10:0"): the launch issues no warp
                # instruction, so there is no picture to step through (the CLI's table says so too)
                raise ScenarioError(self.source, "access", tr("the scenario issues no warp instruction: every "
                                                             "access's loop is empty"),
                                    tr("give a loop a range it runs through (for i = \"0:10\" counts up; "
                                       "a range that counts down needs a negative step, \"10:0:-1\")"))
            cursor = self.cursor.clamped(timeline.bounds, timeline.frame_count)
        except ScenarioError as err:
            self._set_error(err)
            return False
        except (RecursionError, MemoryError, OverflowError) as err:
            self._set_error(ScenarioError(self.source, "", tr("cannot be analysed ({err})", err=type(err).__name__),
                                          tr("simplify the expressions")))
            return False
        self.scenario = sc
        self.timeline = timeline
        self.analysis = None
        self.cursor = cursor
        self._set_error(None)
        self.changed.emit()
        self.positionChanged.emit()
        self.runner.submit(lambda progress, cancel: analyze(sc, progress, cancel))
        return True

    def _set_error(self, err: ScenarioError | None) -> None:
        if err is not self.error:
            self.error = err
            self.errorChanged.emit()

    def _analysis_done(self, an: Analysis) -> None:
        if hasattr(an, "trace"):      # a trace's analysis (viz.trace.analysis.TraceAnalysis)
            if self.trace is not None and an.trace is self.trace.trace:
                self.trace_analysis = an
                self.analysisChanged.emit()
            return
        if an.scenario is not self.scenario:
            return
        self.analysis = an
        self._valid = (an.scenario, an)
        self.analysisChanged.emit()

    def _analysis_failed(self, err) -> None:
        if self.trace is not None:
            self._set_error(ScenarioError(self.source, "", tr("the analysis failed: {err}", err=err), ""))
            return
        if not isinstance(err, ScenarioError):
            err = ScenarioError(self.source, "", tr("the analysis failed: {err}", err=err), "")
        self._set_error(err)
        if self._valid is not None:  # go back to the last state that analysed cleanly
            sc, an = self._valid
            self.scenario, self.analysis = sc, an
            self.timeline = Timeline(sc)
            self.cursor = self.cursor.clamped(self.timeline.bounds, self.timeline.frame_count)
            self.changed.emit()
            self.positionChanged.emit()
            self.analysisChanged.emit()

    def wait(self, msecs: int = 30000) -> None:
        """Block until the analysis is done (tests, benchmarks, scripts)."""
        from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop

        deadline = QDeadlineTimer(msecs)
        while self.runner.busy and not deadline.hasExpired():
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)

    # -- position ------------------------------------------------------------

    @property
    def detail(self) -> WarpDetail | None:
        return self.timeline.detail(self.cursor) if self.timeline else None

    @property
    def frames(self) -> tuple[Frame, ...]:
        return self.timeline.frames(self.cursor) if self.timeline else ()

    @property
    def frame(self) -> Frame | None:
        return self.timeline.frame(self.cursor) if self.timeline else None

    @property
    def frame_count(self) -> int:
        """Frames at the cursor: this story's, or in compare mode the longer side's."""
        return self.timeline.frame_count(self.cursor) if self.timeline else 0

    @property
    def instruction_count(self) -> int:
        """Warp instructions of the current warp (a trace's warps each have their own stream)."""
        return self._bounds(self.cursor).instructions if self.timeline else 0

    def _bounds(self, c: Cursor):
        at = getattr(self.timeline, "bounds_at", None)
        return at(c) if at is not None else self.timeline.bounds

    def retranslate(self) -> None:
        """Frame captions follow the interface language: rebuild the frames (and the error message)."""
        if self.trace is not None:
            from ..trace.detail import TraceTimeline

            self.timeline = TraceTimeline(self.trace)
            self.positionChanged.emit()
            return
        if self.error is not None and self.text:
            self.set_text(self.text)  # the message is built in the language of the moment
        if self.scenario is not None:
            self.timeline = Timeline(self.scenario)
            self.positionChanged.emit()

    def move_to(self, cursor: Cursor) -> bool:
        """Show another position; False (and ``error`` set) if that warp cannot be evaluated."""
        if self.timeline is None:
            return False
        try:
            cursor = cursor.clamped(self._bounds(cursor), self.timeline.frame_count)
        except ScenarioError as err:
            self._set_error(err)
            return False
        if cursor != self.cursor:
            self.cursor = cursor
            self.positionChanged.emit()
        return True

    def go(self, instr: int | None = None, block: int | None = None, warp: int | None = None,
           frame: int | None = None) -> bool:
        c = self.cursor
        return self.move_to(Cursor(c.instruction if instr is None else instr,
                                   c.block if block is None else block,
                                   c.warp if warp is None else warp,
                                   c.frame if frame is None else frame))

    def step(self, unit: str, delta: int) -> bool:
        """Step by "frame", "instruction", "warp" or "block"; False when already at that end.

        Warps run on into the next/previous block, so PgDn walks the whole grid.
        """
        if self.timeline is None:
            return False
        tl, c = self.timeline, self.cursor
        try:
            if unit == "warp" and not 0 <= c.warp + delta < tl.bounds.warps:
                flat = c.block * tl.bounds.warps + c.warp + delta
                if not 0 <= flat < tl.bounds.blocks * tl.bounds.warps:
                    return False
                new = tl.step(replace(c, block=flat // tl.bounds.warps, warp=flat % tl.bounds.warps,
                                      frame=0), "frame", 0)
                new = c._keep_frame(new, tl.frame_count)
            else:
                new = tl.step(c, unit, delta)
        except ScenarioError as err:
            self._set_error(err)
            return False
        if new == c:
            return False
        return self.move_to(new)

    def home(self, whole: bool = False) -> bool:
        return self.timeline is not None and self.move_to(self.timeline.home(self.cursor, whole))

    def end(self, whole: bool = False) -> bool:
        return self.timeline is not None and self.move_to(self.timeline.end(self.cursor, whole))

    def at_end(self) -> bool:
        return self.timeline is None or self.cursor.at_end(self._bounds(self.cursor), self.timeline.frame_count)


def _read_scenario(path: Path) -> str:
    """A scenario file's text (``viz.scenario.read_text``: a regular file of a scenario's size, UTF-8);
    one that cannot be read is an OSError with the reason, which the window shows."""
    try:
        return read_text(path)
    except ScenarioError as err:
        raise OSError(err.problem) from None


def is_launch_file(path: Path | str) -> bool:
    """A launch file to record (``NAME.launch.toml``), not a scenario: by its name, or a TOML
    file whose top level has ``kernel`` and ``source`` (keys no scenario has)."""
    import tomllib

    path = Path(path)
    if path.name.lower().endswith(".launch.toml"):
        return True
    if path.suffix.lower() != ".toml":
        return False
    from ..trace import TraceError
    from ..trace.launch import MAX_LAUNCH_FILE_BYTES, read_text_file

    try:      # bounded: a pipe or a huge file is not read here (nor taken for a launch file)
        raw = tomllib.loads(read_text_file(path, "launch file", MAX_LAUNCH_FILE_BYTES))
    except (TraceError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return False
    return "kernel" in raw and "source" in raw

