"""The hand-written kernels of ``kernels/`` (see ``kernels/manifest.toml``), as launches.

Each manifest entry names the built-in scenario the kernel copies. The kernel runs with
that scenario's launch and arrays (a pointer to each array's element 0, placed where the
model places it), so at the scenario's own size its counters must equal the model's,
and scaled by the entry's ``timing`` it is the readable reference that the timings
quote. Outputs are checked against numpy (``CHECKS``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .. import assets
from ..scenario import Scenario, load
from .plan import const_value, scaled_scenario
from .runner import LaunchSpec


@dataclass(frozen=True)
class HandKernel:
    name: str
    scenario: str
    file: str
    function: str
    args: tuple[str, ...]
    shared: str = "0"
    check: str = "none"
    timing: dict = field(default_factory=dict)
    launch: str = ""        # its launch file's (and shipped trace's) name where not ``name`` (manifest ``launch``)

    @property
    def path(self) -> Path:
        return assets.kernels_dir() / self.file

    def source(self) -> str:
        return file_source(self.file)


def file_source(file: str) -> str:
    """A kernels/ file with its local includes inlined (so nvcc needs no -I)."""
    return _inline_includes(assets.kernels_dir() / file)


def _inline_includes(path: Path, seen: set | None = None) -> str:
    seen = seen if seen is not None else set()
    out = []
    for line in path.read_text().splitlines():
        s = line.strip()
        if s.startswith("#include \"") and s.endswith("\""):
            inc = path.parent / s[len("#include \""):-1]
            if inc not in seen:
                seen.add(inc)
                out.append(_inline_includes(inc, seen))
            continue
        if s == "#pragma once":
            continue
        out.append(line)
    return "\n".join(out) + "\n"


@lru_cache(maxsize=1)
def manifest() -> tuple[HandKernel, ...]:
    data = tomllib.loads((assets.kernels_dir() / "manifest.toml").read_text())
    out = []
    for d in data.get("kernel", []):
        out.append(HandKernel(d.get("name", d["function"]), d["scenario"], d["file"], d["function"], tuple(d["args"]),
                              str(d.get("shared", "0")), d.get("check", "none"), dict(d.get("timing", {})),
                              str(d.get("launch", ""))))
    names = [k.name for k in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        # Two entries of one function for different scenarios: name them by scenario.
        out = [replace(k, name=f"{k.name}@{k.scenario}") if k.name in dup else k for k in out]
    return tuple(out)


def for_scenario(name: str) -> list[HandKernel]:
    return [k for k in manifest() if k.scenario == name]


def scenario_of(k: HandKernel, scaled: bool) -> Scenario:
    """The kernel's scenario at its own size, or scaled by the entry's timing table."""
    sc = load(k.scenario)
    if scaled and k.timing:
        sc = replace(sc, timing=MappingProxyType(dict(k.timing)))
        sc, _, _ = scaled_scenario(sc)
    return sc


def launch_spec(k: HandKernel, sc: Scenario, cubin: bytes) -> LaunchSpec:
    """The launch of kernel ``k`` on scenario ``sc`` (its arrays, params and launch)."""
    arrays = {a.name: a for a in sc.arrays if a.space == "global"}
    args: list[tuple[str, int]] = []
    for a in k.args:
        if a == "sink":
            args.append(("sink", 0))
        elif a in arrays:
            args.append(("ptr", arrays[a].base))
        elif a in sc.params:
            args.append(("i32", int(sc.params[a])))
        else:
            args.append(("i32", int(a, 0)))
    shared = const_value(k.shared, dict(sc.params), f"shared of {k.name}")
    return LaunchSpec(k.function, cubin, tuple(sc.launch.block), tuple(sc.launch.grid), shared,
                      launch_bytes(k, sc), args, label=k.name)


def launch_bytes(k: HandKernel, sc: Scenario) -> int:
    """The global buffer a launch of ``k`` on ``sc`` uses (its arrays, rounded up to 256 bytes)."""
    footprint = max((a.start + a.footprint for a in sc.arrays if a.space == "global"), default=256)
    return -(-footprint // 256) * 256


# ---------------------------------------------------------------------------- data & checks


_NUMPY = {"float": np.float32, "int": np.int32, "double": np.float64, "char": np.int8, "short": np.int16,
          "half": np.float16}


def initial_bytes(sc: Scenario, seed: int = 1) -> np.ndarray:
    """Random data, typed per array: floats in [0, 1) (so sums stay finite), ints random."""
    rng = np.random.default_rng(seed)
    size = max((a.start + a.footprint for a in sc.arrays if a.space == "global"), default=256)
    buf = rng.integers(0, 256, size, dtype=np.uint8)
    for a in sc.arrays:
        if a.space != "global":
            continue
        comp = _component(a.type)
        n = a.nbytes // np.dtype(comp).itemsize
        if np.issubdtype(comp, np.floating):
            vals = rng.random(n).astype(comp)
        else:
            vals = rng.integers(np.iinfo(comp).min, np.iinfo(comp).max, n, dtype=comp)
        buf[a.base:a.base + a.nbytes] = vals.view(np.uint8)
    return buf


def _component(t) -> type:
    if t.name in _NUMPY:
        return _NUMPY[t.name]
    if t.fields:
        return _component(t.fields[0].type)
    return np.uint8


def view(sc: Scenario, buf: np.ndarray, name: str) -> np.ndarray:
    a = sc.array(name)
    comp = _component(a.type)
    flat = buf[a.base:a.base + a.nbytes].view(comp)
    return flat


def _equal(got, want) -> tuple[bool, str]:
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if got.shape != want.shape:
        return False, f"shape {got.shape} != {want.shape}"
    same = got.view(np.uint8) == want.view(np.uint8) if got.dtype == want.dtype else got == want
    bad = int((~same).sum()) if same.dtype == bool else 0
    return bad == 0, f"{bad} wrong bytes" if bad else f"{got.size} elements equal"


def _close(got, want, rtol: float) -> tuple[bool, str]:
    err = float(np.linalg.norm(got.astype(np.float64) - want) / max(1e-30, np.linalg.norm(want)))
    return err < rtol, f"relative error {err:.2e} (limit {rtol:.0e})"


def _check_copy(sc, before, after):
    names = [a.name for a in sc.arrays if a.space == "global"]
    src, dst = view(sc, before, names[0]), view(sc, after, names[-1])
    n = min(src.size, dst.size)
    if "N" in sc.params and sc.params["N"] < n:
        n = sc.params["N"]
    return _equal(dst[:n], src[:n])


def _check_strided(sc, before, after):
    s = sc.params["S"]
    out = view(sc, after, "out")
    return _equal(out, view(sc, before, "in")[::s][:out.size])


def _check_offset(sc, before, after):
    out = view(sc, after, "out")
    return _equal(out, view(sc, before, "in")[1:1 + out.size])


def _check_gather(sc, before, after):
    n = sc.params["N"]
    i = np.arange(n, dtype=np.int64)
    return _equal(view(sc, after, "out"), view(sc, before, "in")[(i * 2654435761) % n])


def _check_first_field(sc, before, after):
    p = sc.arrays[0]
    per = p.type.size // 4
    return _equal(view(sc, after, "out"), view(sc, before, p.name)[::per])


def _check_transpose(sc, before, after):
    w = sc.params["W"]
    return _equal(view(sc, after, "out").reshape(w, w), view(sc, before, "in").reshape(w, w).T.copy())


def _check_block_sum(sc, before, after):
    tpb = sc.launch.threads_per_block
    x = view(sc, before, "in").astype(np.float64)
    want = x[:sc.launch.blocks * tpb].reshape(-1, tpb).sum(axis=1)
    return _close(view(sc, after, "out")[:want.size], want, 1e-5)


def _check_stencil(sc, before, after):
    x = view(sc, before, "in").astype(np.float64)
    want = x[:-2] + x[1:-1] + x[2:]
    return _close(view(sc, after, "out")[1:-1], want, 1e-6)


def _gemm(sc, before, after, transposed: bool):
    m, n, k = sc.params["M"], sc.params["N"], sc.params["K"]
    a = view(sc, before, "A").astype(np.float64).reshape(m, k)
    b = view(sc, before, "B").astype(np.float64)
    b = b.reshape(n, k).T if transposed else b.reshape(k, n)
    return _close(view(sc, after, "C").reshape(m, n), a @ b, 1e-5)


CHECKS = {
    "copy": _check_copy, "strided": _check_strided, "offset": _check_offset, "gather": _check_gather,
    "first_field": _check_first_field, "transpose": _check_transpose, "block_sum": _check_block_sum,
    "stencil": _check_stencil, "gemm": lambda s, b, a: _gemm(s, b, a, False),
    "gemm_nt": lambda s, b, a: _gemm(s, b, a, True),
}


def check(k: HandKernel, sc: Scenario, before: np.ndarray, after: np.ndarray) -> dict:
    fn = CHECKS.get(k.check)
    if fn is None:
        return {"status": "not determined", "detail": "this kernel's output is not checked"}
    ok, detail = fn(sc, before, after)
    return {"status": "passed" if ok else "failed", "detail": f"{k.check}: {detail}"}


__all__ = ["HandKernel", "manifest", "for_scenario", "launch_spec", "initial_bytes", "check", "scenario_of"]
