"""The analysis' work estimate (viz.work) against the time the engine really takes.

For scenarios that stress each part of the estimate (many small instructions, the full path
over a large launch, the residue shortcut, long expressions, rev(), a when that mixes blocks
and threads), prints the estimate in lane operations, the time of viz.engine.analyze (best of
--repeat, after one warm-up run for numba) and the nanoseconds per estimated operation. The
estimate is meant to be an upper bound of the time: MAX_WORK (2 x 10^9) operations should take
at most about 7 s here, so the ns/op column should stay at or below about 3.5.
Run: .venv/bin/python benchmarks/bench_work.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from viz.engine import analyze  # noqa: E402
from viz.scenario import loads  # noqa: E402
from viz.work import MAX_WORK, estimate  # noqa: E402


def scenario(at: str, block: int, grid: int, loop: int, when: str | None = None, space: str = "global",
             n: int = 1 << 24) -> str:
    return (f"[launch]\nblock = [{block}]\ngrid = [{grid}]\n[params]\nN = {n}\n"
            f'[arrays.a]\nspace = "{space}"\ntype = "float"\nshape = [{n}]\n'
            f'[[access]]\nop = "load"\nat = "{at}"\nfor = {{ j = "0:{loop}" }}\n'
            + (f'when = "{when}"\n' if when else ""))


CASES = [
    ("13,000 one-warp instructions", scenario("a[tid]", 32, 1, 13000)),
    ("shortcut, 16 Mi threads x 8", scenario("a[blockIdx.x * 1024 + tid + j]", 1024, 16384, 8, n=1 << 25)),
    ("full path, 1 Mi threads x 16", scenario("a[(blockIdx.x ^ tid) % N]", 1024, 1024, 16)),
    ("full path, 240-node index", scenario("a[(" + " ^ ".join(["(blockIdx.x * tid)"] * 60) + ") % N]", 1024, 256, 4)),
    ("rev(), 1 Mi threads x 4", scenario("a[rev(blockIdx.x ^ tid, 22)]", 1024, 1024, 4)),
    ("mixed when, shared, 1 Mi x 8", scenario("a[(blockIdx.x ^ tid) % 1024]", 1024, 1024, 8,
                                              when="(tid ^ blockIdx.x) % 3", space="shared", n=1024)),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}; MAX_WORK = {MAX_WORK:,}")
    analyze(loads(scenario("a[tid]", 32, 1, 1)))          # numba's functions loaded once
    print(f"{'scenario':<32}{'estimate':>16}{'time':>10}{'ns/op':>8}")
    for label, text in CASES:
        sc = loads(text)
        work = estimate(sc).total
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            analyze(sc)
            best = min(best, time.perf_counter() - t)
        print(f"{label:<32}{work:>16,}{best:>9.2f}s{best / work * 1e9:>8.2f}")


if __name__ == "__main__":
    main()
