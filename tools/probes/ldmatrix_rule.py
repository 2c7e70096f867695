"""Read the ldmatrix probe's results (ldmatrix.json) and compare every case with the model's
rule (viz.kinds.ldmatrix.warp_wavefronts: one phase per matrix, broadcast within a phase).
Runs anywhere (no GPU):  python3 tools/probes/ldmatrix_rule.py RESULTS/ldmatrix_wavefronts/ldmatrix.json
Prints the cases that differ and a summary; --table prints the evidence table (markdown).
--dry (no results needed): every case of ldmatrix_wavefronts.py with the model's own counters
must compare equal, and one changed counter must be reported."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from viz.kinds.ldmatrix import MatrixOp, warp_wavefronts  # noqa: E402

WF = {"ldsm": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
      "stsm": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"}
CF = {"ldsm": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
      "stsm": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"}
INST = {"ldsm": "sm__inst_executed_op_ldsm.sum", "stsm": "sm__inst_executed_op_shared_stsm.sum"}


def model(case: dict) -> dict[str, int]:
    op = MatrixOp("ldmatrix" if case["op"] == "ldsm" else "stmatrix", case["num"], bool(case["trans"]))
    wf = sum(warp_wavefronts(op, offs)[0] for offs in case["offsets"])
    return {WF[case["op"]]: wf, CF[case["op"]]: wf - op.num * case["warps"], INST[case["op"]]: case["warps"]}


def compare(doc: dict, table: bool = False) -> int:
    rows, bad = [], 0
    for c in doc["cases"]:
        hw = c["counters"]
        if not hw:
            continue
        m = model(c)
        diff = {k: (v, hw.get(k)) for k, v in m.items() if hw.get(k) != v}
        rows.append((c, m, hw, diff))
        if diff:
            bad += 1
            print(f"{c['name']:<44} " + "  ".join(f"{k.split('__')[1][:40]} model {a} hw {b}" for k, (a, b) in diff.items()))
    print(f"{len(rows) - bad} of {len(rows)} profiled cases equal the model on wavefronts, conflicts, instructions")
    if table:
        print("| case | wavefronts model / H100 | conflicts model / H100 |")
        print("|---|---|---|")
        for c, m, hw, _ in rows:
            print(f"| `{c['name']}` | {m[WF[c['op']]]} / {hw.get(WF[c['op']])} | {m[CF[c['op']]]} / {hw.get(CF[c['op']])} |")
    return bad


def dry() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ldmatrix_wavefronts import cases

    cs = cases()
    for c in cs:
        c["counters"] = model(c)
    assert compare({"cases": cs}) == 0
    first = cs[0]
    first["counters"] = {**first["counters"], WF[first["op"]]: first["counters"][WF[first["op"]]] + 1}
    assert compare({"cases": cs}) == 1
    print(f"dry: the rule reads all {len(cs)} cases; a changed counter is reported")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--dry":
        return dry()
    if not argv:
        print(__doc__)
        return 2
    return 0 if compare(json.loads(Path(argv[0]).read_text()), "--table" in argv) == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
