"""Probe how the H100 serves 8- and 16-byte shared accesses with repeated addresses.

The random scenarios showed wavefront counts that differ from the model's quarter-warp
(16-byte) and half-warp (8-byte) phase rule when lanes share addresses. Each probe is one
warp, one load and one store of a pattern; the output is model vs hardware wavefronts.
Run on the device: python3 tools/probes/shared_wide_phases.py [--json PATH]
No GPU: python3 tools/probes/shared_wide_phases.py --dry (every probe's scenario, its model
figures and its generated kernel)
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from viz.gpu.bench import validate
from viz.scenario import loads

PATTERNS = {
    "float4": ["lane", "lane*2", "0", "lane/8", "lane%8", "lane%4", "lane%2", "lane/2", "lane/4", "lane/16",
               "(lane%8)*8", "(lane/8)*8", "lane^8", "31-lane", "(lane%8)*2", "(lane%16)", "(lane/2)*8",
               "(lane%2)*8", "(lane/2)%8", "lane/2 + (lane%2)*16", "(lane%16)/2", "lane<16 ? 0 : 8"],
    "double": ["lane", "lane*2", "0", "lane/16", "lane%16", "lane%8", "lane/2", "(lane%16)*16", "lane^16",
               "(lane%16)*2"],
    "float2": ["0", "lane%16", "lane/2"],
}
WHENS = [None, "lane < 8", "lane % 8 == 0", "lane >= 24", "lane % 2 == 0"]


def probe(t: str, p: str, w: str | None = None):
    """(label, scenario): one warp, one load and one store of ``s[p]`` of type ``t``."""
    when = f'when = "{w}"\n' if w else ""
    label = f"{t} s[{p}]" + (f" when {w}" if w else "")
    text = f"""title = "{label}"
[launch]
block = [32]
grid = [1]
[arrays.s]
space = "shared"
type = "{t}"
shape = [1024]
[[access]]
op = "load"
at = "s[{p}]"
{when}[[access]]
op = "store"
at = "s[{p}]"
{when}"""
    return label, loads(text, source=label, name=label)


def probes():
    return [probe(t, p, w) for t, pats in PATTERNS.items() for p in pats
            for w in (WHENS if p in ("lane", "0", "lane%8", "lane%16") else [None])]


def dry(ps) -> int:
    """No GPU: every probe's scenario is analysed and its kernel generated."""
    from viz.engine import analyze
    from viz.gpu.codegen import generate

    for label, sc in ps:
        m = analyze(sc).metrics
        assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] >= 1, label
        assert "__global__" in generate(sc).source, label
    print(f"dry: {len(ps)} probes analysed and generated")
    return 0


def main(argv):
    if argv[:1] == ["--dry"]:
        return dry(probes())
    res = validate(probes())
    rows = []
    print(f"{'probe':<36} {'ld wf model':>11} {'hw':>5} {'st wf model':>11} {'hw':>5} {'ld cf':>9} {'st cf':>9}")
    for r in res:
        m = {x["metric"]: (x["model"], x["hardware"]) for x in r["rows"]}
        ld = m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", (None, None))
        st = m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", (None, None))
        lc = m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", (None, None))
        sc = m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", (None, None))
        flag = "" if r["match"] else "   <-- differs"
        print(f"{r['label']:<36} {ld[0]!s:>11} {ld[1]!s:>5} {st[0]!s:>11} {st[1]!s:>5} "
              f"{lc[0]!s:>4}/{lc[1]!s:<4} {sc[0]!s:>4}/{sc[1]!s:<4}{flag}")
        rows.append({"probe": r["label"], "match": r["match"], "error": r["error"],
                     "rows": [x for x in r["rows"] if "shared" in x["metric"]]})
    if len(argv) > 1 and argv[0] == "--json":
        with open(argv[1], "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
