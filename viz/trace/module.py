"""A PTX module's structure: its header (``.version``, ``.target``, ``.address_size``), its
functions (``.entry`` kernels and ``.func`` device functions), an entry's parameters, and
the module cut down to one kernel.

PTX comes from nvcc (``-ptx``), NVRTC (CuPy's ``RawKernel``), Triton or Numba, or from a
file someone sent: everything here reads text and never trusts it (bounded loops, no
recursion on the text's nesting, no assumption that a brace or parenthesis is closed).

``prune`` keeps one kernel: a CUDA sample file compiles to hundreds of entries
(``reduction_kernel.cu``: 213), and warpviz traces one. The other entries and the device
functions the kept one does not call are dropped; everything else (declarations,
variables, ``.file`` lines, debug sections) stays as it is, so the kernel's own code, its
line information and its line numbers in the module are unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Linear in the text's length: each directive is looked for at a line's start, and the blanks
# before and after it never cross a line's end (``^\s*`` under re.M did: from every line
# start of a text of blank lines it ran to the end, quadratic: 200,000 newlines took minutes).
_BLANK = r"[ \t\r\f\v]"
_VERSION = re.compile(rf"^{_BLANK}*+\.version{_BLANK}++(\d+)\.(\d+){_BLANK}*+$", re.M)
_TARGET = re.compile(rf"^{_BLANK}*+\.target{_BLANK}++([^\n/]*)", re.M)
_ADDRESS = re.compile(rf"^{_BLANK}*+\.address_size{_BLANK}++(\d+){_BLANK}*+$", re.M)
_HEAD = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\b")
_ENTRY_NAME = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")
_FUNC_NAME = re.compile(r"\.func\s+(?:\([^()]*\)\s*)?([A-Za-z_$][\w$]*)")   # [^()]: linear on `.func (.func (...`
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


class PtxModuleError(ValueError):
    """The text is not a PTX module warpviz can use: ``problem`` and ``fix``."""

    def __init__(self, problem: str, fix: str):
        self.problem, self.fix = problem, fix
        super().__init__(problem)


@dataclass(frozen=True)
class Header:
    version: tuple[int, int]
    target: str                 # "sm_90a", as written (first target; options such as "debug" dropped)
    address_size: int

    @property
    def sm(self) -> int:
        """90 for sm_90, sm_90a and sm_90f."""
        return int(re.sub(r"\D", "", self.target) or 0)

    @property
    def suffix(self) -> str:
        """"a" (architecture-specific), "f" (family) or ""."""
        m = re.fullmatch(r"sm_\d+([af]?)", self.target)
        return m.group(1) if m else ""


def header(ptx: str) -> Header:
    """The module's header; ``PtxModuleError`` where a directive is missing or malformed."""
    fix = "give the PTX as its compiler wrote it (Triton: `compiled.asm[\"ptx\"]`; nvcc: `nvcc -ptx`)"
    v = _VERSION.search(ptx)
    if not v:
        raise PtxModuleError("the PTX has no `.version` line (it is not a PTX module)", fix)
    t = _TARGET.search(ptx)
    if not t:
        raise PtxModuleError("the PTX has no `.target` line", fix)
    target = t.group(1).split(",")[0].strip()
    if not re.fullmatch(r"sm_\d{2,3}[af]?", target):
        raise PtxModuleError(f"the PTX's `.target {target[:40]}` is not a GPU architecture warpviz knows (sm_XX)",
                             "compile the kernel for an NVIDIA GPU (sm_70 or newer)")
    a = _ADDRESS.search(ptx)
    if not a or a.group(1) != "64":
        raise PtxModuleError("the PTX is not 64-bit (`.address_size 64` is missing)",
                             "compile the kernel for 64-bit addresses (every current CUDA compiler does)")
    return Header((int(v.group(1)), int(v.group(2))), target, 64)


