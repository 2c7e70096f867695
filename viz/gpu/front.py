"""The one front door to the GPU: what the app, the command line and the Python API ask of it.

Five things, each a small request and a typed answer:

* **probe** — which GPU there is, or exactly why there is none (``probe() -> Probe``);
* **run** — time a scenario's generated kernel and check its result (``Gpu.run(RunRequest)``),
  also over a sweep (``Gpu.sweep(SweepRequest)``); ``Gpu.memcpy_gbps()`` is the ceiling;
* **validate** — the model's counters against Nsight Compute's (``validate(ValidateRequest)``);
* **trace** — record a launch file's kernel (``Gpu.trace(TraceRequest)`` in the app, which keeps
  one GPU process between recordings; ``record(TraceRequest)`` once, for the CLI and the API);
* **calibrate** — the microbenchmarks of ``warpviz calibrate`` (``calibrate(CalibrateRequest)``).

Behind it: ``worker.ProcessSession`` (the CUDA context in a child process that a fault or
Cancel kills), ``runner.Session`` and its ``driver.Driver`` (the named driver calls),
``bench``, ``trace_pipeline``, ``calibrate``. Nothing above ``viz.gpu`` needs to know those
names: the app imports this module only (a test scans ``viz/app`` for that), and the reads
it needs of the results files, the hand-written kernels and the calibrations are here too.

Importing this module is cheap (the standard library only): every part behind it is
imported when first used, so the app's GPU panel costs nothing at startup.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import GpuUnavailable

if TYPE_CHECKING:                       # the types only; nothing imported at run time
    from ..scenario import Scenario
    from .trace_pipeline import Recording

Progress = Callable[[float, str], None]
IsCancelled = Callable[[], bool]

# The exceptions of the parts behind the door, imported when first named (PEP 562), so that
# importing this module stays cheap: ``front.KernelFault`` (a kernel failed on the GPU),
# ``front.Cancelled`` (the caller cancelled; the GPU process was stopped),
# ``front.RecordingFailed`` (a recording that could not be made: ``str(err)`` is the CLI's
# paragraph), ``front.ResultsError`` (a results file that is not one).
_LAZY = {"KernelFault": ("driver", "KernelFault"), "Cancelled": ("worker", "Cancelled"),
         "RecordingFailed": ("trace_pipeline", "RecordingFailed"), "ResultsError": ("results", "ResultsError"),
         "Recording": ("trace_pipeline", "Recording")}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f"{__package__}.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _never() -> bool:
    return False


def _quiet(*_a, **_k) -> None:
    pass


# ---------------------------------------------------------------------------- the device


@dataclass(frozen=True)
class Probe:
    """The device found (``device``: name, compute capability, SMs, driver...), or why there
    is none (``reason``, a ``GpuUnavailable`` whose ``kind`` says what is missing)."""

    device: dict | None = None
    reason: GpuUnavailable | None = None

    @property
    def available(self) -> bool:
        return self.device is not None


def pycuda_installed() -> bool:
    """Whether PyCUDA can be imported here (looked up, not imported: no CUDA is touched)."""
    import importlib.util

    return importlib.util.find_spec("pycuda") is not None


def probe() -> Probe:
    """The GPU of this machine, or why there is none (never raises ``GpuUnavailable``)."""
    from .runner import probe as runner_probe

    try:
        return Probe(device=runner_probe())
    except GpuUnavailable as err:
        return Probe(reason=err)


def device() -> dict:
    """The GPU of this machine (name, compute capability, SMs, memory, driver...);
    ``GpuUnavailable`` with the exact reason when there is none."""
    from .runner import probe as runner_probe

    return runner_probe()


def require(counters: bool = False) -> dict:
    """The device, with nvcc (and Nsight Compute when ``counters``) present; GpuUnavailable
    naming what is missing otherwise (what the CLI checks before a GPU command)."""
    from ..toolchain.compile import require_nvcc
    from .ncu import find_ncu

    info = device()
    require_nvcc()
    if counters and not find_ncu():
        raise GpuUnavailable("Nsight Compute (ncu) is not installed or not on the PATH", "ncu")
    return info


# ---------------------------------------------------------------------------- requests and answers


@dataclass(frozen=True)
class RunRequest:
    """Time one scenario's generated kernel (and check its result)."""

    name: str
    scenario: "Scenario"


@dataclass(frozen=True)
class RunResult:
    """A timed scenario: ``entry`` is its results-file entry (``timing``, ``check``,
    ``counters`` or ``error``), as ``warpviz bench`` writes it."""

    name: str
    entry: dict

    @property
    def error(self) -> str | None:
        return self.entry.get("error")


@dataclass(frozen=True)
class SweepRequest:
    """Time a sweep of the results file (``doc_scenarios``: the file's scenario entries, whose
    scales the sweep reuses)."""

    name: str
    doc_scenarios: dict | None = None


@dataclass(frozen=True)
class SweepResult:
    name: str
    sweep: dict              # {"param", "points": [{"value", "median_ms", "predicted_ms", ...}]}


@dataclass(frozen=True)
class ValidateRequest:
    """Count scenarios with Nsight Compute and compare with the model."""

    items: list                 # [(name, Scenario)]


