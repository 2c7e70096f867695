"""The SASS profiles of a results file: ``fill`` adds each timed kernel's static profile
(``viz.toolchain.sass.profile_of``) to a ``warpviz bench`` results file, ``accuracy`` compares the
warp instructions counted from them with the measured ones.

``python -m viz.gpu.sass_results fill RESULTS --out OUT``, ``table RESULTS [--markdown]``,
``show FILE`` (a .cu or .cubin: the profile of each function).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..toolchain.sass import check_profile, dynamic_instructions, engine_counts, kernel_profile, profiles_of_cubin


def timed_entries(doc: dict):
    """Every timed launch of a results file, as ``bench`` made it: yields (where, entry's
    timing table, kernel source, function, a function returning (Analysis, scale factor)).
    ``where`` is ("scenarios" | "kernels", name) or ("sweeps", "name:value")."""
    from ..scenario import load, with_params
    from . import handwritten
    from .bench import SWEEPS, sweep_base
    from .codegen import kernel_name
    from .codegen import generate
    from .plan import plan_scale
    from .predict import analysis_of, limits_of

    limits = limits_of(doc["device"])

    def scenario_item(sc, kname, replicas=None):
        scale = plan_scale(sc, limits, replicas=replicas)

        def analysis():
            an, blocks = analysis_of(scale.scenario)
            return an, scale.replicas * blocks / an.scenario.launch.blocks
        return generate(scale.scenario, name=kname).source, kname, analysis

    for i, (name, e) in enumerate((doc.get("scenarios") or {}).items()):
        t = e.get("timing")
        if isinstance(t, dict) and "median_ms" in t:
            yield (("scenarios", name), t, *scenario_item(load(name), kernel_name(i, name)))
    hand = {k.name: k for k in handwritten.manifest()}
    for name, e in (doc.get("kernels") or {}).items():
        t = e.get("timing")
        if isinstance(t, dict) and "median_ms" in t and name in hand:
            k = hand[name]

            def analysis(k=k):
                an, blocks = analysis_of(handwritten.scenario_of(k, True))
                return an, blocks / an.scenario.launch.blocks
            yield ("kernels", name), t, handwritten.file_source(k.file), k.function, analysis
    for name, sw in (doc.get("sweeps") or {}).items():
        spec = SWEEPS.get(name)
        if not spec or "scenarios" in spec:
            continue
        for pt in sw.get("points", []):
            t = pt.get("timing")
            if not isinstance(t, dict) or "median_ms" not in t:
                continue
            sc = with_params(sweep_base(spec), {spec["param"]: pt["value"]})
            replicas = (t.get("scale") or {}).get("replicas")
            kname = f"wv_sweep_{name.replace('-', '_')}_{pt['value']}"
            yield (("sweeps", f"{name}:{pt['value']}"), t, *scenario_item(sc, kname, replicas))


def fill(doc: dict, log=print) -> dict:
    """Adds the SASS profile of every timed kernel to ``timing.resources.sass`` (compiling
    each as the bench did); returns {"filled": n, "failed": [(where, why)]}. Raises
    GpuUnavailable without nvcc and RuntimeError without cuobjdump / nvdisasm."""
    from ..toolchain.compile import CompileError, find_tool

    if not (find_tool("cuobjdump") or find_tool("nvdisasm")):
        raise RuntimeError("neither cuobjdump nor nvdisasm was found: put the CUDA toolkit's bin folder (or the "
                           "nvidia-cuda-cuobjdump wheel's) on the PATH")
    filled, failed = 0, []
    for where, t, source, function, _an in timed_entries(doc):
        try:
            prof = kernel_profile(source, function)
        except CompileError as err:
            failed.append((where, f"does not compile: {err.log[-200:]}"))
            continue
        if prof is None:
            failed.append((where, f"no SASS of function {function} (the disassembler failed or the cubin lacks it)"))
            continue
        res = t.setdefault("resources", {})
        res["sass"] = prof
        filled += 1
        log(f"  {where[0]}/{where[1]}: {len(prof['regions'])} regions, {prof['static_instructions']} instructions")
    return {"filled": filled, "failed": failed}


def accuracy(doc: dict) -> list[dict]:
    """Per timed entry with a profile: the SASS-based warp instructions, the shape estimate
    the file's prediction used before (when recorded) and the measured ``smsp__inst_executed``
    (``bottleneck.warp_instructions``, when measured)."""
    from . import costmodel

    rows = []
    for where, t, _src, _fn, analysis in timed_entries(doc):
        prof = (t.get("resources") or {}).get("sass")
        if not prof:
            continue
        an, f = analysis()
        counts, warps = engine_counts(an)
        est = dynamic_instructions(check_profile(prof), {k: v * f for k, v in counts.items()}, warps * f)
        section, name = where
        entry = (doc.get(section) or {}).get(name) if section != "sweeps" else None
        measured = ((entry or {}).get("bottleneck") or {}).get("warp_instructions")
        rows.append({"section": section, "name": name, "sass": round(est.instructions),
                     "shape": round(costmodel.estimate_instructions(an, section != "kernels") * f),
                     "measured": measured, "residual": round(est.residual),
                     "ratio": round(est.instructions / measured, 4) if measured else None})
    return rows


def _table(rows: list[dict], markdown: bool) -> str:
    ms = [r for r in rows if r["measured"]]
    within = lambda tol, key: sum(1 for r in ms if abs(r[key] / r["measured"] - 1) <= tol)  # noqa: E731
    out = []
    if markdown:
        out.append("| entry | from the SASS | from the shape | measured | SASS / measured |")
        out.append("|---|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: -abs(r["ratio"] - 1) if r["ratio"] else 0):
        m = f"{r['measured']:,}" if r["measured"] else "-"
        q = f"{r['ratio']:.3f}" if r["ratio"] else "-"
        if markdown:
            out.append(f"| {r['section']}/{r['name']} | {r['sass']:,} | {r['shape']:,} | {m} | {q} |")
        else:
            out.append(f"{r['section'] + '/' + r['name']:48s} {r['sass']:>15,} {r['shape']:>15,} {m:>15} {q:>7}")
    out.append("")
    out.append(f"{len(ms)} measured entries: from the SASS {within(0.01, 'sass')} within 1%, "
               f"{within(0.05, 'sass')} within 5%, {within(0.1, 'sass')} within 10%; from the shape "
               f"{within(0.1, 'shape')} within 10%")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m viz.gpu.sass_results fill RESULTS --out OUT`` (add the profiles),
    ``table RESULTS [--markdown]`` (SASS-based count vs measured) or ``show FILE`` (a .cu
    or .cubin: the profile of each function)."""
    import argparse
    import sys

    from . import GpuUnavailable

    ap = argparse.ArgumentParser(prog="python -m viz.gpu.sass_results")
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fill", help="add each timed kernel's SASS profile to a results file")
    f.add_argument("results")
    f.add_argument("--out", required=True)
    t = sub.add_parser("table", help="warp instructions from the SASS profiles vs measured")
    t.add_argument("results")
    t.add_argument("--markdown", action="store_true")
    s = sub.add_parser("show", help="the SASS profile of each function of a .cu or .cubin file")
    s.add_argument("file")
    a = ap.parse_args(argv)
    from . import results

    from ..fileio import read_bytes_limited, read_text_limited

    try:
        if a.cmd == "show":
            path = Path(a.file)
            if path.suffix == ".cu":
                from ..toolchain.compile import compile_cubin

                cubin = compile_cubin(read_text_limited(path, 8 << 20, "CUDA source"))
            else:
                cubin = read_bytes_limited(path, 256 << 20, "cubin")
            profs = profiles_of_cubin(cubin)
            if profs is None:
                print("warpviz: neither cuobjdump nor nvdisasm was found (or it could not read the file)",
                      file=sys.stderr)
                return 2
            print(json.dumps(profs, indent=1))
            return 0
        doc = results.load(a.results)
        if a.cmd == "fill":
            got = fill(doc)
            results.save(doc, a.out)      # atomic: a failed fill leaves no half-written file
            print(f"sass fill: {got['filled']} profiles added, {len(got['failed'])} failed; wrote {a.out}")
            for where, why in got["failed"]:
                print(f"  {where[0]}/{where[1]}: {why}")
            return 0 if not got["failed"] else 1
        print(_table(accuracy(doc), a.markdown))
        return 0
    except (OSError, ValueError, RuntimeError, GpuUnavailable) as err:
        print(f"warpviz: {getattr(err, 'reason', None) or err}", file=sys.stderr)
        return 2


__all__ = ["timed_entries", "fill", "accuracy", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