def ptxas_arch(h: Header, gpu_arch: str) -> str:
    """The ``-arch`` to assemble a module of header ``h`` for the GPU ``gpu_arch`` (sm_90):
    the GPU's, or the module's own where it targets that GPU's architecture-specific
    features (``sm_90a``: Triton's wgmma kernels). ``PtxModuleError`` when the module was
    written for a newer GPU, or for another GPU's specific features."""
    gpu = int(re.sub(r"\D", "", gpu_arch) or 0)
    if h.sm > gpu:
        raise PtxModuleError(f"the PTX targets {h.target}, a newer GPU than this one ({gpu_arch})",
                             f"compile it for {gpu_arch} (Triton compiles for the GPU it runs on)")
    if h.suffix:
        if h.sm != gpu:
            raise PtxModuleError(f"the PTX targets {h.target}, features of another GPU than this one ({gpu_arch})",
                                 f"compile it for {gpu_arch}")
        return h.target
    return gpu_arch


# ---------------------------------------------------------------------------- functions


@dataclass(frozen=True)
class Function:
    kind: str            # "entry" | "func"
    name: str
    start: int           # first line (0-based), the header's
    end: int             # last line (0-based, inclusive): the closing brace, or the declaration's ";"
    body: bool           # a definition (False: a prototype such as `.extern .func vprintf(...);`)


def _code(line: str) -> str:
    """A line without its ``//`` comment (PTX has no string literals outside ``.file``)."""
    i = line.find("//")
    return line if i < 0 else line[:i]


def _strip_block_comments(code: str, in_comment: bool) -> tuple[str, bool]:
    """``code`` without its comments, given whether a ``/*`` comment is open at its start;
    and whether one is open at its end. A ``//`` outside a block comment ends the line."""
    out = []
    i = 0
    while i < len(code):
        if in_comment:
            e = code.find("*/", i)
            if e < 0:
                return "".join(out), True
            i = e + 2
            in_comment = False
            continue
        s = code.find("/*", i)
        c = code.find("//", i)
        if c >= 0 and (s < 0 or c < s):
            out.append(code[i:c])
            break
        if s < 0:
            out.append(code[i:])
            break
        out.append(code[i:s])
        i = s + 2
        in_comment = True
    return "".join(out), in_comment


def code_lines(ptx: str) -> list[str]:
    """The module's lines without comments (``//`` and ``/* */``, also across lines), one
    for each line of the text, so that line numbers stay."""
    out = []
    in_comment = False
    for line in ptx.split("\n"):
        code, in_comment = _strip_block_comments(line, in_comment)
        out.append(code)
    return out


def functions(ptx: str) -> list[Function]:
    """Every ``.entry`` and ``.func`` of the module, definitions and prototypes, at the top
    level (braces of other top-level blocks, such as debug sections, are skipped)."""
    codes = code_lines(ptx)
    n = len(codes)
    out: list[Function] = []
    depth = 0
    i = 0
    while i < n:
        code = codes[i]
        head_match = _HEAD.match(code) if depth == 0 else None
        if head_match is None:
            depth = max(0, depth + code.count("{") - code.count("}"))
            i += 1
            continue
        kind = head_match.group(1)
        head: list[str] = []
        paren = 0
        found = None                # "{" or ";"
        j, col = i, 0
        while j < n:
            for col, ch in enumerate(codes[j]):
                if ch == "(":
                    paren += 1
                elif ch == ")":
                    paren -= 1
                elif paren <= 0 and ch in "{;":
                    found = ch
                    break
                head.append(ch)
            if found is not None:
                break
            head.append(" ")
            j += 1
        m = (_ENTRY_NAME if kind == "entry" else _FUNC_NAME).search("".join(head))
        name = m.group(1) if m else ""
        if found != "{":
            out.append(Function(kind, name, i, min(j, n - 1), False))
            i = j + 1
            continue
        d, k, end = 0, j, n - 1
        text = codes[j][col:]
        while True:
            d += text.count("{") - text.count("}")
            if d <= 0:
                end = k
                break
            k += 1
            if k >= n:
                break
            text = codes[k]
        out.append(Function(kind, name, i, end, True))
        i = end + 1
    return out


def entry_names(ptx: str) -> list[str]:
    """The names of the module's kernels (``.entry`` definitions), in order."""
    return [f.name for f in functions(ptx) if f.kind == "entry" and f.body and f.name]


def entry_text(ptx: str, entry: str) -> str | None:
    """The entry's header and body, or None when the module has no such entry."""
    lines = ptx.split("\n")
    for f in functions(ptx):
        if f.kind == "entry" and f.name == entry and f.body:
            return "\n".join(lines[f.start:f.end + 1])
    return None


