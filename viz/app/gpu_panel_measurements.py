"""The GPU panel's measurements: the results file it shows (the shipped H100 one, read on a
thread of its own while the app starts; or one chosen with **Import measurements**), the list
of what that file measured, and the entry and the words for the open scenario or traced launch.

``MeasurementsPart`` is one of the parts ``viz.app.gpu_panel.GpuPanel`` is made of; its methods
use the panel's widgets (``status``, ``source_label``, ``measured_choice``...).
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from ..gpu import front
from ..i18n import language, sep, tr
from .gpu_panel_widgets import plain_for_qt
from .gpu_texts import bound_name, measured_names, not_results_text


class MeasurementsPart:
    """The loaded results file and what the panel reads of it."""

    _measurements: dict | None
    measurements_path: Path | None
    _shipped: tuple | bool | None
    _shipped_ready: threading.Event

    @property
    def measurements(self) -> dict | None:
        """The loaded results file (the shipped one until another is imported; read now if the
        reading thread has not finished)."""
        self._take_shipped(wait=True)
        return self._measurements

    def _read_shipped(self) -> None:
        try:
            got: tuple = (front.load_results(None), None)
        except Exception as err:  # noqa: BLE001 - a broken shipped file: the panel shows none
            got = (None, str(err))
        self._shipped = got
        self._shipped_ready.set()
        try:
            self.shippedRead.emit()
        except RuntimeError:        # the panel is gone (the app closed while reading)
            pass

    def _shipped_arrived(self) -> None:
        self._take_shipped(wait=False)

    def _take_shipped(self, wait: bool) -> None:
        """Show the shipped measurements once they are read (``wait``: wait for the reading
        thread), unless a results file was imported meanwhile."""
        if self._shipped is None and not (wait and self._shipped_ready.wait(120)):
            return
        got, self._shipped = self._shipped, False
        if not got:
            return                              # taken already (False)
        doc, _err = got
        if doc is not None and self.measurements_path is None:
            self._show_measurements(doc, None)

    def load_measurements(self, path: str | Path | None) -> bool:
        """A results file (the shipped H100 one when ``path`` is None); False on a bad file."""
        try:
            doc = front.load_results(path)
        except front.ResultsError as err:
            if path is not None:
                self.status.setText(not_results_text(path, str(err)))
            return False
        self._show_measurements(doc, path)
        return True

    def _show_measurements(self, doc: dict, path: str | Path | None) -> None:
        self._measurements = doc
        self.measurements_path = Path(path) if path else front.shipped_results_path()
        if path is not None:
            self.status.clear()           # an earlier import's error is about another file
            self.status.setToolTip("")
        self._fill_measured()
        self.sweep_choice.blockSignals(True)
        self.sweep_choice.clear()
        for name in (doc.get("sweeps") or {}):
            self.sweep_choice.addItem(name, name)
        self.sweep_choice.blockSignals(False)
        self._show_source()
        self.refresh()

    def import_folder(self) -> str:
        """Where Import opens: the folder of the last import, else the shipped measurements
        (assets/measurements), not the user's empty scenarios folder."""
        from . import settings

        last = settings.get("measurements_dir", "", str)
        try:
            if last and Path(last).is_dir():
                return last
        except (OSError, ValueError):
            pass
        return str(front.shipped_results_path().parent)

    def _import_dialog(self) -> None:
        from . import settings

        path, _ = QFileDialog.getOpenFileName(self, tr("Import measurements"), self.import_folder(),
                                              tr("Results files (*.json)"))
        if path:
            settings.put("measurements_dir", str(Path(path).parent))
        if path and not self.load_measurements(path):
            from PySide6.QtWidgets import QMessageBox

            # the panel keeps the measurements it had; the message names the file and the field
            QMessageBox.warning(self, tr("Import measurements"), plain_for_qt(self.status.text()))

    def _show_source(self) -> None:
        if not self._measurements:
            self.source_label.setText(tr("No measurements loaded."))
            return
        m = self._measurements
        file = self.measurements_path.name if self.measurements_path else ""
        label = str(m.get("label", ""))
        device = str((m.get("device") or {}).get("name") or "")
        if language() != "en" and device:
            # the file's label is English prose: in another language, its device and date in the
            # language's own sentence (the label in the tooltip)
            self.source_label.setText(tr("Measurements: {device}, measured {date} ({file})", device=device,
                                         date=str(m.get("measured_at", ""))[:10], file=file))
            self.source_label.setToolTip(label)
            return
        self.source_label.setText(tr("Measurements: {label} ({file})", label=label, file=file))
        self.source_label.setToolTip(self.source_label.text())

    def _fill_measured(self) -> None:
        """The list of what the loaded file measured (scenarios, then traced launches)."""
        scen, traced = measured_names(self._measurements)
        c = self.measured_choice
        c.blockSignals(True)
        c.clear()
        c.addItem(tr("Measured in this file ({n}): open one…", n=len(scen) + len(traced)), None)
        for n in scen:
            c.addItem(f"[{n}]", f"scenario:{n}")
        for n in traced:
            c.addItem(tr("[{name}] (traced launch)", name=n), f"trace:{n}")
        c.setCurrentIndex(0)
        c.blockSignals(False)
        c.setVisible(len(scen) + len(traced) > 0)

    def _open_measured(self, index: int) -> None:
        """Open the scenario (or traced launch) picked in the list, by name only: a built-in
        scenario, a shipped trace or a launch file in kernels/ (nothing the file says is a path
        warpviz opens)."""
        data = self.measured_choice.itemData(index)
        self.measured_choice.setCurrentIndex(0)
        if not data:
            return
        kind, _, name = str(data).partition(":")
        w = self.window_
        from .. import assets

        if kind == "scenario":
            from ..scenario import resolve

            try:
                path = resolve(name)
            except Exception:  # noqa: BLE001 - a name that is no built-in: say so
                path = None
            if path is not None and Path(path).exists():
                w.open_path(Path(path))
                return
        else:
            entry = (self._measurements.get("traces") or {}).get(name) or {}
            trace = assets.named_trace(Path(str(entry.get("trace") or "")).name or name)
            if trace is not None:
                w.open_trace(trace)
                return
            launch = assets.named_launch(Path(str(entry.get("launch_file") or "")).name or name)
            if launch is not None:
                w.open_launch(launch)
                return
        self.status.setText(tr("{name} is not one of warpviz's built-in scenarios or shipped traces: open its "
                               "file yourself.", name=name))

    def measured_where(self) -> str:
        """Where the loaded measurements come from: the file's label (English prose), or in
        another language its device and date in that language's sentence."""
        m = self._measurements or {}
        device = str((m.get("device") or {}).get("name") or "")
        if language() != "en" and device:
            return tr("{device}, measured {date}", device=device, date=str(m.get("measured_at", ""))[:10])
        return str(m.get("label", ""))

    def entry(self) -> tuple[dict | None, str]:
        """The current scenario's measurement: this session's run first, then the file's
        entry when its params equal the scenario's. (entry, where it comes from)."""
        sc = self.session.scenario
        if sc is None:
            return None, ""
        name = self.session.name
        if name in self.live:
            return self.live[name], tr("measured now")
        if self._measurements and name in self._measurements.get("scenarios", {}):
            e = self._measurements["scenarios"][name]
            if e.get("params", {}) == dict(sc.params):
                return e, self.measured_where()
        return None, ""

    def trace_timing(self) -> tuple[dict | None, str]:
        """The timing of the open trace's (or launch file's) launch: its entry in the loaded
        results file's ``traces`` section, else in the shipped H100 one
        (``viz.gpu.tracebench.SHIPPED``), matched by launch file name, kernel and launch (block,
        grid, dynamic shared memory, arguments). (entry, where it comes from)."""
        s = self.session
        if getattr(s, "is_launch", False):
            L = s.launch
            if L is None:
                return None, ""
            name, kernel = s.launch_path.name, L.kernel
            launch = {"block": list(L.block), "grid": list(L.grid), "shared_bytes": L.shared_bytes,
                      "args": [a.as_dict() for a in L.args]}
        elif s.is_trace:
            h = s.trace.header
            name, kernel = h.get("launch_file_name") or "", h.get("kernel")
            hl = h.get("launch") or {}
            launch = {k: hl.get(k) for k in ("block", "grid", "shared_bytes", "args")}
        else:
            return None, ""
        docs = []
        if self._measurements and self._measurements.get("traces"):
            docs.append(self._measurements)
        if self._trace_doc is None:
            try:
                self._trace_doc = front.load_results(front.shipped_trace_timings_path())
            except front.ResultsError:
                self._trace_doc = {}
        if self._trace_doc:
            docs.append(self._trace_doc)
        for doc in docs:
            for e in (doc.get("traces") or {}).values():
                if Path(e.get("launch_file") or "").name == name and e.get("kernel") == kernel \
                        and e.get("launch") == launch:
                    self._timing_device = (doc.get("device") or {}).get("name")
                    return e, doc.get("label", "")
        return None, ""

    def _device_of(self, where: str) -> str | None:
        """The GPU a scenario's shown measurement (and its prediction) is for: this machine's for
        a run made now, else the loaded results file's."""
        if where == tr("measured now"):
            return (self.device_info or {}).get("name")
        return ((self._measurements or {}).get("device") or {}).get("name")

    def _summary_text(self, sc, e, where: str) -> str:
        if sc is None:
            return ""
        if e is None:
            text = tr("No measurement of this scenario with these params; Run measures it on a GPU.")
            scen, traced = measured_names(self._measurements)
            name = self.measurements_path.name if self.measurements_path else ""
            if self.session.name not in scen and (scen or traced):
                text += " " + self._measured_sentence(name, scen, traced)
            return text
        if e.get("error"):
            return tr("{where}: {error}", where=where, error=e["error"])
        t = e.get("timing") or {}
        parts = [tr("Source: {where}", where=where)]
        if t:
            parts.append(tr("median {ms:.4f} ms over {n} runs (spread {sp:.1f}%)", ms=t["median_ms"],
                            n=t.get("runs", 0), sp=100 * t.get("spread", 0)))
            if t.get("useful_gbps"):
                parts.append(tr("{gbps:,.0f} GB/s useful", gbps=t["useful_gbps"]))
            if t.get("dram_gbps"):
                parts.append(tr("{gbps:,.0f} GB/s of DRAM traffic (counters)", gbps=t["dram_gbps"]))
            if t.get("fraction_of_memcpy"):
                parts.append(tr("{pct:.0f}% of cudaMemcpy", pct=100 * t["fraction_of_memcpy"]))
            if t.get("ns_per_warp_instruction"):
                parts.append(tr("{ns:.4f} ns per warp instruction", ns=t["ns_per_warp_instruction"]))
            p = t.get("predicted")
            if p:
                parts.append(tr("cost model {ms:.4f} ms ({bound}-bound), measured/predicted {r:.2f}",
                                ms=p["ms"], bound=bound_name(p["bound"]),
                                r=t["median_ms"] / p["ms"] if p["ms"] else 0))
            sc_ = t.get("scale") or {}
            parts.append(tr("timed at {reps} replicas, params {params}", reps=sc_.get("replicas", 1),
                            params=sc_.get("params") or "{}"))
        c = e.get("check")
        if c:
            parts.append(tr("result check: {status}", status=tr(str(c.get("status")))))
        return sep("; ").join(parts)

    def _measured_sentence(self, file: str, scen: list[str], traced: list[str]) -> str:
        def some(names: list[str]) -> str:
            return sep(", ").join(names[:6]) + (sep(", ") + tr("{n} more", n=len(names) - 6) if len(names) > 6 else "")

        if scen and traced:
            return tr("{file} measured {n} scenarios ({names}) and {m} traced launches ({traced}): pick one in "
                      "the list above.", file=file, n=len(scen), names=some(scen), m=len(traced), traced=some(traced))
        if scen:
            return tr("{file} measured {n} scenarios ({names}): pick one in the list above.", file=file, n=len(scen),
                      names=some(scen))
        return tr("{file} measured no scenarios, only {m} traced launches ({traced}): pick one in the list above "
                  "to open its trace.", file=file, m=len(traced), traced=some(traced))
