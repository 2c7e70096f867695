#!/usr/bin/env python3
"""Every figure warpviz gives without a GPU, written to a folder, so that a refactor can be
shown to change none of them.

    python tools/figures_snapshot.py dump DIR      # write the snapshot
    python tools/figures_snapshot.py compare A B   # exit 1 and list the files that differ

The snapshot holds, for every built-in scenario, ``warpviz analyze NAME`` (text and
``--json``), its generated CUDA (``viz.gpu.codegen.generate``, with its shared bytes, tensor
maps and expected instructions) and the cost model's prediction of it; for 30 random plain,
30 random ldmatrix and 40 random kind scenarios (fixed seeds), their generated CUDA and
metrics; and for every shipped trace (assets/traces), ``warpviz analyze FILE`` (text and
``--json``) and the cost model's prediction. Run it with the tree to check first on the path
(``PYTHONPATH=$PWD``). It writes only inside DIR, which must not exist yet or be empty.
"""

from __future__ import annotations

import contextlib
import filecmp
import io
import json
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cli(out: Path, name: str, args: list[str]) -> None:
    from viz.cli import main

    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            rc = main(args)
        except SystemExit as ex:
            rc = ex.code
    (out / name).write_text(f"rc={rc}\n{o.getvalue()}\n--stderr--\n{e.getvalue()}")


def _last_line() -> str:
    return traceback.format_exc().splitlines()[-1]


def _prediction(p) -> str:
    return json.dumps(p.as_dict(), sort_keys=True, indent=1, default=str)


def dump(out: Path) -> int:
    from viz.engine import analyze
    from viz.gpu import codegen, costmodel, randomgen, randomkinds
    from viz.gpu.predict import predict_trace
    from viz.scenario import builtin_names, load

    if out.exists() and any(out.iterdir()):
        print(f"{out} is not empty: give a new folder", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for n in builtin_names():
        _cli(out, f"sc-{n}.json", ["analyze", n, "--json"])
        _cli(out, f"sc-{n}.txt", ["analyze", n])
        sc = load(n)
        try:
            g = codegen.generate(sc)
            text = g.source + "\n" + repr((g.shared_bytes, g.barriers, g.tensor_maps, g.replica_bytes)) + "\n" + \
                repr(codegen.expected_instructions(sc))
        except Exception:  # noqa: BLE001 - a refused scenario's reason is part of the snapshot
            text = _last_line()
        (out / f"cg-{n}.cu").write_text(text)
        try:
            text = _prediction(costmodel.predict_launch(costmodel.workload(analyze(sc))))
        except Exception:  # noqa: BLE001
            text = _last_line()
        (out / f"cm-{n}.json").write_text(text)
    for k in ("plain", "ldmatrix"):
        for i, (nm, sc) in enumerate(randomgen.scenarios(30, seed=7, kind=k)):
            (out / f"rnd-{k}-{i}.cu").write_text(nm + "\n" + codegen.generate(sc).source)
    for i, (nm, sc) in enumerate(randomkinds.scenarios(40, seed=11)):
        (out / f"rndk-{i}.cu").write_text(nm + "\n" + codegen.generate(sc).source
                                          + json.dumps(analyze(sc).metrics, sort_keys=True, default=str))
    for p in sorted((ROOT / "assets" / "traces").glob("*.wvtrace")):
        _cli(out, f"tr-{p.name}.json", ["analyze", str(p), "--json"])
        _cli(out, f"tr-{p.name}.txt", ["analyze", str(p)])
        try:
            text = _prediction(predict_trace(p))
        except Exception:  # noqa: BLE001
            text = _last_line()
        (out / f"tp-{p.name}.json").write_text(text)
    print(f"{len(list(out.iterdir()))} files in {out}")
    return 0


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    bad = [n for n in names if not (a / n).exists() or not (b / n).exists()
           or not filecmp.cmp(a / n, b / n, shallow=False)]
    for n in bad:
        print(f"differs: {n}")
    print(f"{len(names) - len(bad)} of {len(names)} files identical")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "dump":
        return dump(Path(argv[1]))
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
