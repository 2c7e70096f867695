"""`warpviz replay TRACE` and `warpviz suggest TRACE` (viz.trace.replay; docs/guide/fix-a-conflict.md).

No GPU: the replay is counted by the trace's own analysis, and ``suggest`` ranks layouts by the
cost model's prediction of the replayed trace (``viz.gpu.predict.predict_trace``, pure numpy).
"""

from __future__ import annotations

import json
import sys

from ..argcheck import to_int
from ..trace import TraceError


def add_parser(sub) -> None:
    rp = sub.add_parser("replay", help="count a trace again with one shared array laid out differently "
                        "(pad, XOR, CuTe swizzle, diagonal, bit reversal, an expression)")
    rp.add_argument("trace", metavar="TRACE", help="a .wvtrace file, or a shipped trace's name")
    rp.add_argument("--array", metavar="NAME", help="the __shared__ array, as the source names it")
    rp.add_argument("--range", metavar="START:END", dest="byte_range",
                    help="the array by its byte offsets in the shared window (dynamic shared memory, a PTX kernel)")
    rp.add_argument("--shape", metavar="ROWS,COLS", help="the array's logical rows and columns (default: its "
                    "declaration's, when 2-D)")
    rp.add_argument("--elem-bytes", metavar="N", help="bytes per element (default: the declared type's)")
    rp.add_argument("--layout", metavar="LAYOUT", required=True,
                    help="pad:N | xor | xor:MASK | swizzle:B,M,S | diag | bitrev | expr:EXPR (over r, c)")
    rp.add_argument("--json", action="store_true", help="the analyze document of the replayed trace, with `replay`")
    sg = sub.add_parser("suggest", help="find the shared arrays whose bank conflicts cost most and the layouts "
                        "that remove them, with the source change")
    sg.add_argument("trace", metavar="TRACE", help="a .wvtrace file, or a shipped trace's name")
    sg.add_argument("--array", metavar="NAME", help="only this __shared__ array")
    sg.add_argument("--range", metavar="START:END", dest="byte_range", help="an array by its byte range")
    sg.add_argument("--shape", metavar="ROWS,COLS", help="the array's logical shape")
    sg.add_argument("--elem-bytes", metavar="N", help="bytes per element")
    sg.add_argument("--top", metavar="N", default="5", help="layouts shown per array, the best of each family (1..20, default 5)")
    sg.add_argument("--no-predict", action="store_true", help="rank by wavefronts only (no cost model)")
    sg.add_argument("--json", action="store_true", help="print the suggestions as JSON")


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def _options(args):
    """(trace, shape, elem_bytes, range): every option checked; ValueError/TraceError with the message."""
    from ..assets import trace_argument
    from ..trace import tracefile
    from ..trace.replay import MAX_ELEMENTS, parse_range

    shape = None
    if args.shape is not None:
        parts = str(args.shape).split(",")
        if len(parts) != 2:
            raise ValueError(f"--shape {str(args.shape)[:40]!r}: give ROWS,COLS, e.g. --shape 32,32")
        shape = (to_int(parts[0], "--shape ROWS", 1, MAX_ELEMENTS), to_int(parts[1], "--shape COLS", 1, MAX_ELEMENTS))
    eb = None if args.elem_bytes is None else to_int(args.elem_bytes, "--elem-bytes", 1, 256)
    rng = None if args.byte_range is None else parse_range(args.byte_range)
    if args.array is not None and (not args.array.strip() or len(args.array) > 200):
        raise ValueError("--array: give the name of a __shared__ array (1 to 200 characters)")
    path = trace_argument(args.trace) or args.trace
    return tracefile.load(path), shape, eb, rng


