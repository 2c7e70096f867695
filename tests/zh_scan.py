"""The scanner of the Chinese interface's texts (tests/test_app_chinese.py, tests/test_zh_everywhere.py):
runs of ASCII letters that are neither code nor allowed are English a Chinese reader meets."""

from __future__ import annotations

import json
import re

from viz import assets
from viz.scenario import load, resolve
from viz.types import all_type_names

# Words that are not English prose: CUDA and C, TOML keys and values, the swizzle kinds, units,
# file formats, keys of the keyboard, product, tool and colour-scheme names, the language menu.
ALLOWED = {
    "threadIdx", "blockIdx", "blockDim", "gridDim", "tid", "when", "op", "at", "for", "pad", "offset", "space",
    "shape", "type", "fields", "layout", "swizzle", "Swizzle", "CuTe", "xor", "diagonal", "bitrev", "cute", "expr", "none",
    "TOML", "toml", "CUDA", "PTX", "SASS", "GPU", "SM", "SMs", "NVIDIA", "HBM", "DRAM", "PyCUDA", "pip", "warpviz",
    "gpu", "nvcc", "cuobjdump", "ncu", "Nsight", "Compute", "cudaMemcpy", "bench", "GB", "KiB", "MiB", "ms", "ns",
    "MP", "WebM", "GIF", "PNG", "SVG", "VP", "mp", "webm", "gif", "png", "svg", "Home", "End", "PageUp", "PageDown",
    "PgUp", "PgDn", "Ctrl", "Shift", "Esc", "Space", "Okabe", "Ito", "English", "struct",
    "ldmatrix", "stmatrix",          # PTX instructions (View → ldmatrix / stmatrix fragments)
    "wgmma",                         # a PTX instruction (its counters outside the ten, e.g. "wgmma 共享内存存储体冲突数")
    "ldgsts", "ptxas", "atomicAdd", "pragma", "unroll", "mod",  # PTX, tools, CUDA and math words in lessons
    "rev", "tx", "ty",              # the expressions' bit reversal, the kernels' threadIdx.x / .y
    "AoS", "SoA", "CuTe", "Triton", "FlashAttention", "Knuth",  # layouts' abbreviations, libraries, a name
    "Hopper", "Numba",              # the H100's architecture (the library's tag), a library
    "all",                          # the option value in "export --rows all" (the picture's dropped-rows line)
    "bank", "wavefront",            # the classroom's words glossed beside 存储体冲突 and 波前 (docs/guide/glossary.zh.md)
}
CODE = re.compile("|".join([
    r"\s?\b[A-Za-z_]\w*\([^()\n]*\)",                # a function call in code, its arguments too (rev(row, 5))
    r"`[^`]*`",                                    # `code` in a sentence
    r"\b\w+__\w+(?:\.\w+)?",                       # Nsight Compute metric names
    r"\b0x[0-9a-fA-F]+\b",                         # hexadecimal addresses
    r"\[[\w\-]+\]",                                # [built-in-name] in the compare picker
    r"[\w\-/*]+\.(?:json|toml|cu|mp4|webm|gif|png|svg|wvtrace|launch)\b",  # file names (kernels/*.cu, a.launch)
    r"\b[\w.\-]+/(?!\w)",                           # a folder (kernels/)
    r"\b[A-Za-z]\w*_\w+\b",                        # snake_case: CUDA kernels' function names
    r"(?:/[\w.+\-]+)+",                             # paths
    r"\b[a-z]+:[\w,:]+",                            # swizzle kinds with arguments (xor:4, cute:5,0,5)
    r"\b[A-Z][A-Z0-9]+(?:\.[A-Z0-9]+)*\b",           # acronyms and SASS mnemonics (LDS.128, ATOMS.POPC.INC)
    r"\b[a-z]\w*(?:\.\w+)+",                         # PTX instructions (cp.async.cg, ldmatrix.x4)
    r"\b\w+\[[^\]]*\]",                             # code with an index (A[row*K + k])
    r"\b[A-Za-z_]\w*\(",                            # a function call in code (hash(i), rev(c, 5))
    r"\b[A-Za-z_]\w*(?=\s?(?:[-+*/&%<>|^]|==?|<=|>=)\s?[\w(\[\x22])",  # an operand of an operator: code
    r"(?<=[-+*/&%<>|^=])\s?[A-Za-z_]\w*",             # (tx + ty, tid < stride, vec = 8)
    r"\bcu[A-Z]\w+|\bsm_?\d+\w*",                   # CUDA driver API names, GPU architectures (sm80)
    r"\bif \(",                                       # C's if statement
    r"\bwarpviz \w+",                                 # the command line's subcommands (warpviz validate)
    r"（[A-Za-z ]+）",                                 # an English term as a gloss after its Chinese（halo）
]))
WORD = re.compile(r"[A-Za-z]{2,}")