@dataclass(frozen=True)
class Validation:
    """One scenario's counters against the model: ``rows`` ({"metric", "model", "hardware",
    "match"}), ``match`` (True, False, or None when it could not be counted) or ``error``."""

    label: str
    match: bool | None
    rows: list = field(default_factory=list)
    error: str | None = None
    raw: dict = field(default_factory=dict, repr=False)     # the bench module's document, as the CLI prints it

    @classmethod
    def from_dict(cls, d: dict) -> "Validation":
        return cls(str(d.get("label", "")), d.get("match"), list(d.get("rows") or []), d.get("error"), d)


@dataclass(frozen=True)
class TraceRequest:
    """Record a launch file's kernel: ``launch`` (a path, or a loaded ``viz.trace.launch.Launch``),
    ``blocks`` (linear block indices, None for all), ``validate`` (also Nsight Compute), ``out``
    (the ``.wvtrace`` to write)."""

    launch: Any
    out: Path | str | None = None
    validate: bool = False
    blocks: list[int] | None = None


@dataclass(frozen=True)
class CalibrateRequest:
    """``warpviz calibrate``'s measurement: ``runs`` separate GPU processes, combined."""

    quick: bool = False
    runs: int = 1
    verbose: bool = False


# ---------------------------------------------------------------------------- the door


class Gpu:
    """The GPU of a long-lived front end (the app's GPU panel): one GPU process for runs,
    started on first use; one for recordings (``recorder``), kept between them. Each call runs
    on the caller's (worker) thread and may be cancelled (``cancelled()`` polled; the process
    is killed and the next call starts another)."""

    def __init__(self, child: str | None = None):
        self.child = child
        self._session = None
        self._lock = threading.Lock()
        self._memcpy_gbps: float | None = None
        self._recorder = None

    # -- the processes -----------------------------------------------------

    def _gpu(self, cancelled: IsCancelled | None = None):
        from .worker import ProcessSession

        if self._session is None:
            self._session = ProcessSession(child=self.child, cancelled=cancelled)
        return self._session

    @property
    def recorder(self):
        """The recordings' ``trace_pipeline.Recorder`` (made when first needed)."""
        if self._recorder is None:
            from .trace_pipeline import Recorder

            self._recorder = Recorder(child=self.child)
        return self._recorder

    @recorder.setter
    def recorder(self, value) -> None:
        self._recorder = value

    def close(self) -> None:
        """End both GPU processes."""
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._recorder is not None:
            self._recorder.close()

    # -- time ----------------------------------------------------------------

    def memcpy_gbps(self, cancelled: IsCancelled = _never) -> float:
        """The device-to-device cudaMemcpy rate (read + write), measured once per GPU process
        pair: the ceiling a run's rate is a fraction of."""
        if self._memcpy_gbps is None:
            from .plan import gbps
            from .runner import MEMCPY_BYTES

            self._memcpy_gbps = gbps(2 * MEMCPY_BYTES, self._gpu(cancelled).time_memcpy(cancelled=cancelled).median_ms)
        return self._memcpy_gbps

    def info(self) -> dict:
        """The device the GPU process runs on (its probe)."""
        return dict(self._gpu().info)

    # -- run -------------------------------------------------------------------

    def run(self, req: RunRequest, progress: Progress = _quiet, cancelled: IsCancelled = _never) -> RunResult:
        from .bench import run_one

        with self._lock:
            if self._memcpy_gbps is None:
                progress(0.05, "cudaMemcpy")
            ceiling = self.memcpy_gbps(cancelled)
            progress(0.2, req.name)
            return RunResult(req.name, run_one(self._gpu(cancelled), req.name, req.scenario, ceiling, cancelled))

    def sweep(self, req: SweepRequest, progress: Progress = _quiet, cancelled: IsCancelled = _never) -> SweepResult:
        from . import costmodel
        from .bench import run_sweep

        with self._lock:
            gpu = self._gpu(cancelled)
            ceiling = self.memcpy_gbps(cancelled)
            model = costmodel.DeviceModel.from_device(gpu.info, ceiling)
            progress(0.1, req.name)
            return SweepResult(req.name, run_sweep(gpu, req.name, ceiling, model, req.doc_scenarios, cancelled))

    # -- validate and trace ------------------------------------------------------

    def validate(self, req: ValidateRequest, progress: Progress = _quiet,
                 cancelled: IsCancelled = _never) -> list[Validation]:
        return validate(req, progress, cancelled)

    def trace_missing(self, validate: bool) -> str | None:
        """Why a recording cannot run here (a tool missing), in words; None when it can."""
        return self.recorder.missing(validate)

    def trace(self, req: TraceRequest, progress=None, cancelled: IsCancelled | None = None, log=None) -> "Recording":
        """Record ``req.launch`` (a path) in the recorder's GPU process; ``RecordingFailed``
        carries the CLI's paragraph."""
        return self.recorder.record(req.launch, validate=req.validate, out=req.out, blocks=req.blocks,
                                    progress=progress, cancelled=cancelled, log=log)


# ---------------------------------------------------------------------------- one-shot calls