def cmd_replay(args) -> int:
    from ..trace.analysis import to_json, to_table
    from ..trace.replay import replay, shared_wavefronts

    try:
        trace, shape, eb, rng = _options(args)
        rp = replay(trace, args.array, shape, eb, args.layout, rng)
        an = rp.analysis
    except (TraceError, ValueError) as err:
        return _fail(str(err))
    before = shared_wavefronts(rp.before)
    after = shared_wavefronts(an)
    if args.json:
        doc = to_json(an)
        doc["replay"] = dict(rp.summary(), shared_wavefronts={"before": before, "after": after},
                             metrics_before=rp.before.metrics, other_metrics_before=rp.before.other_metrics)
        print(json.dumps(doc, indent=2))
        return 0
    print(to_table(an))
    s = rp.summary()
    print()
    print(f"replay: `{rp.array.name}` ({rp.array.declared}) as {rp.layout.rows} x {rp.layout.cols} of "
          f"{rp.elem_bytes}-byte elements, layout {rp.layout.text}")
    print(f"  shared wavefronts: {before:,} -> {after:,}")
    for name, v in an.other_metrics.items():       # a kind's own counters the layout changed (wgmma's gmma reads)
        was = rp.before.other_metrics.get(name, 0)
        if v != was:
            print(f"  {name}: {was:,} -> {v:,}")
    ob, oa = rp.occupancy_before, rp.occupancy_after
    print(f"  shared memory per block: {rp.shared_before:,} -> {rp.shared_after:,} bytes; blocks per SM: "
          f"{ob['blocks']} -> {oa['blocks']} (shared memory allows {ob['by_shared']} -> {oa['by_shared']}; "
          f"{oa['shared_per_sm'] // 1024} KiB per SM)")
    for m in s["moved"]:
        print(f"  `{m['name']}` moves from byte {m['from']} to {m['to']}")
    for n in s["notes"]:
        print(f"  note: {n}")
    return 0


def _predictor(trace):
    """Replay (or None: the original) -> predicted seconds, or None where the model refuses."""
    from .predict import predict_trace

    def predict(rp):
        try:
            t = trace if rp is None else rp.trace
            res = None if rp is None else {"shared_bytes": rp.shared_after}
            return float(predict_trace(t, resources=res).seconds)
        except (TraceError, ValueError, KeyError, ZeroDivisionError):
            return None
    return predict


def cmd_suggest(args) -> int:
    from ..trace.replay import suggest

    try:
        trace, shape, eb, rng = _options(args)
        top = to_int(args.top, "--top", 1, 20)
        doc = suggest(trace, args.array, shape, eb, rng, None if args.no_predict else _predictor(trace), top)
    except (TraceError, ValueError) as err:
        return _fail(str(err))
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    for line in suggest_lines(doc):
        print(line)
    return 0


def suggest_lines(doc: dict) -> list[str]:
    out = [f"{doc['kernel']}: {doc['shared_wavefronts']:,} shared wavefronts, {doc['conflicts']:,} of them "
           f"bank conflicts"]
    for h in doc["hot"]:
        lines = ", ".join(f"line {x['line']} ({x['conflicts']:,})" for x in h["lines"][:4]) or "none"
        out.append(f"  `{h['array']}`: {h['wavefronts']:,} wavefronts, {h['conflicts']:,} conflicts; lines: {lines}")
    if not doc["arrays"]:
        out.append("no shared array with bank conflicts: nothing to suggest")
    for a in doc["arrays"]:
        out.append("")
        out.append(f"`{a['array']}` ({a['declared']}), {a['shape']} of {a['elem_bytes']}-byte elements"
                   f" — ranked by {doc['ranked_by']}:")
        if a.get("note"):
            out.append(f"  {a['note']}")
        if a.get("baseline_seconds"):
            out.append(f"  now: predicted {a['baseline_seconds'] * 1e6:.2f} us")
        for k, c in enumerate(a["candidates"], 1):
            t = f", predicted {c['predicted_seconds'] * 1e6:.2f} us" if c.get("predicted_seconds") else ""
            split = f", splits {c['split_lanes']:,} vector lane accesses" if c["split_lanes"] else ""
            out.append(f"  {k}. {c['layout']}: {c['shared_wavefronts']:,} wavefronts ({c['conflicts']:,} conflicts), "
                       f"+{c['extra_shared_bytes']:,} bytes, {c['blocks_per_sm']} blocks/SM{t}{split}")
            cu = c["source"]["cuda"]
            out.append(f"       {cu['declaration']}")
            out.append(f"       {cu['index']}")
            if "triton" in c["source"]:
                tt = c["source"]["triton"]
                out.append("       Triton: " + ", ".join(f"{k}={v}" for k, v in tt.items() if k != "note"))
    return out


__all__ = ["add_parser", "cmd_replay", "cmd_suggest", "suggest_lines"]
