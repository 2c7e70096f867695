"""The GPU panel's recordings: with a launch file (or a trace) open, **Record trace** and
**Record and validate** run the pipeline of `warpviz trace` (``front.Gpu.trace``) on the
worker thread; the new trace opens as the current source, and the table compares the trace's
ten metrics (and the others) with the Nsight Compute counters it carries. **Save trace as…**
copies the open trace elsewhere (atomically).

``RecordPart`` is one of the parts ``viz.app.gpu_panel.GpuPanel`` is made of.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QTableWidgetItem

from ..engine import METRIC_NAMES
from ..gpu import front
from ..i18n import tr
from ..trace.launch import shipped_launch_file
from ..trace.schema import records_complete, unrecorded_ran
from .gpu_texts import (OTHER_LABELS, dims_text, num_text, partial_text, trace_timing_text,
                        unique_recording_path)


class RecordPart:
    """Record trace, Record and validate, Save trace as, and the trace's counter table."""

    @property
    def recorder(self):
        """The recordings' ``Recorder`` (``front.Gpu.recorder``; tests put a replaying one here)."""
        return self.gpu.recorder

    @recorder.setter
    def recorder(self, value) -> None:
        self.gpu.recorder = value

    def recordable(self) -> Path | None:
        """The launch file Record runs: the open one; for an open trace, the launch file it was
        recorded from in this session (Record), or for a shipped trace its launch file in
        kernels/ (by the trace's own file name). Never a file the trace's header names: a
        trace never chooses what warpviz compiles."""
        s = self.session
        if getattr(s, "is_launch", False):
            return s.launch_path
        if s.is_trace:
            key = str(s.path)
            if key not in self.recorded_from:    # looked for once per trace (kernels/ is walked)
                self.recorded_from[key] = shipped_launch_file(s.path)
            return self.recorded_from[key]
        return None

    def record_blocker(self, validate: bool) -> str | None:
        """Why Record trace (``validate``: Record and validate) cannot run now, in words; None if it can."""
        s = self.session
        if getattr(s, "is_launch", False) and s.launch is None:
            return tr("This launch file cannot be recorded: {error}", error=s.launch_error)
        if self.recordable() is None:
            return tr("Open a launch file (*.launch.toml) to record a trace of its kernel: this trace's launch "
                      "file is not known here.")
        if self.runner.busy:
            return tr("A GPU job is running: wait for it, or Cancel it.")
        if self.device_info is None:
            return self.device_reason or tr("GPU: checking…")
        why = self.gpu.trace_missing(validate)
        return tr("Cannot record here: {why}", why=why) if why else None

    def _show_record(self) -> None:
        if not hasattr(self, "b_record"):
            return
        plain, valid = self.record_blocker(False), self.record_blocker(True)
        self.b_record.setEnabled(plain is None)
        self.b_record_validate.setEnabled(valid is None)
        self.b_record.setToolTip(plain or tr("Run the kernel once with every memory instruction recorded, write "
                                             "the trace and open it"))
        self.b_record_validate.setToolTip(valid or tr("Record, then count the plain kernel with Nsight Compute and "
                                                      "compare the ten metrics"))
        self.b_save_trace.setEnabled(self.session.is_trace and not self.runner.busy)
        mode = self.mode()
        if mode == "scenario":
            return
        parts = []
        s = self.session
        path = self.recordable()
        if mode == "launch" and s.launch is not None:
            L = s.launch
            parts.append(tr("Launch file {file}: kernel {kernel} of {source}, grid {grid} × block {block}, "
                            "{args} arguments.", file=s.launch_path.name, kernel=L.kernel, source=L.source.name,
                            grid=dims_text(L.grid), block=dims_text(L.block), args=len(L.args)))
        elif mode == "trace" and path is not None:
            for b in (self.b_record, self.b_record_validate):   # what Record runs, in its tooltip
                if b.isEnabled():
                    b.setToolTip(b.toolTip() + "\n" + tr("Recorded from {file}.", file=path))
        busy = self.runner.busy
        if plain is not None and not busy and plain == self.device_reason:
            pass        # the device line above already says why (no GPU): not twice
        elif plain is not None and not busy:
            parts.append(plain)
        elif valid is not None and not busy:
            parts.append(tr("Record and validate: {why}", why=valid))
        self.trace_info.setText(" ".join(parts))
        self.trace_info.setVisible(bool(parts))

    def record(self, validate: bool = False) -> None:
        """Record a trace of the launch file (Record trace; with ``validate`` Record and validate):
        on the worker thread, in the recorder's GPU child process; the new trace opens."""
        why = self.record_blocker(validate)
        if why is not None:
            self.status.setText(why)
            return
        path = self.recordable()
        from ..trace.launch import launch_name

        name = launch_name(path)
        out = unique_recording_path(name)
        gpu, request = self.gpu, front.TraceRequest(path, out=out, validate=validate)

        def job(progress, cancelled):
            return ("trace", str(path), gpu.trace(request, progress=progress, cancelled=cancelled))

        self._recording = (name, validate)
        self.stage = ""
        self.bar.setValue(0)
        self.status.setText(tr("Recording {name}…", name=name))
        self.runner.submit(job)
        self.bar.show()

    def _recorded(self, launch_path: Path, rec) -> None:
        """A recording finished: remember it, open its trace as the current source, say what it found."""
        self._recording = None
        self.last_recording = rec
        self.recorded_from[str(rec.path)] = launch_path
        w = self.window_
        if hasattr(w, "library"):
            w.library.reload()
        opened = w.open_trace(rec.path) if hasattr(w, "open_trace") else False
        dock = getattr(w, "docks", {}).get("gpu")
        if opened and dock is not None and not getattr(w, "presenting", False):
            dock.show()
            dock.raise_()                          # the outcome and the counter table, not the Source tab
        parts = [tr("Recorded {records} warp-level executions of {kernel} into {path}.", records=f"{rec.trace.records:,}",
                    kernel=rec.launch.kernel, path=rec.path.name)]
        self.status.setToolTip(str(rec.path))
        if not opened:
            parts.append(tr("It could not be opened: {err}", err=getattr(w, "last_open_error", "")))
        if rec.note:
            parts.append(tr("Partial trace: {note}", note=partial_text(rec.note)))
        if rec.rows is not None:
            n = sum(r.match for r in rec.rows)
            parts.append(tr("Nsight Compute: {n} of {total} metrics equal the trace.", n=n, total=len(rec.rows)))
        self.status.setText(" ".join(parts))
        self.refresh()

    def trace_rows(self) -> list[tuple[str, int | None, int | None, bool]]:
        """(metric, trace, Nsight Compute, one of the ten) of the open trace: the ten metrics, then
        the counters outside them that Nsight Compute read (atomics, LDSM, LDGSTS)."""
        s = self.session
        if not s.is_trace:
            return []
        an = s.trace_analysis if s.trace_analysis is not None and s.trace_analysis.trace is s.trace.trace else None
        h = s.trace.header
        hw, other = h.get("ncu") or {}, h.get("ncu_other") or {}
        model = an.metrics if an is not None else {}
        model_other = an.other_metrics if an is not None else {}
        rows = [(m, model.get(m), hw.get(m), True) for m in METRIC_NAMES]
        rows += [(k, int(model_other.get(k, 0)) if an is not None else None, other[k], False) for k in sorted(other)]
        return rows

    def _refresh_trace(self) -> None:
        s = self.session
        rows = self.trace_rows()
        self.table.setRowCount(len(rows))
        from .figures import METRIC_LABELS

        for i, (m, mv, hv, ten) in enumerate(rows):
            mark = "" if mv is None or hv is None else ("✓" if mv == hv else tr("differs"))
            # short names in the narrow dock (the Figures panel's); Nsight Compute's name in the tooltip;
            # the counters outside the ten in italics
            names = METRIC_LABELS if ten else OTHER_LABELS
            label = tr(names[m]) if m in names else m
            tip = m if ten else tr("{metric} (outside the ten)", metric=m)
            for j, v in enumerate((label, num_text(mv), num_text(hv), mark)):
                item = QTableWidgetItem(v)
                item.setToolTip(tip)
                item.setData(Qt.ItemDataRole.UserRole, m)
                if not ten:
                    f = item.font()
                    f.setItalic(True)
                    item.setFont(f)
                if j in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.summary.setText(self._trace_summary(rows))
        e, where = self.trace_timing()
        header = s.trace.header if s.is_trace and e is not None else None      # the trace of the entry's launch
        self.bottleneck.setText(trace_timing_text(e, where, header, self._timing_device))
        if s.is_trace:
            guard = s.trace.header.get("sass_guard") or {}
            sass = guard.get("sass") or []
            self.sass.setPlainText("\n".join(sass) if sass else tr("No SASS in this trace (cuobjdump was not "
                                                                    "installed where it was recorded)."))

    def _trace_summary(self, rows) -> str:
        s = self.session
        if self.mode() == "launch":
            return tr("Record and validate compares the recording's ten metrics with Nsight Compute on the "
                      "kernel without the recording code; the table shows both here.")
        h = s.trace.header
        if not h.get("ncu"):
            return tr("This trace carries no Nsight Compute counters: Record and validate measures them.")
        if s.trace_analysis is None:
            return tr("Analysing the whole launch…")
        ten = [r for r in rows if r[3]]
        others = [r for r in rows if not r[3]]
        text = tr("Nsight Compute on the plain kernel ({gpu}): {n} of {total} metrics equal the trace.",
                  gpu=(h.get("gpu") or {}).get("name", "?"), n=sum(r[1] == r[2] for r in ten), total=len(ten))
        if others:
            text += " " + tr("Outside the ten: {n} of {total} equal.", n=sum(r[1] == r[2] for r in others),
                             total=len(others))
        if not records_complete(h, True):
            text += " " + tr("A partial trace: expect differences.")
        missed = unrecorded_ran(h)
        if missed:
            text += " " + tr("Counters may differ: the kernel ran {n} memory instructions that warpviz does not "
                             "record (see the Figures panel).", n=len(missed))
        return text

    def save_trace_as(self, path: str | Path | None = None) -> Path | None:
        """Copy the open trace to ``path`` (asked for when None), atomically."""
        s = self.session
        if not s.is_trace or s.path is None:
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, tr("Save trace as"), str(Path.home() / s.path.name),
                                                  tr("Traces (*.wvtrace)"))
            if not path:
                return None
        path = Path(path)
        if path.suffix.lower() != ".wvtrace":
            path = path.with_name(path.name + ".wvtrace")
        try:
            front.save_trace_copy(s.path, path)
        except OSError as err:
            self.status.setText(tr("Cannot save the trace as {path}: {err}", path=path, err=err.strerror or err))
            return None
        self.status.setText(tr("Saved the trace as {path}.", path=path))
        return path
