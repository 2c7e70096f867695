"""Which PTX instruction gives ldmatrix_cpasync's plain SASS its `@!PT LDS RZ, [RZ]`?

Run on the device machine (needs nvcc, ptxas, cuobjdump; no GPU):
    python3 tools/gpu/session/h11kern/sass_variants.py OUTDIR
Writes OUTDIR/sass_variants.json ({variant: {"pt_lds": n, "lines": [memory/sync SASS]}})
and the full SASS dumps (OUTDIR/sass/*.sass). Two sets of variants:
  * ldsm_variants.cu: CUDA variants (with/without cp.async, commit_group, wait_all,
    wait_group 0/1, __syncwarp/__syncthreads, ldmatrix), one kernel each;
  * PTX ablations of kernels/trace/ldmatrix_cpasync.cu: its PTX with one instruction
    (cp.async, cp.async.wait_all, bar.warp.sync, ldmatrix) deleted at a time, and the
    PTX of each new kernels/trace kernel.
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
ARCH = "sm_90"
KEEP = re.compile(r"\b(LDS|STS|LDSM|STSM|LDGSTS|LDGDEPBAR|DEPBAR|BAR|WARPSYNC|NOP|ARRIVES|LDG|STG|SYNCS)\b")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise RuntimeError(" ".join(map(str, cmd)) + ": " + (p.stderr or p.stdout)[-800:])
    return p.stdout


def per_function(sass: str) -> dict:
    out, name = {}, None
    for ln in sass.splitlines():
        m = re.search(r"Function\s*:\s*(\S+)", ln)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", ln)
        if name and m:
            out[name].append(f"/*{m.group(1)}*/ {m.group(2).strip()}")
    return out


def summary(lines):
    keep = [ln for ln in lines if KEEP.search(ln)]
    return {"pt_lds": sum(1 for ln in lines if re.search(r"@!PT\s+LDS\b", ln)), "lines": keep}


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "sass").mkdir(exist_ok=True)
    tmp = out / "build"
    tmp.mkdir(exist_ok=True)
    res = {"cuobjdump": shutil.which("cuobjdump"), "nvdisasm": shutil.which("nvdisasm")}
    # 1. CUDA variants
    cub = tmp / "ldsm_variants.cubin"
    run(["nvcc", f"-arch={ARCH}", "-O3", "-lineinfo", "-cubin", "-o", cub, HERE / "ldsm_variants.cu"])
    sass = run(["cuobjdump", "-sass", cub])
    (out / "sass" / "ldsm_variants.sass").write_text(sass)
    for name, lines in sorted(per_function(sass).items()):
        res[name] = summary(lines)
    # 2. PTX ablations of the shipped kernel
    ptx_path = tmp / "ldmatrix_cpasync.ptx"
    run(["nvcc", f"-arch={ARCH}", "-O3", "-lineinfo", "-ptx", "-o", ptx_path,
         ROOT / "kernels" / "trace" / "ldmatrix_cpasync.cu"])
    ptx = ptx_path.read_text()
    cuts = {"ptx_full": None, "ptx_no_cpasync": r"^\s*cp\.async\.cg", "ptx_no_wait_all": r"^\s*cp\.async\.wait_all",
            "ptx_no_bar_warp_sync": r"^\s*bar\.warp\.sync", "ptx_no_ldmatrix": r"^\s*ldmatrix",
            "ptx_no_wait_no_bar": r"^\s*(cp\.async\.wait_all|bar\.warp\.sync)"}
    for name, pat in cuts.items():
        text = ptx if pat is None else "\n".join(ln for ln in ptx.split("\n") if not re.match(pat, ln))
        p = tmp / f"{name}.ptx"
        p.write_text(text)
        c = tmp / f"{name}.cubin"
        try:
            run(["ptxas", f"-arch={ARCH}", "-O3", "-o", c, p])
            s = run(["cuobjdump", "-sass", c])
            (out / "sass" / f"{name}.sass").write_text(s)
            res[name] = summary([ln for f in per_function(s).values() for ln in f])
        except Exception as err:  # say it, keep going
            res[name] = {"error": str(err)[:600]}
    if res["nvdisasm"]:
        try:
            c = tmp / "ptx_full.cubin"
            (out / "sass" / "ptx_full.nvdisasm.txt").write_text(run(["nvdisasm", "-g", "-c", c]))
        except Exception as err:
            res["nvdisasm_error"] = str(err)[:300]
    # 3. the new kernels' SASS (plain)
    for src in ("softmax_row", "particles_aos", "cpasync_double", "stmatrix_frag"):
        c = tmp / f"{src}.cubin"
        try:
            run(["nvcc", f"-arch={ARCH}", "-O3", "-lineinfo", "-cubin", "-o", c, ROOT / "kernels" / "trace" / f"{src}.cu"])
            s = run(["cuobjdump", "-sass", c])
            (out / "sass" / f"{src}.sass").write_text(s)
            for name, lines in per_function(s).items():
                res["kernel_" + name] = summary(lines)
        except Exception as err:
            res["kernel_" + src] = {"error": str(err)[:600]}
    (out / "sass_variants.json").write_text(json.dumps(res, indent=1))
    for k, v in res.items():
        if isinstance(v, dict):
            print(f"{k:32} @!PT LDS: {v.get('pt_lds', v.get('error'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
