"""The GPU panel's jobs: **Run on GPU**, **Validate counters**, **Run sweep on GPU** and
**Cancel**, and the bridge from the worker threads back to the panel (progress, results,
failures). The jobs run on ``viz.app.worker.Runner`` threads and go through the GPU's front
door (``viz.gpu.front.Gpu``), whose CUDA context lives in a child process: a faulting or hanging
kernel, or Cancel, kills only that process and the next Run starts a fresh one.

``GpuJobsPart`` is one of the parts ``viz.app.gpu_panel.GpuPanel`` is made of.
"""

from __future__ import annotations

from pathlib import Path

from ..gpu import front
from ..gpu.front import GpuUnavailable
from ..i18n import tr
from .gpu_texts import STAGE_LABELS


class GpuJobsPart:
    """Run, Validate, Sweep, Cancel, and what comes back from the worker threads."""

    def _aux_done(self, result) -> None:
        kind, value = result
        if kind == "device":
            self.set_device(value)
        elif kind == "reason":
            self.set_device(None, value)
        elif kind == "source":
            self.kernel.setPlainText(value)
        elif kind == "sass":
            self.sass.setPlainText(value)

    def run(self) -> None:
        """Measure the current scenario on this machine's GPU (worker thread)."""
        sc, name = self.session.scenario, self.session.name or "scenario"
        if sc is None or self.device_info is None:
            self.status.setText(self.device_reason or tr("Open a valid scenario first."))
            return
        stages = {"cudaMemcpy": tr("cudaMemcpy ceiling"), name: tr("compiling, checking and timing {name}", name=name)}

        def job(progress, cancelled):
            said = self.gpu.run(front.RunRequest(name, sc), lambda f, t: progress(f, stages.get(t, t)), cancelled)
            return ("run", name, said.entry)

        self.runner.submit(job)

    def validate(self) -> None:
        """Model vs Nsight Compute counters for the current scenario (worker thread)."""
        sc, name = self.session.scenario, self.session.name or "scenario"
        if sc is None or self.device_info is None:
            self.status.setText(self.device_reason or tr("Open a valid scenario first."))
            return

        def job(progress, cancelled):
            return ("validate", name, self.gpu.validate(front.ValidateRequest([(name, sc)]), progress, cancelled)[0])

        self.runner.submit(job)

    def run_sweep(self) -> None:
        name = self.sweep_choice.currentData()
        if not name or self.device_info is None:
            self.status.setText(self.device_reason or "")
            return

        known = (self._measurements or {}).get("scenarios")

        def job(progress, cancelled):
            said = self.gpu.sweep(front.SweepRequest(name, known),
                                  lambda f, _t: progress(f, tr("sweep {name}", name=name)), cancelled)
            return ("sweep", name, said.sweep)

        self.runner.submit(job)

    def cancel(self) -> None:
        recording = self.runner.busy and self._recording is not None
        self._recording = None
        self.runner.cancel()
        self.status.setText(tr("Cancelled: the GPU process was stopped; nothing was written.") if recording
                            else tr("Cancelled."))

    def _busy(self, busy: bool) -> None:
        self.b_cancel.setEnabled(busy)
        if not busy:
            self.bar.hide()
        self._show_device()

    def _progress(self, fraction: float, text: str) -> None:
        if self._recording is not None and text in STAGE_LABELS:
            stages = [st for st in STAGE_LABELS if self._recording[1] or st != "ncu"]
            k = stages.index(text) + 1 if text in stages else len(stages)
            self.status.setText(tr("Recording {name}: {stage} (step {k} of {n})…", name=self._recording[0],
                                   stage=tr(STAGE_LABELS[text]), k=k, n=len(stages)))
            self.stage = text
        else:
            self.status.setText(f"{int(fraction * 100)}% {text}")
        self.bar.setValue(int(fraction * 100))
        self.bar.setVisible(self.runner.busy)

    def _job_done(self, result) -> None:
        kind, name, value = result
        if kind == "trace":
            self._recorded(Path(name), value)
            return
        if kind == "run":
            self.live[name] = value
            self.status.setText(value.get("error") or tr("Measured {name}.", name=name))
        elif kind == "validate":
            if value.error:
                self.status.setText(value.error)
            else:
                self.validation[name] = value.rows
                self.status.setText(tr("Counters match the model.") if value.match else
                                    tr("Counters differ from the model: see the table."))
        elif kind == "sweep":
            self.live.setdefault("__sweeps__", {})[name] = value
            self.status.setText(tr("Swept {name}.", name=name))
        self.refresh()

    def _job_failed(self, err) -> None:
        if self._recording is not None:
            self._recording = None
            self.status.setText(str(err))   # the CLI's paragraph (file, key or line, problem, fix)
            return
        if isinstance(err, GpuUnavailable):
            self.device_info, self._reason = None, ("No GPU here: {why}", {"why": err})
            self._show_device()
        self.status.setText(str(err))

    def shutdown(self) -> None:
        self.runner.cancel()
        self.gpu.close()
