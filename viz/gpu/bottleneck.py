"""The measured bottleneck of every timed launch: Nsight Compute on the launch that was timed.

``bench`` times each built-in scenario's generated kernel and each ``kernels/`` entry at
a scaled size (``viz.gpu.plan``). This module profiles exactly those launches
(``bench.timed_launches``: same cubin, grid, replicas and buffer size) with the
Speed-of-Light, LaunchStats, Occupancy and WarpStateStats sections plus
``ncu.BOTTLENECK_METRICS`` (DRAM bytes, L1/L2 hit rates and sectors, shared wavefronts,
stall reasons), a few batches of launches per ncu process, at the GPU's own clocks
(``--clock-control none``, as the timed runs). Two steps, so the device script can check
metric names against the device's own ncu before asking (ncu stops at an unknown one)::

    python -m viz.gpu.bottleneck prep DIR [--query-all F] [--query-base F] [--sections F] [--sweeps]
    ... ncu -o DIR/batch-K ... python -m viz.gpu.ncu_driver DIR/batch-K.json
    ... ncu -i DIR/batch-K.ncu-rep --page raw --csv --print-units base > DIR/batch-K.raw.csv
    python -m viz.gpu.bottleneck collect DIR --out bottlenecks.json

``prep`` writes the batches' launch specs, ``metrics.txt`` (the names ncu knows),
``missing.txt``, ``sections.txt`` and ``cubins/`` (for ``cuobjdump --dump-resource-usage``);
``collect`` turns the raw CSVs into ``{"entries": {"scenario:NAME" | "kernel:NAME" |
"sweep:NAME:V": {"summary": ncu.summarize(...), "raw": {...}}}}``. Nothing here imports
PyCUDA.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import ncu

FORMAT = "warpviz-bottlenecks"
BATCH = 30
VERSION = 1


def _items():
    from ..scenario import runnable_builtins

    return [(sc.name or n, sc) for n, sc in runnable_builtins()]   # as ``warpviz bench --all``


def prep(outdir: Path, query_all: str = "", query_base: str = "", sections_text: str = "",
         sweeps: bool = False, limits=None, items=None, hand_kernels: bool = True) -> dict:
    from .bench import timed_launches
    from .plan import DeviceLimits

    outdir.mkdir(parents=True, exist_ok=True)
    limits = limits or DeviceLimits()
    launches = timed_launches(items if items is not None else _items(), limits, hand_kernels, sweeps)
    ok, missing = ncu.choose_metrics(ncu.BOTTLENECK_METRICS, query_all, query_base)
    if not query_all and not query_base:
        ok, missing = list(ncu.BOTTLENECK_METRICS), []   # dry mode: nothing to check against
    sections = [s for s in ncu.BOTTLENECK_SECTIONS if not sections_text or s in sections_text.split()]
    (outdir / "metrics.txt").write_text(",".join(ok) + "\n")
    (outdir / "missing.txt").write_text("\n".join(missing) + ("\n" if missing else ""))
    (outdir / "sections.txt").write_text(" ".join(f"--section {s}" for s in sections) + "\n")
    cub = outdir / "cubins"
    cub.mkdir(exist_ok=True)
    batches: dict[str, list] = {}
    index = []
    kinds = ("scenario", "kernel", "sweep")
    count = {k: sum(1 for d in launches if d["kind"] == k and d.get("spec") is not None) for k in kinds}
    seen = dict.fromkeys(kinds, 0)
    for d in launches:
        if d.get("spec") is None:
            index.append({"kind": d["kind"], "label": d["label"], "error": d.get("error")})
            continue
        spec = d["spec"]
        # At most BATCH launches per ncu process: one that runs out of time loses only its batch.
        parts = -(-count[d["kind"]] // BATCH)
        per = -(-count[d["kind"]] // parts)
        batch = f"batch-{kinds.index(d['kind']) + 1}{'abcdefgh'[seen[d['kind']] // per]}"
        seen[d["kind"]] += 1
        batches.setdefault(batch, []).append(spec.to_json())
        (cub / f"{spec.name}.cubin").write_bytes(spec.cubin)
        index.append({"kind": d["kind"], "label": d["label"], "batch": batch, "name": spec.name,
                      "grid": list(spec.grid), "block": list(spec.block), "shared": spec.shared,
                      "buffer_bytes": spec.buffer_bytes, "buffer_sets": d.get("buffer_sets"),
                      **({"sweep": d["sweep"], "value": d["value"]} if d["kind"] == "sweep" else {})})
    for b, ls in batches.items():
        (outdir / f"{b}.json").write_text(json.dumps({"mode": "timed", "launches": ls}))
    summary = {"batches": {b: len(ls) for b, ls in sorted(batches.items())}, "metrics": len(ok),
               "missing": missing, "sections": sections, "launches": index}
    (outdir / "index.json").write_text(json.dumps(summary, indent=1))
    return summary


def key(kind: str, label: str) -> str:
    return f"{kind}:{label}"


def collect(outdir: Path) -> dict:
    index = json.loads((outdir / "index.json").read_text())
    entries: dict[str, dict] = {}
    by_batch: dict[str, list] = {}
    for e in index["launches"]:
        if e.get("batch"):
            by_batch.setdefault(e["batch"], []).append(e)
        else:
            entries[key(e["kind"], e["label"])] = {"error": e.get("error")}
    notes = []
    for b, es in sorted(by_batch.items()):
        raw_path = outdir / f"{b}.raw.csv"
        profiled = ncu.parse_raw(raw_path.read_text(errors="replace")) if raw_path.is_file() else []
        if not profiled:
            notes.append(f"{b}: no profile ({raw_path.name} missing or empty)")
        got = ncu.match_launches([e["name"] for e in es], profiled)
        for e, m in zip(es, got):
            k = key(e["kind"], e["label"])
            if m is None:
                entries[k] = {"error": "not profiled (ncu timed out or the launch failed)", "launch": e}
                continue
            m = {a: v for a, v in m.items() if a != "_id"}
            entries[k] = {"summary": ncu.summarize(m), "launch": e, "raw": m}
    return {"format": FORMAT, "version": VERSION, "metrics_missing": index.get("missing", []),
            "sections": index.get("sections", []), "notes": notes, "entries": entries}


def carry_counters(doc: dict, old: dict) -> int:
    """Nsight Compute's data of an earlier results file of the same launches (same scenarios,
    scale and kernels) for the entries ``doc`` timed without counters: the counters and
    their comparison with the model, and the measured bottleneck (with the DRAM columns it
    gives, over ``doc``'s own median). Returns how many entries got them; the file says so
    in ``counters_note``. An entry whose launch scale differs keeps none."""
    from . import results

    memcpy = ((doc.get("ceiling") or {}).get("memcpy_d2d") or {}).get("gbps")
    n = 0
    for section in ("scenarios", "kernels"):
        for name, e in (doc.get(section) or {}).items():
            o = (old.get(section) or {}).get(name)
            if not isinstance(o, dict) or not isinstance(e, dict):
                continue
            same = (e.get("timing") or {}).get("scale") == (o.get("timing") or {}).get("scale")
            if not same:
                continue
            if e.get("counters") is None and o.get("counters") is not None:
                for key in ("counters", "match", "mismatches"):
                    if key in o:
                        e[key] = o[key]
            if "bottleneck" not in e and o.get("bottleneck"):
                results.apply_bottleneck(e, o["bottleneck"], memcpy)
            n += 1
    for name, sw in (doc.get("sweeps") or {}).items():
        opts = {str(p.get("value")): p for p in ((old.get("sweeps") or {}).get(name) or {}).get("points", [])}
        for pt in sw.get("points", []):
            o = opts.get(str(pt.get("value")))
            if o and o.get("bottleneck") and "bottleneck" not in pt:
                pt["bottleneck"] = o["bottleneck"]
    doc["counters_note"] = (f"Nsight Compute data (counters, bottlenecks) of {n} entries are from the same "
                            f"launches in the results file of {old.get('measured_at', '?')}; the timings are "
                            f"this file's")
    return n


def carry_validate_counters(doc: dict, probe_docs: list[tuple[str, dict]]) -> list[str]:
    """The Nsight Compute counters of built-ins that ``doc`` timed without counters, from
    the files of their own validate runs (``h100-kinds-*.json``: ``validate`` and
    ``validate_tma``; ``h100-ldmatrix-*.json``: ``validate``), compared with the model as
    ``bench`` compares them. Returns the names; ``counters_note`` says where they are from."""
    from . import results

    found: dict[str, tuple[str, dict]] = {}
    for fname, pd in probe_docs:
        for key in ("validate", "validate_tma"):
            for name, v in ((pd.get(key) or {}).get("scenarios") or {}).items():
                hw = v.get("hardware") if isinstance(v, dict) and "hardware" in v else v
                if isinstance(hw, dict) and hw:
                    found.setdefault(name, (fname, hw))
    done = []
    for name, e in (doc.get("scenarios") or {}).items():
        if e.get("counters") is None and name in found and e.get("model"):
            e["counters"] = dict(found[name][1])
            e["mismatches"] = results.mismatches(e)
            e["match"] = not e["mismatches"]
            done.append(name)
    if done:
        files = sorted({found[n][0] for n in done})
        doc["counters_note"] = (doc.get("counters_note", "") + ("; " if doc.get("counters_note") else "")
                                + f"the counters of {', '.join(done)} are from their validate runs in "
                                + ", ".join(files))
    return done


def merge(doc: dict, bdoc: dict | None, repredict: bool = True, device=None) -> dict:
    """Attach measured bottlenecks (``collect``'s document) to a results file's timed
    entries and, with ``repredict``, recompute every prediction with today's cost model
    (``viz.gpu.predict``), sweeps included. Returns the document (version 2)."""
    from . import costmodel, results
    from .predict import predict_document

    memcpy = ((doc.get("ceiling") or {}).get("memcpy_d2d") or {}).get("gbps")
    if bdoc:
        n = 0
        for k, e in (bdoc.get("entries") or {}).items():
            if e.get("raw"):
                e = dict(e, summary=ncu.summarize(e["raw"]))     # today's summary of the raw counters
            kind, _, label = k.partition(":")
            section = {"scenario": "scenarios", "kernel": "kernels"}.get(kind)
            entry = (doc.get(section) or {}).get(label) if section else None
            if entry is not None and e.get("summary"):
                results.apply_bottleneck(entry, e["summary"], memcpy)
                n += 1
            elif kind == "sweep" and e.get("summary"):
                name, _, value = label.partition(":")
                for pt in ((doc.get("sweeps") or {}).get(name) or {}).get("points", []):
                    if str(pt.get("value")) == value:
                        pt["bottleneck"] = e["summary"]
        doc["bottleneck_note"] = ("Nsight Compute on each timed launch (same grid, replicas and buffer), at the "
                                  f"GPU's own clocks, caches flushed before each pass; {n} entries")
    if repredict:
        device = device or costmodel.DeviceModel.from_device(doc["device"], memcpy)
        # Through the recorded figures, so the file's predictions can be recomputed from it alone.
        device = costmodel.DeviceModel.from_figures(doc["device"].get("name", "GPU"), device.figures())
        for (section, name), (p, res) in predict_document(doc, device).items():
            doc[section][name]["timing"]["predicted"] = p.as_dict()
            doc[section][name]["timing"]["resources"] = res.as_dict()
        _repredict_sweeps(doc, device)
        doc["cost_model"] = device.figures()
    doc["version"] = results.VERSION
    return doc


def _repredict_sweeps(doc: dict, device) -> None:
    from ..scenario import with_params
    from .bench import SWEEPS, sweep_base
    from .predict import limits_of, predict_scenario

    limits = limits_of(doc["device"])
    for name, sweep in (doc.get("sweeps") or {}).items():
        spec = SWEEPS.get(name)
        if not spec:
            continue
        for pt in sweep.get("points", []):
            if "scenarios" in spec:
                e = (doc.get("scenarios") or {}).get(pt.get("value")) or {}
                pt["predicted_ms"] = ((e.get("timing") or {}).get("predicted") or {}).get("ms")
                continue
            sc = with_params(sweep_base(spec), {spec["param"]: pt["value"]})
            replicas = ((pt.get("timing") or {}).get("scale") or {}).get("replicas")
            kname = f"wv_sweep_{name.replace('-', '_')}_{pt['value']}"
            p, res = predict_scenario(sc, device, limits, kname, replicas=replicas)
            pt["predicted_ms"] = round(p.ms, 6)
            if isinstance(pt.get("timing"), dict):
                pt["timing"]["predicted"] = p.as_dict()
                pt["timing"]["resources"] = res.as_dict()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m viz.gpu.bottleneck")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep")
    p.add_argument("dir")
    p.add_argument("--query-all", default=None)
    p.add_argument("--query-base", default=None)
    p.add_argument("--sections", default=None)
    p.add_argument("--sweeps", action="store_true")
    c = sub.add_parser("collect")
    c.add_argument("dir")
    c.add_argument("--out", required=True)
    m = sub.add_parser("merge", help="attach bottlenecks to a results file and recompute its predictions")
    m.add_argument("results")
    m.add_argument("--bottlenecks", default=None)
    m.add_argument("--out", required=True)
    m.add_argument("--no-repredict", action="store_true")
    m.add_argument("--calibration", default=None, help="a calibration file (default: the installed one)")
    m.add_argument("--validate-counters", nargs="*", default=[], metavar="FILE",
                   help="validate-run files (h100-kinds-*.json, h100-ldmatrix-*.json): counters for the built-ins "
                        "timed without them")
    m.add_argument("--counters-from", default=None, metavar="FILE",
                   help="an earlier results file of the same launches: its Nsight Compute data (counters and "
                        "bottlenecks) for the entries this one measured without them (bench --no-counters)")
    a = ap.parse_args(argv)
    if a.cmd == "merge":
        from . import results

        doc = results.load(a.results)
        from ..fileio import read_json_limited

        bdoc = read_json_limited(a.bottlenecks, results.MAX_RESULTS_BYTES, "bottleneck file") if a.bottlenecks else None
        if a.counters_from:
            carry_counters(doc, results.load(a.counters_from))
        if a.validate_counters:
            carry_validate_counters(doc, [(Path(f).name, read_json_limited(f, results.MAX_RESULTS_BYTES, "counters file"))
                                          for f in a.validate_counters])
        device = None
        if a.calibration:
            from .predict import device_with_calibration

            device = device_with_calibration(doc, a.calibration)
        results.save(merge(doc, bdoc, not a.no_repredict, device), a.out)
        print(f"bottleneck merge: wrote {a.out}")
        return 0

    def read(f):
        return Path(f).read_text(errors="replace") if f and Path(f).is_file() else ""

    if a.cmd == "prep":
        s = prep(Path(a.dir), read(a.query_all), read(a.query_base), read(a.sections), a.sweeps)
        print(f"bottleneck prep: batches {s['batches']}, {s['metrics']} metrics, "
              f"missing {len(s['missing'])}: {' '.join(s['missing'][:12])}; sections {' '.join(s['sections'])}")
        return 0
    doc = collect(Path(a.dir))
    from ..fileio import write_atomic

    write_atomic(a.out, json.dumps(doc, indent=1))      # a results file: whole or not at all
    ok = sum(1 for e in doc["entries"].values() if "summary" in e)
    print(f"bottleneck collect: {ok} of {len(doc['entries'])} launches profiled; {'; '.join(doc['notes'])}")
    for k, e in doc["entries"].items():
        s = e.get("summary")
        if s:
            b = s.get("bound") or {}
            print(f"  {k:45s} {s.get('duration_ms')} ms  {b.get('unit')} {b.get('pct_of_peak')}%  "
                  f"dram {((s.get('dram_bytes_read') or 0) + (s.get('dram_bytes_write') or 0)) / 1e6:.1f} MB  "
                  f"L2 hit {s.get('l2_hit_pct')}  regs {s.get('registers_per_thread')}  "
                  f"stalls {','.join(x['reason'] for x in s['stalls'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