def validate(req: ValidateRequest, progress: Progress = _quiet, cancelled: IsCancelled = _never) -> list[Validation]:
    """Nsight Compute's counters of each scenario against the model's."""
    from .bench import validate as bench_validate

    return [Validation.from_dict(d) for d in bench_validate(list(req.items), progress, cancelled)]


def record(req: TraceRequest, *, log=None, child: str | None = None) -> "Recording":
    """Record ``req.launch`` (a loaded ``Launch``, or a path) once, in a GPU process of its own
    (``warpviz trace`` and ``viz.api``); exceptions as ``trace_pipeline.record_trace``'s."""
    from .trace_pipeline import record_trace

    launch = req.launch
    if isinstance(launch, (str, Path)):
        from ..trace.launch import load_launch

        launch = load_launch(launch)
    kwargs: dict = {} if log is None else {"log": log}
    if child is not None:                # (left out otherwise: record_trace's own default stands)
        kwargs["child"] = child
    return record_trace(launch, blocks=req.blocks, validate=req.validate, out=req.out, **kwargs)


def calibrate(req: CalibrateRequest, say: Callable[[str], None] = _quiet) -> dict:
    """``runs`` separate GPU processes of the calibration microbenchmarks, combined (each
    figure the median over all their sets): ``calibrate.document``'s input."""
    from .calibrate import CHILD, combine_runs
    from .worker import ProcessSession

    raws = []
    for i in range(max(1, req.runs)):
        if req.runs > 1:
            say(f"calibrate: run {i + 1} of {req.runs}")
        with ProcessSession(child=CHILD) as session:
            raws.append(session.calibrate(quick=req.quick, verbose=req.verbose))
    return combine_runs(raws)


# ---------------------------------------------------------------------------- what the front ends read


def failure_text(err: BaseException, launch=None) -> str | None:
    """The CLI's paragraph for a failed recording, or None for an unexpected error."""
    from .trace_pipeline import failure_message

    return failure_message(err, launch)


def parse_blocks(text: str, nblocks: int, path) -> list[int]:
    """``--blocks``'s block list (``0-3,7``), checked against the grid."""
    from .trace_pipeline import parse_blocks as parse

    return parse(text, nblocks, path)


def save_trace_copy(src: str | Path, dst: str | Path) -> Path:
    """Copy a trace file to ``dst`` atomically."""
    from .trace_pipeline import save_copy

    return save_copy(src, dst)


def load_results(path: str | Path | None) -> dict:
    """A results file (``warpviz bench --out``), checked; the shipped H100 one when None.
    ``ResultsError`` names the file and the field."""
    from . import results

    return results.load(path)


def shipped_results_path() -> Path:
    """The shipped measurements (``assets/measurements/``)."""
    from .results import shipped_path

    return shipped_path()


def shipped_trace_timings_path() -> Path:
    """The shipped traced-launch timings (``warpviz bench --traces``'s file)."""
    from .tracebench import SHIPPED

    return shipped_results_path().with_name(SHIPPED)


def results_limits() -> tuple[int, int]:
    """(the results-file format number, its largest size in bytes)."""
    from .results import FORMAT, MAX_RESULTS_BYTES

    return FORMAT, MAX_RESULTS_BYTES


def entry_caveats(entry: dict, header: dict | None = None, device: str | None = None, traced: bool = True) -> list:
    """The caveats of a results entry's prediction (``caveats.entry_caveats``)."""
    from .caveats import entry_caveats as caveats

    return caveats(entry, header, device, traced)


def hand_kernels(scenario_stem: str) -> list:
    """The hand-written kernels (``handwritten.HandKernel``: name, file, function, path) of a built-in."""
    from .handwritten import for_scenario

    return for_scenario(scenario_stem)


def generated_source(sc: "Scenario") -> str:
    """The CUDA source warpviz generates for a scenario's GPU run."""
    from .codegen import generate

    return generate(sc).source


def predict_trace(trace, resources: dict | None = None):
    """The cost model's prediction for a recorded trace on the GPU it describes
    (``predict.predict_trace``: ``seconds``, ``bound``, terms)."""
    from .predict import predict_trace as predict

    return predict(trace, resources=resources)


def is_calibrated(device_name: str | None) -> bool:
    """Whether this GPU has a calibration file the cost model reads (assets/calibration/)."""
    from .calibration import CALIBRATION_DIR, slug

    return bool(device_name) and (CALIBRATION_DIR / f"{slug(str(device_name))}.json").is_file()


__all__ = ["GpuUnavailable", "KernelFault", "Cancelled", "RecordingFailed", "ResultsError", "Recording", "Probe",
           "probe", "device", "pycuda_installed", "require", "Gpu", "RunRequest", "RunResult", "SweepRequest", "SweepResult",
           "ValidateRequest", "Validation", "validate", "TraceRequest", "record", "CalibrateRequest", "calibrate",
           "failure_text", "parse_blocks", "save_trace_copy", "load_results", "shipped_results_path",
           "shipped_trace_timings_path", "results_limits", "entry_caveats", "hand_kernels", "generated_source",
           "predict_trace", "is_calibrated"]
