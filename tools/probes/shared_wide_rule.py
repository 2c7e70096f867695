"""Check the refined wide-load phase rule on the H100 (run on the device machine).

The first probe set (shared_wide_phases.py) showed 8/16-byte shared loads merging phases
when lanes repeat addresses. The engine now models: an 8-byte load whose every lane pair
asks for one address is one 32-lane phase; a 16-byte load's half-warp whose every lane
quad asks for at most two addresses is one 16-lane phase. This script re-runs the first
probes against the new model and adds probes that tell the rule's variants apart
(per-half-warp vs per-warp decision, pairs vs quads for 8 bytes, conflict accounting).
Prints every probe with model and hardware figures; exit 0 when all agree.
Run: source tools/gpu/device_setup.sh; python3 tools/probes/shared_wide_rule.py [--json PATH]
No GPU: python3 tools/probes/shared_wide_rule.py --dry
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))

from shared_wide_phases import dry, probe, probes as first_probes  # noqa: E402

from viz.gpu.bench import validate  # noqa: E402

NEW = [
    ("float4", "lane < 16 ? lane/4 : lane", None),   # per-half 3, per-warp 4
    ("float4", "lane < 16 ? lane : lane/4", None),
    ("float4", "lane/4", "lane >= 16"),
    ("float4", "(lane/2)*2", None),
    ("float4", "lane%4 == 0 ? 0 : 1", None),
    ("float4", "lane%4 == 3 ? 2 : lane%2", None),      # a quad with 3 addresses
    ("float4", "lane < 8 ? 0 : lane", None),
    ("float4", "(lane/4)*8", None),
    ("int4", "lane/2", None),
    ("double", "(lane/2)*2", None),
    ("double", "lane%2", None),                        # pairs 2 addresses, quads 2
    ("float2", "lane%2", None),
    ("int2", "lane/2", None),
    ("double", "lane/2", "lane%4 != 3"),
    ("double", "lane < 16 ? lane/2 : lane", None),
    ("double", "(lane/2)*16", None),
]


def new_probes():
    return [probe(t, p, w) for t, p, w in NEW]


def main(argv):
    if argv[:1] == ["--dry"]:
        return dry(first_probes() + new_probes())
    res = validate(first_probes() + new_probes())
    rows, bad = [], 0
    for r in res:
        m = {x["metric"].split("__")[1]: (x["model"], x["hardware"]) for x in r["rows"] if "shared" in x["metric"]}
        ld = m.get("data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", (None, None))
        lc = m.get("data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", (None, None))
        st = m.get("data_pipe_lsu_wavefronts_mem_shared_op_st.sum", (None, None))
        flag = "" if r["match"] else "   <-- differs"
        bad += not r["match"]
        print(f"{r['label']:<44} ld wf {ld[0]!s:>3}/{ld[1]!s:<3} ld cf {lc[0]!s:>3}/{lc[1]!s:<3} "
              f"st wf {st[0]!s:>3}/{st[1]!s:<3}{flag}")
        rows.append({"probe": r["label"], "match": r["match"], "error": r["error"], "rows": r["rows"]})
    print(f"{len(res) - bad} of {len(res)} probes agree with the model")
    if len(argv) > 1 and argv[0] == "--json":
        Path(argv[1]).write_text(json.dumps(rows, indent=1))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
