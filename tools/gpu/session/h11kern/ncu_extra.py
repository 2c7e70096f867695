"""Nsight Compute counters beyond the ten, on the plain kernels (device machine, GPU + ncu):
    python3 tools/gpu/session/h11kern/ncu_extra.py OUTDIR
1. Which counters this ncu has for shared loads/stores, LDSM/STSM and LDGSTS
   (``ncu --query-metrics --chip gh100``, filtered) -> OUTDIR/ncu_metric_names.txt.
2. Those counters on the plain stmatrix_frag, ldmatrix_cpasync and cpasync_double kernels:
   does an STSM count as a shared store, in which wavefronts? -> OUTDIR/ncu_extra.json.
3. The shared-memory counters on every kernel of ldsm_variants.cu (is each `@!PT LDS` an
   executed shared load in every variant?) and of stsm_variants.cu (each stmatrix form
   alone), one ncu run -> same JSON, key "variants".
"""
import base64
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
sys.path.insert(0, str(ROOT))

FIXED = ["smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smsp__inst_executed_op_ldsm.sum",
         "smsp__inst_executed_op_ldgsts.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"]
PATTERN = re.compile(r"(stsm|ldsm|ldgsts|stmatrix|ldmatrix|mem_shared|op_shared|shared_st|shared_ld)", re.I)


def discover(out: Path) -> list[str]:
    try:
        p = subprocess.run(["ncu", "--query-metrics", "--chip", "gh100"], capture_output=True, text=True, timeout=60)
        rows = [ln.split() for ln in p.stdout.splitlines()]
        names = [r[0] for r in rows if len(r) > 1 and "__" in r[0] and PATTERN.search(r[0]) and r[1] == "Counter"]
        (out / "ncu_query_metrics.txt").write_text(p.stdout)
    except Exception as err:
        names = []
        print("query-metrics failed:", err)
    (out / "ncu_metric_names.txt").write_text("\n".join(names) + "\n")
    found = [n + ".sum" for n in names if not n.endswith((".sum", "_pct", "_ratio", ".pct"))]
    metrics = list(dict.fromkeys(FIXED + found))
    print(f"{len(names)} matching counters; profiling {len(metrics)}")
    return metrics[:90]


def spec_for(launch, cubin: bytes, kernel: str, tmp: Path) -> dict:
    import numpy as np

    from viz.trace.record import host_buffer

    buf = tmp / f"{kernel}.npy"
    np.save(buf, host_buffer(launch))
    return {"name": kernel, "cubin": base64.b64encode(cubin).decode(), "buffer": str(buf),
            "block": list(launch.block), "grid": list(launch.grid), "shared": launch.shared_bytes,
            "args": [a.as_dict() for a in launch.args], "offsets": launch.buffer_offsets()}


def main(out: Path) -> int:
    from viz.gpu.ncu import run_ncu
    from viz.trace.build import build
    from viz.trace.launch import load_launch

    out.mkdir(parents=True, exist_ok=True)
    res = {}
    metrics = discover(out)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        launches = []
        for name in ("stmatrix_frag", "ldmatrix_cpasync", "cpasync_double"):
            lf = load_launch(ROOT / "kernels" / "trace" / f"{name}.launch.toml")
            launches.append(spec_for(lf, build(lf, "sm_90").cubin, lf.kernel, tmp))
        for ms in (metrics, FIXED):       # the discovered names, else only the known ones
            try:
                counters, log = run_ncu({"launches": launches}, driver="viz.trace.ncu_driver", metrics=tuple(ms))
                res["kernels"] = {d["name"]: c for d, c in zip(launches, counters)}
                break
            except Exception as err:
                res.setdefault("kernels_error", []).append(str(err)[-1500:])
        # the variants: one cubin, every kernel in it, the ldmatrix_cpasync launch
        lf = load_launch(ROOT / "kernels" / "trace" / "ldmatrix_cpasync.launch.toml")
        cub = tmp / "v.cubin"
        subprocess.run(["nvcc", "-arch=sm_90", "-O3", "-lineinfo", "-cubin", "-o", str(cub),
                        str(HERE / "ldsm_variants.cu")], check=True, timeout=120)
        names = re.findall(r"^K\((\w+),", (HERE / "ldsm_variants.cu").read_text(), re.M)
        specs = [spec_for(lf, cub.read_bytes(), n, tmp) for n in names]
        # one stmatrix form per kernel (stsm_variants.cu), the stmatrix_frag launch
        lf = load_launch(ROOT / "kernels" / "trace" / "stmatrix_frag.launch.toml")
        cub2 = tmp / "s.cubin"
        subprocess.run(["nvcc", "-arch=sm_90", "-O3", "-lineinfo", "-cubin", "-o", str(cub2),
                        str(HERE / "stsm_variants.cu")], check=True, timeout=120, capture_output=True)
        names2 = re.findall(r"__global__ void (\w+)\(", (HERE / "stsm_variants.cu").read_text())
        specs += [spec_for(lf, cub2.read_bytes(), n, tmp) for n in names2]
        try:
            counters, log = run_ncu({"launches": specs}, driver="viz.trace.ncu_driver", metrics=tuple(FIXED))
            res["variants"] = {n: c for n, c in zip(names + names2, counters)}
        except Exception as err:
            res["variants_error"] = str(err)[-1500:]
    (out / "ncu_extra.json").write_text(json.dumps(res, indent=1))
    print(json.dumps(res, indent=1)[:6000])
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
