"""Scenario loading time for long files: many one-line accesses, many params.

Prints, for each size, the time ``viz.scenario.loads`` takes (parse, validate, and the work
estimate of the analysis), best of ``--repeat``:
  accesses         N one-line [[access]] tables (load a[threadIdx.x])
  params           N params NAME = integer, one access using the last
  param chain      N params, each the one before plus one ("P7 = \"P6 + 1\""), and N accesses
                   each using one of them in its index, with a two-point loop
A file of more accesses than the analysis' work bound takes on (viz.work) is refused before
they are built; the time is then the time to the refusal (marked "refused").
Run: .venv/bin/python benchmarks/bench_load.py [--repeat N] [--sizes 1000,5000,20000]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from viz.scenario import ScenarioError, loads

HEAD = '[launch]\nblock = [32]\ngrid = [1]\n[arrays.a]\ntype = "float"\nshape = [1024]\n'
ACCESS = '[[access]]\nop = "load"\nat = "a[threadIdx.x]"\n'


def accesses(n: int) -> str:
    return HEAD + ACCESS * n


def params(n: int) -> str:
    return ("[params]\n" + "".join(f"P{i} = {i}\n" for i in range(n)) + HEAD
            + f'[[access]]\nop = "load"\nat = "a[threadIdx.x + P{n - 1} - {n - 1}]"\n')


def param_chain(n: int) -> str:
    ps = "P0 = 1\n" + "".join(f'P{i} = "P{i - 1} + 1"\n' for i in range(1, n))
    body = "".join(f'[[access]]\nop = "load"\nat = "a[threadIdx.x + P{i} - P{i}]"\nfor = {{ j = "0:2" }}\n'
                   for i in range(n))
    return "[params]\n" + ps + HEAD + body


def timed(text: str, repeat: int) -> tuple[float, str]:
    best, what = float("inf"), "loaded"
    for _ in range(repeat):
        t = time.perf_counter()
        try:
            loads(text)
        except ScenarioError:
            what = "refused"
        best = min(best, time.perf_counter() - t)
    return best, what


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000,5000,20000")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'file':<14}" + "".join(f"{n:>20,}" for n in sizes))
    for label, make in (("accesses", accesses), ("params", params), ("param chain", param_chain)):
        cells = []
        for n in sizes:
            t, what = timed(make(n), args.repeat)
            cells.append(f"{t:8.3f} s {what:>8}")
        print(f"{label:<14}" + "".join(f"{c:>20}" for c in cells))


if __name__ == "__main__":
    main()