@dataclass(frozen=True)
class Param:
    name: str
    type: str            # the PTX type: "u64", "b32", "f32", "b8" ...
    bytes: int           # its size (an array such as `.b8 x[16]`: the whole array)
    pointer: bool        # `.ptr` was written (Triton marks its pointers so)
    array: bool          # `.b8 x[N]`: a structure passed by value
    align: int = 0       # `.align N` where written (0: the type's own)


def params(ptx: str, entry: str) -> list[Param] | None:
    """The entry's parameters in order, or None when the module has no such entry."""
    text = entry_text(ptx, entry)
    if text is None:
        return None
    open_ = text.find("(")
    if open_ < 0 or text.find("{") >= 0 and text.find("{") < open_:
        return []
    depth, close = 0, -1
    for k in range(open_, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                close = k
                break
    inner = " ".join(_code(ln) for ln in text[open_ + 1:close].split("\n"))
    out = []
    for part in inner.split(","):
        toks = part.split()
        if not toks or toks[0] != ".param":
            continue
        ptype, pointer = "", False
        name = ""
        count = 1
        align = 0
        k = 1
        while k < len(toks):
            t = toks[k]
            if t == ".align":
                if k + 1 < len(toks) and toks[k + 1].isdigit() and not pointer:   # after .ptr: the pointee's
                    align = int(toks[k + 1])
                k += 2
                continue
            if t == ".ptr":
                pointer = True
            elif t.startswith(".") and not ptype and t[1:] in _SIZES:
                ptype = t[1:]
            elif t.startswith("."):
                pass                    # a state space after .ptr (.global, .shared ...)
            else:
                m = re.fullmatch(r"([A-Za-z_$][\w$]*)(?:\[(\d+)\])?", t)
                if m:
                    name = m.group(1)
                    count = int(m.group(2)) if m.group(2) else 1
            k += 1
        size = _SIZES.get(ptype, 0) * count
        out.append(Param(name, ptype, size, pointer, count > 1 or "[" in part, align))
    return out


def thread_limits(ptx: str, entry: str) -> dict[str, tuple[int, ...]]:
    """The entry's ``.reqntid`` (the exact block it must be launched with: Triton writes it)
    and ``.maxntid`` (``__launch_bounds__``) directives, as written: {"reqntid": (128,), ...}."""
    text = entry_text(ptx, entry) or ""
    head = text[:text.find("{")] if "{" in text else text
    head = " ".join(_code(ln) for ln in head.split("\n"))
    out = {}
    for key in ("reqntid", "maxntid"):
        m = re.search(r"\." + key + r"\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", head)
        if m:
            out[key] = tuple(int(x) for x in m.groups() if x is not None)
    return out


_SIZES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4, "s32": 4,
          "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "pred": 1}


def prune(ptx: str, entry: str) -> str:
    """The module with only ``entry`` and the device functions it calls (transitively):
    other ``.entry`` and ``.func`` definitions are blanked with their preceding
    ``// .globl`` line (empty lines, so that every line keeps its number: the instruction
    table's ``line_no`` is the module's own); everything else stays as it is."""
    lines = ptx.split("\n")
    funcs = functions(ptx)
    defs = {f.name: f for f in funcs if f.body}
    if entry not in defs or defs[entry].kind != "entry":
        raise PtxModuleError(f"the PTX has no kernel `{entry}`", "name one of its .entry functions")
    keep = {entry}
    todo = [entry]
    while todo:
        f = defs[todo.pop()]
        body = "\n".join(_code(ln) for ln in lines[f.start:f.end + 1])
        for w in set(_WORD.findall(body)):
            if w in defs and w not in keep and defs[w].kind == "func":
                keep.add(w)
                todo.append(w)
    drop = [f for f in funcs if f.body and f.name not in keep]
    if not drop:
        return ptx
    gone = set()
    for f in drop:
        gone.update(range(f.start, f.end + 1))
        k = f.start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0 and re.match(r"^\s*//\s*\.globl\s+" + re.escape(f.name) + r"\b", lines[k]):
            gone.add(k)
    return "\n".join("" if i in gone else ln for i, ln in enumerate(lines))


__all__ = ["Header", "Function", "Param", "PtxModuleError", "header", "ptxas_arch", "functions", "entry_names",
           "entry_text", "params", "prune", "thread_limits"]