class English:
    """Collects runs of ASCII letters that are neither code nor allowed, with where they were."""

    def __init__(self, lessons_are_data: bool = True):
        """``lessons_are_data``: the built-ins' titles and notes (both languages) pass as data, as
        where the library lists them all; False where their Chinese is what is scanned."""
        self.found: dict[str, str] = {}
        self.scanned = 0          # texts scanned
        self.seen: set[str] = set()
        self.code: set[str] = set(ALLOWED) | set(all_type_names())
        self.data: set[str] = set()  # text that is data, not interface: the measurements' own label,
        # the built-ins' titles and notes (lesson text, checked by tests/test_scenarios_zh.py)
        m = json.loads((assets.root() / "measurements" / "h100.json").read_text("utf-8"))
        self.data.add(m["label"])
        self.whole: set[str] = set(m.get("sweeps", {}))  # the sweeps' names, as in the GPU panel's chart
        # The built-ins' titles, notes and tags are lesson text with their own Chinese (not this
        # catalogue's): the library and the compare picker list them all.
        for path in sorted(assets.scenario_dir().glob("*.toml")):
            sc = load(path)
            self.data |= {sc.title, sc.notes, sc.title_zh, sc.notes_zh} if lessons_are_data else {sc.title, sc.notes}
            self.whole |= set(sc.tags)
        # The shipped traces' titles are their launch files' own text: the compare picker lists them too.
        from viz.app.library import read_trace_entry
        from viz.trace.tracefile import shipped

        self.data |= {read_trace_entry(p).title for p in shipped()}

    def scenario(self, name) -> None:
        """Allow the scenario's code (its names); ``name`` is a built-in's name or a Scenario."""
        sc = load(resolve(name)) if isinstance(name, str) else name
        for a in sc.accesses:
            self.code |= set(re.findall(r"[A-Za-z_]\w*", a.text + " " + (a.when_text or "")))
            self.code |= {lp.var for lp in a.loops}
        for arr in sc.arrays:
            self.code |= {arr.name, arr.type.name, *re.findall(r"[A-Za-z_]\w*", arr.swizzle.text)}
            self.code |= {f.name for f in arr.type.fields}
        self.code |= set(sc.params)

    def builtin_names(self) -> None:
        """Allow the built-ins' names (lessons name the lessons to compare with: gemm-tiled)."""
        from viz.scenario import builtin_names

        self.names = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])"
                                         for n in sorted(builtin_names(), key=len, reverse=True)))

    names = None

    def scan(self, where: str, texts) -> None:
        for t in texts:
            self.scanned += 1
            if not t or t in self.seen or t in self.data or t in self.whole:
                continue
            self.seen.add(t)          # a text read once is read (frames repeat most of theirs)
            for d in sorted(self.data, key=len, reverse=True):
                t = t.replace(d, " ") if d else t
            bare = CODE.sub(" ", self.names.sub(" ", t) if self.names else t)
            for word in WORD.findall(bare):
                if word not in self.code:
                    self.found.setdefault(word, f"{where}: {t[:160]!r}")


