"""Write kernels/NAME.launch.toml for every kernel of kernels/manifest.toml.

Each launch file runs the kernel at its scenario's own launch (the scenario's block, grid,
params and array sizes), so its trace is small and its counters are the ones the
built-in scenario predicts. Run from the repository root: python tools/trace/make_kernel_launches.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from viz.gpu.handwritten import manifest  # noqa: E402
from viz.gpu.plan import const_value  # noqa: E402
from viz.scenario import load  # noqa: E402

OUT = Path("kernels")
BUFFER = {"float": "float*", "int": "int*", "char": "char*", "short": "short*", "double": "double*",
          "half": "half*", "int2": "int2*", "int4": "int4*", "float2": "float2*", "float4": "float4*"}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for k in manifest():
        sc = load(k.scenario)
        arrays = {a.name: a for a in sc.arrays if a.space == "global"}
        # the file's name: the entry's own (`launch`) where it says what the launch shows, else the
        # kernel's name ("@" of a function timed for several scenarios written "--")
        name = k.launch or k.name.replace("@", "--")
        lines = ["# Written by tools/trace/make_kernel_launches.py from kernels/manifest.toml:",
                 f"# the kernel `{k.function}` at the launch of the built-in scenario `{k.scenario}`.",
                 "format = 1", f'title = "{k.launch or k.function} ({sc.title})"', f'source = "{k.file}"',
                 f'kernel = "{k.function}"', f"block = {list(sc.launch.block)}", f"grid = {list(sc.launch.grid)}"]
        shared = const_value(k.shared, dict(sc.params), "shared")
        if shared:
            lines.append(f"shared_bytes = {shared}")
        for a in k.args:
            lines.append("")
            lines.append("[[arg]]")
            if a == "sink":
                lines += ['type = "float*"', "count = 64", 'fill = "zero"']
            elif a in arrays:
                arr = arrays[a]
                t = BUFFER.get(arr.type.name)
                if t is None:
                    lines += ['type = "void*"', f"count = {arr.nbytes + arr.offset}"]
                else:
                    lines += [f'type = "{t}"', f"count = {(arr.nbytes + arr.offset) // arr.type.size}"]
                lines.append('fill = "random"')
            elif a in sc.params:
                lines += ['type = "int"', f"value = {int(sc.params[a])}"]
            else:
                lines += ['type = "int"', f"value = {int(a, 0)}"]
        (OUT / f"{name}.launch.toml").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(manifest())} launch files in {OUT}")


if __name__ == "__main__":
    main()
