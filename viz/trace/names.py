"""Kernel names: what a launch file's ``kernel`` may say, and which PTX entry it names.

A launch file names its kernel as it is written in C++ (``transposeNaive``,
``ns::detail::scan<float>``, ``MatrixMulCUDA<32>``, ``reduce6<int, 256, true>``), with a
signature where overloads need one (``f(float*, int)``), or as the PTX entry itself (an
``extern "C"`` name or a mangled name such as ``_Z14transposeNaivePfS_ii``). The compiled
module's entries are demangled (``cu++filt`` from the CUDA toolkit, else the C++ runtime's
own demangler, ``__cxa_demangle``) and matched ignoring whitespace, the integer suffixes the
demangler writes (``256u``) and, unless the name gives one, the parameter list. The
demangler runs in a process of its own with a memory and time limit (``demangle``): a name
whose text would explode is shown as it is.

``parse_kernel_name`` checks the text before it is used anywhere: a template argument list
is C++ that warpviz may write into a generated source (``instantiation_source``), so it may
hold only what template arguments need (names, numbers, ``::``, ``<>``, ``,``, ``*``,
``-``, balanced ``()``, spaces): nothing that could end the declaration, open a comment, a
string or a preprocessor line. Nothing here runs a shell; the demangler gets the names as
arguments of its own process, never through ``sh``.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from ..errors import cut

MAX_KERNEL_CHARS = 1024
MAX_LISTED = 24                 # entries named in a message (a sample file has hundreds)
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
QUALIFIED = re.compile(rf"(?:::)?{IDENT}(?:::{IDENT})*")
ENTRY_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")     # a PTX identifier
TEMPLATE_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:<>,*-() ")
PARAM_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:<>,* ")


class KernelNameError(ValueError):
    """A kernel name warpviz will not use: ``problem`` and ``fix`` for the paragraph."""

    def __init__(self, problem: str, fix: str):
        self.problem, self.fix = problem, fix
        super().__init__(problem)


@dataclass(frozen=True)
class KernelName:
    """A checked ``kernel`` value. ``qualified``: ``ns::k`` (no spaces); ``targs``: the
    template argument list as written, without the brackets (None: none written);
    ``params``: the parameter types as written (None: no parameter list written)."""

    text: str
    qualified: str
    targs: str | None = None
    params: tuple[str, ...] | None = None

    @property
    def template_id(self) -> str:
        """``NAME<ARGS>`` as C++ text (``NAME`` without template arguments when none were given)."""
        return self.qualified + (f"<{self.targs}>" if self.targs is not None else "")


def _balanced(text: str, pairs: dict[str, str]) -> bool:
    stack = []
    closing = {v: k for k, v in pairs.items()}
    for c in text:
        if c in pairs:
            stack.append(c)
        elif c in closing:
            if not stack or stack.pop() != closing[c]:
                return False
    return not stack


def _close(text: str, start: int, open_: str, close: str) -> int:
    """The index of the bracket closing the one at ``start`` (nesting counted), or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside ``<>``, ``()`` and ``[]``; parts stripped."""
    out, depth, cur = [], 0, []
    for c in text:
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    last = "".join(cur).strip()
    if last or out:
        out.append(last)
    return out


def parse_kernel_name(text: str) -> KernelName:
    """``text`` checked as a kernel name (see the module doc); raises ``KernelNameError``."""
    example = 'write e.g. `kernel = "transposeNaive"`, `"ns::k"`, `"MatrixMulCUDA<32>"`, `"f(float*, int)"` or the mangled name'
    if not isinstance(text, str) or not text.strip():
        raise KernelNameError("the kernel's name is empty", example)
    if len(text) > MAX_KERNEL_CHARS:
        raise KernelNameError(f"the kernel's name has {len(text):,} characters, over the limit of {MAX_KERNEL_CHARS:,}",
                         "name the kernel as the source writes it")
    s = text.strip()
    m = QUALIFIED.match(s)
    if not m:
        raise KernelNameError(f"{_show(text)} is not a kernel name: it must start with a C++ name (letters, digits "
                         "and _, not starting with a digit)", example)
    qualified = m.group(0)
    rest = s[m.end():].lstrip()
    targs = params = None
    if rest.startswith("<"):
        end = _close(rest, 0, "<", ">")
        if end < 0:
            raise KernelNameError(f"{_show(text)}: the template argument list `<` is not closed", example)
        inner = rest[1:end]
        bad = sorted({c for c in inner if c not in TEMPLATE_CHARS})
        if bad:
            raise KernelNameError(f"{_show(text)}: a template argument list may hold names, numbers, `::`, `<>`, `,`, "
                             f"`*`, `-`, `()` and spaces, not {' '.join(repr(c) for c in bad)}",
                             "write the template arguments as C++ does, e.g. `reduce6<int, 256, true>`")
        if not _balanced(inner, {"<": ">", "(": ")"}) or not inner.strip():
            raise KernelNameError(f"{_show(text)}: the template arguments are empty or their brackets do not pair up",
                             "write the template arguments as C++ does, e.g. `reduce6<int, 256, true>`")
        targs = " ".join(inner.split())
        rest = rest[end + 1:].lstrip()
    if rest.startswith("("):
        end = _close(rest, 0, "(", ")")
        inner = rest[1:end] if end > 0 else ""
        bad = sorted({c for c in inner if c not in PARAM_CHARS})
        if end < 0 or bad or not _balanced(inner, {"<": ">"}):
            raise KernelNameError(f"{_show(text)}: the parameter list must be C++ types separated by commas "
                             "(names, `::`, `<>`, `*`, spaces)", 'write e.g. `kernel = "f(float*, int)"`')
        params = tuple(" ".join(p.split()) for p in split_top(inner)) if inner.strip() else ()
        if params == ("void",):
            params = ()
        rest = rest[end + 1:].lstrip()
    if rest:
        raise KernelNameError(f"{_show(text)} is not a kernel name: {_show(rest)} follows the name", example)
    return KernelName(text, qualified.lstrip(":") if qualified.startswith("::") else qualified, targs, params)


def _show(text: str, n: int = 80) -> str:
    r = repr(text)
    return r if len(r) <= n else r[:n] + "…"


# ---------------------------------------------------------------------------- canonical text

_SUFFIX = re.compile(r"(?<![\w.])(-?\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)(?![\w.])")
_ABI = re.compile(r"\[abi:[^\]]*\]")
# A template argument written as a cast of a number: cu++filt writes every non-type template
# argument so (``MatrixMulCUDA<(int)16>``, ``reduce4<int, (unsigned int)256>``, ``kb<(bool)1>``,
# ``ke<(Mode)2>``), the C++ runtime's demangler only those of types other than int, unsigned,
# long and bool (``(char)65``, ``(Mode)2``; ``256u``, ``7l`` and ``true`` otherwise).
_CAST = re.compile(r"(?<=[<,])(\s*)\(\s*([A-Za-z_][\w:]*(?:\s+[A-Za-z_][\w:]*)*)\s*\)\s*(-?\d+)(?=\s*[,>])")
# the casts a user need not write: the number alone means the same in C++ (int, unsigned,
# long, long long and their unsigned kinds; bool as true/false)
_PLAIN_INTS = {"int", "signed int", "signed", "unsigned int", "unsigned", "long", "long int", "signed long",
               "unsigned long", "long unsigned int", "unsigned long int", "long long", "long long int",
               "unsigned long long", "long long unsigned int", "unsigned long long int"}


def _cast_to_literal(m: re.Match, keep_other: bool) -> str:
    space, typ, num = m.group(1), " ".join(m.group(2).split()), m.group(3)
    if typ == "bool" and num in ("0", "1"):
        return space + ("true" if num == "1" else "false")
    if typ in _PLAIN_INTS or not keep_other:
        return space + num
    return m.group(0)


def _plain_template_args(text: str, keep_other: bool) -> str:
    """``text`` with the template arguments cu++filt writes as casts written as numbers
    (``(int)16`` -> ``16``, ``(bool)1`` -> ``true``); ``keep_other``: casts to other types
    (``(char)65``, an enum's ``(Mode)2``) stay, else they become the number too."""
    return _CAST.sub(lambda m: _cast_to_literal(m, keep_other), text)


def readable(text: str) -> str:
    """A demangled name as a user writes it, whichever demangler made it: ``(int)16`` ->
    ``16``, ``(unsigned int)256`` and ``256u`` -> ``256``, ``(bool)1`` -> ``true``; casts to
    other types (``(char)65``, ``(Mode)2``) stay, as they are C++ too; ``float *`` -> ``float*``."""
    t = _plain_template_args(text, keep_other=True)
    t = _SUFFIX.sub(r"\1", t)
    return re.sub(r"\s+([*&])", r"\1", t)


def canonical(text: str) -> str:
    """C++ text compared as the demangler writes it: template arguments written as casts of
    numbers read as the numbers (``(int)16``, ``(unsigned int)256u``, ``(bool)1`` as
    ``true``, ``(Mode)2`` as ``2``), integer suffixes dropped (``256u``),
    ``unsigned`` alone read as ``unsigned int``, ``long int`` as ``long``, ABI tags dropped,
    then every space removed."""
    t = _ABI.sub("", text)
    t = _plain_template_args(t, keep_other=False)
    t = _SUFFIX.sub(r"\1", t)
    t = re.sub(r"\bunsigned\b(?!\s*(?:char|short|int|long)\b)", "unsigned int", t)
    t = re.sub(r"\bsigned\s+int\b", "int", t)
    t = re.sub(r"\b(long\s+long|long|short)\s+int\b", r"\1", t)
    t = re.sub(r"\bstd::size_t\b|\bsize_t\b", "unsigned long", t)
    t = re.sub(r"\bconst\s+((?:(?!const\b)[\w:]+\s+)*[\w:]+)\s*\*", r"\1 const*", t)   # const T* and T const* alike
    return "".join(t.split())


@dataclass(frozen=True)
class Entry:
    """One ``.entry`` of a PTX module: its name there (``mangled``), its demangled text (the
    same for ``extern "C"`` names), and that text split into the name with its template
    arguments and the parameter types (None where the demangler gave none)."""

    mangled: str
    demangled: str

    @property
    def signature(self) -> tuple[str, tuple[str, ...] | None]:
        name, params = split_signature(self.demangled)
        if params and _TEMPLATE_PARAM_REF.search(self.mangled):
            params = template_params_resolved(name, params)
        return name, params

    @property
    def name(self) -> str:
        return self.signature[0]

    @property
    def params(self) -> tuple[str, ...] | None:
        return self.signature[1]

    @property
    def shown(self) -> str:
        """What a message lists: the demangled signature (without the ``void`` return type),
        as a user writes it (``readable``: ``MatrixMulCUDA<16>(float*, ...)`` whether cu++filt
        wrote ``MatrixMulCUDA<(int)16>(float *, ...)`` or the C++ runtime ``MatrixMulCUDA<16>``)."""
        name, params = self.signature
        name = readable(name)
        return name if params is None else f"{name}({', '.join(readable(p) for p in params)})"


# A mangled name that refers to its template's parameters (``T_``, ``T0_``...): cu++filt
# writes those parameters as T1, T2... in the parameter list (``reduce4<int, (unsigned int)256>
# (T1 *, T1 *, unsigned int)``), the C++ runtime's demangler as the types they stand for.
_TEMPLATE_PARAM_REF = re.compile(r"T\d*_")
_TN = re.compile(r"(?<![\w:])T([1-9]\d?)(?![\w:])")


def template_params_resolved(name: str, params: tuple[str, ...]) -> tuple[str, ...]:
    """``params`` with cu++filt's ``T1``, ``T2``... replaced by the template arguments of
    ``name`` they stand for (``reduce4<int, 256>``, ``T1 *`` -> ``int *``); a ``Tn`` beyond
    the arguments is left as it is."""
    if not name.endswith(">"):
        return params
    depth, start = 0, -1
    for i in range(len(name) - 1, -1, -1):          # the '<' of the last component's arguments
        depth += {">": 1, "<": -1}.get(name[i], 0)
        if depth == 0:
            start = i
            break
    args = split_top(name[start + 1:-1]) if start >= 0 else []
    if not args:
        return params

    def sub(m: re.Match) -> str:
        k = int(m.group(1))
        return args[k - 1] if k <= len(args) else m.group(0)

    return tuple(_TN.sub(sub, p) for p in params)


def split_signature(demangled: str) -> tuple[str, tuple[str, ...] | None]:
    """``void ns::k<int, 256u>(int*, int*, unsigned int)`` -> (``ns::k<int, 256u>``,
    (``int*``, ``int*``, ``unsigned int``)); a name without a parameter list -> (name, None)."""
    s = demangled.strip()
    params = None
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            if s[i] == ")":
                depth += 1
            elif s[i] == "(":
                depth -= 1
                if depth == 0:
                    inner = s[i + 1:-1].strip()
                    params = tuple(split_top(inner)) if inner and inner != "void" else ()
                    s = s[:i].rstrip()
                    break
    if s.startswith("void "):           # a function template's demangled name carries its return type
        s = s[len("void "):].lstrip()
    return s, params


def _base(name: str) -> str:
    """``ns::k<int>`` -> ``ns::k`` (template arguments of the last component dropped)."""
    i = name.find("<")
    return name if i < 0 else name[:i]


def _unqualified_match(entry_name: str, wanted: str) -> bool:
    """``entry_name`` is ``wanted`` or ends with ``::`` + ``wanted`` (canonical texts)."""
    return entry_name == wanted or entry_name.endswith("::" + wanted)


def match(kernel: KernelName, entries: list[Entry]) -> list[Entry]:
    """The entries ``kernel`` names, most exact first; [] when none.

    1. An entry whose PTX name is the text itself (``extern "C"`` or mangled).
    2. The demangled name with its template arguments (and the parameters, when written).
    3. Failing that, the same with the namespaces the name leaves out, and without the
       template arguments when it writes none (``MatrixMulCUDA`` names every instantiation:
       more than one is an ambiguity, which says to write them)."""
    exact = [e for e in entries if e.mangled == kernel.text.strip()]
    if exact:
        return exact
    want = canonical(kernel.template_id)
    want_params = None if kernel.params is None else [canonical(p) for p in kernel.params]

    def params_ok(e: Entry) -> bool:
        return want_params is None or (e.params is not None and [canonical(p) for p in e.params] == want_params)

    full = [e for e in entries if canonical(e.name) == want and params_ok(e)]
    if full:
        return full
    loose = []
    for e in entries:
        name = canonical(e.name)
        if kernel.targs is None:
            name = _base(name) if not _unqualified_match(name, want) else name
        if _unqualified_match(name, want) and params_ok(e):
            loose.append(e)
    return loose


def instantiated(kernel: KernelName, entries: list[Entry], before) -> list[Entry]:
    """The entries of a module compiled with warpviz's instantiation of ``kernel``
    (``instantiation_source``) that the source alone did not have (``before``: their PTX
    names) and that ``kernel`` names: by ``match``, else (template arguments the demangler
    writes otherwise, e.g. an enumerator ``k<Mode::B>`` that it writes ``k<(Mode)1>``) the
    new entries of the same template."""
    new = [e for e in entries if e.mangled not in before]
    hit = match(kernel, new)
    if hit:
        return hit
    want = canonical(kernel.qualified)
    return [e for e in new if _unqualified_match(_base(canonical(e.name)), want)]


def listing(entries: list[Entry], limit: int = MAX_LISTED) -> str:
    # a PTX's entry names are the file's word: each is cut (a name of 400,000 characters)
    shown = [cut(e.shown, 120) for e in entries[:limit]]
    more = f" and {len(entries) - limit} more" if len(entries) > limit else ""
    return ", ".join(shown) + more


def ambiguity(kernel: KernelName, found: list[Entry]) -> tuple[str, str]:
    """(problem, fix) for a name that matches several entries."""
    items = "; ".join(f"{cut(e.shown, 120)} (mangled {cut(e.mangled, 120)})" for e in found[:MAX_LISTED])
    more = f"; and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    problem = f"`{kernel.text.strip()}` names {len(found)} kernels: {items}{more}"
    if kernel.targs is None and len({_base(e.name) for e in found}) == 1 and any("<" in e.name for e in found):
        fix = f'write the template arguments, e.g. `kernel = "{readable(found[0].name)}"`, or the mangled name'
    else:
        first = found[0]
        sig = first.shown if first.params is not None else readable(first.name)
        fix = f'write the mangled name (e.g. `kernel = "{first.mangled}"`) or the full signature (e.g. `kernel = "{sig}"`)'
    return problem, fix


def instantiation_source(kernel: KernelName, source: str) -> str:
    """A C++ file that includes ``source`` (an absolute path warpviz checked: no quote,
    backslash or control character) and instantiates ``kernel``'s template: with the
    parameter list when the name gives one (``template __global__ void NAME<ARGS>(PARAMS);``),
    else through ``decltype`` (the template's own parameter types). ``kernel`` must come from
    ``parse_kernel_name``; the text is checked again here."""
    if kernel.targs is None:
        raise ValueError("only a template instantiation is written")
    again = parse_kernel_name(kernel.text)
    if again != kernel or any(c in source for c in '"\\\n\r\0'):
        raise ValueError("unchecked kernel name or source path")
    tid = kernel.template_id
    if kernel.params is not None:
        decl = f"template __global__ void {tid}({', '.join(kernel.params)});"
    else:
        decl = f"template __global__ decltype({tid}) {tid};"
    return (f"// warpviz: instantiates {tid}, which the source does not instantiate itself\n"
            f'#include "{source}"\n{decl}\n')


def how_to_instantiate(kernel: KernelName) -> str:
    """The line a user adds to the source to instantiate ``kernel``."""
    tid = kernel.template_id
    params = ", ".join(kernel.params) if kernel.params is not None else "PARAMETER TYPES"
    return f"add `template __global__ void {tid}({params});` after the template's definition"


# ---------------------------------------------------------------------------- demangling

MAX_MANGLED_CHARS = 16_384        # a longer entry name is shown as it is (CUTLASS's longest are about 2,000)
MAX_DEMANGLED_CHARS = 65_536      # a demangled text longer than this is dropped for the mangled name
DEMANGLER_MEMORY = 1 << 30        # the demangler's process: address space (a 250-character name can ask for GBs)
DEMANGLER_SECONDS = 5             # ... and seconds (the 300 entries of a sample file take milliseconds)
_DEMANGLED: dict[tuple, str] = {}  # (demangler, name): names demangled in this process (asked for often)

# The demangler's own process (``python -I -c``; it imports nothing of warpviz): limits its
# memory and CPU time, runs cu++filt (inheriting them) or the C++ runtime's __cxa_demangle,
# and prints one JSON line [name, text or null] per name as soon as it has it (a text over
# ``cap`` characters is null). Back-references let a mangled name of 189 characters
# demangle to 6 MB and one of 450 to terabytes: the demangler then runs until it is stopped,
# and the names it printed before are kept.
_CHILD = r"""
import ctypes, ctypes.util, json, subprocess, sys
req = json.load(sys.stdin)
names, tool, cap = req["names"], req["tool"], req["cap"]
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (req["memory"], req["memory"]))
    resource.setrlimit(resource.RLIMIT_CPU, (req["seconds"], req["seconds"] + 1))
except Exception:
    pass
def say(n, text):
    sys.stdout.write(json.dumps([n, text if text is not None and len(text) <= cap else None]) + "\n")
    sys.stdout.flush()
done = set()
for k in range(0, len(names), 64) if tool else ():
    chunk = names[k:k + 64]
    try:
        p = subprocess.run([tool, *chunk], stdin=subprocess.DEVNULL, capture_output=True, timeout=1 + len(chunk) / 8)
    except (OSError, subprocess.SubprocessError):
        continue                                  # this chunk by the runtime's demangler, name by name
    lines = p.stdout.decode("utf-8", "replace").splitlines()
    if p.returncode == 0 and len(lines) == len(chunk):
        for n, ln in zip(chunk, lines):
            say(n, ln.strip())
            done.add(n)
fn = free = None
for lib in (ctypes.util.find_library("stdc++"), "libstdc++.so.6", ctypes.util.find_library("c++abi"),
            ctypes.util.find_library("c++")):
    try:
        fn = ctypes.CDLL(lib).__cxa_demangle if lib else None
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        free, strnlen = libc.free, libc.strnlen
    except (OSError, AttributeError):
        fn = None
    if fn is not None:
        break
if fn is not None:
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    free.argtypes, strnlen.argtypes, strnlen.restype = [ctypes.c_void_p], [ctypes.c_void_p, ctypes.c_size_t], \
        ctypes.c_size_t
for n in names if fn is not None else ():
    if n in done:
        continue
    status = ctypes.c_int(-1)
    q = fn(n.encode("ascii"), None, None, ctypes.byref(status))     # NULL when its memory runs out
    text = None
    if q:
        if status.value == 0 and strnlen(q, cap + 1) <= cap:
            text = ctypes.string_at(q).decode("utf-8", "replace")
        free(q)
    say(n, text)
"""


def demangle(names: list[str], timeout: float = 60) -> dict[str, str]:
    """{name: demangled text} for PTX entry names: ``cu++filt`` (beside nvcc or on the PATH)
    where it is installed, else the C++ runtime's ``__cxa_demangle``, both in a process of
    their own with at most ``DEMANGLER_MEMORY`` and ``DEMANGLER_SECONDS``; a name neither
    can demangle (an ``extern "C"`` name), one longer than ``MAX_MANGLED_CHARS`` or whose
    text would exceed ``MAX_DEMANGLED_CHARS`` maps to itself. Names are PTX identifiers
    (checked), passed as arguments, never through a shell."""
    from ..toolchain.compile import find_tool

    tool = find_tool("cu++filt")
    out = {n: n for n in names}
    todo = [n for n in dict.fromkeys(names) if n.startswith("_Z") and len(n) <= MAX_MANGLED_CHARS
            and ENTRY_NAME.fullmatch(n) and (tool, n) not in _DEMANGLED]
    if todo:
        got = _demangle_apart(todo, timeout, tool)
        if got is not None:
            if len(_DEMANGLED) > 10_000:
                _DEMANGLED.clear()
            _DEMANGLED.update({(tool, n): got.get(n) or n for n in todo})
    out.update({n: _DEMANGLED[(tool, n)] for n in names if _DEMANGLED.get((tool, n))})
    return out


def _demangle_apart(names: list[str], timeout: float, tool: str | None) -> dict[str, str] | None:
    """``_CHILD`` on ``names``: {name: text}, or None when it could not run (then the names
    are shown as they are, and asked again next time). A name the demangler was stopped on
    (over ``DEMANGLER_SECONDS``) is kept as it is, and the names after it go to a new
    process, at most three times."""
    import json
    import sys

    out: dict[str, str] = {}
    todo = list(names)
    for _ in range(3):
        req = {"names": todo, "tool": tool, "cap": MAX_DEMANGLED_CHARS, "memory": DEMANGLER_MEMORY,
               "seconds": DEMANGLER_SECONDS}
        try:
            proc = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=json.dumps(req).encode(),
                                  capture_output=True, timeout=min(timeout, DEMANGLER_SECONDS))
            stdout, stopped = proc.stdout, proc.returncode != 0
        except subprocess.TimeoutExpired as err:
            stdout, stopped = err.stdout or b"", True
        except (OSError, subprocess.SubprocessError):
            return None if not out else out
        seen = set()
        for line in stdout[:len(todo) * (MAX_DEMANGLED_CHARS + 2 * MAX_MANGLED_CHARS + 16)].splitlines():
            try:
                n, text = json.loads(line)
            except (ValueError, TypeError):
                continue
            if n in todo:
                seen.add(n)
                if isinstance(text, str) and text and text != n and len(text) <= MAX_DEMANGLED_CHARS:
                    out[n] = text
        rest = [n for n in todo if n not in seen]
        if not stopped or not rest:
            return out
        if not seen and tool is not None:
            tool = None                   # stopped inside cu++filt's chunk: the runtime's demangler, name by name
            continue
        todo = rest[1:]                   # rest[0] stopped the demangler: shown as it is
        if not todo:
            return out
    return out


def demangler() -> str:
    """Which demangler ``demangle`` uses here (for messages and the trace's header)."""
    from ..toolchain.compile import find_tool

    if find_tool("cu++filt"):
        return "cu++filt"
    return "__cxa_demangle" if _cxa() is not None else "none"


_CXA: list = []


def _cxa():
    """(``__cxa_demangle``, ``free``) from the C++ runtime, or None where there is none."""
    if _CXA:
        return _CXA[0]
    import ctypes
    import ctypes.util

    found = None
    for lib in (ctypes.util.find_library("stdc++"), "libstdc++.so.6", ctypes.util.find_library("c++abi"),
                ctypes.util.find_library("c++")):
        if not lib:
            continue
        try:
            so = ctypes.CDLL(lib)
            fn = so.__cxa_demangle
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
            free = libc.free
        except (OSError, AttributeError):
            continue
        free.argtypes = [ctypes.c_void_p]
        found = (fn, free)
        break
    _CXA.append(found)
    return found


def _cxa_demangle(name: str) -> str | None:
    import ctypes

    cxa = _cxa()
    if cxa is None:
        return None
    fn, free = cxa
    if len(name) > MAX_MANGLED_CHARS:
        return None
    status = ctypes.c_int(-1)
    p = fn(name.encode("ascii"), None, None, ctypes.byref(status))      # in this process: only for checked names
    try:
        if status.value != 0 or not p:
            return None
        text = ctypes.string_at(p, min(MAX_DEMANGLED_CHARS + 1, _strlen(p)))
        return text.decode("utf-8", "replace") if len(text) <= MAX_DEMANGLED_CHARS else None
    finally:
        if p:
            free(p)


def _strlen(p) -> int:
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    libc.strnlen.argtypes, libc.strnlen.restype = [ctypes.c_void_p, ctypes.c_size_t], ctypes.c_size_t
    return libc.strnlen(p, MAX_DEMANGLED_CHARS + 1)


def entries_of(ptx_entries: list[str]) -> list[Entry]:
    """The module's entries, demangled."""
    d = demangle(ptx_entries)
    return [Entry(n, d.get(n, n)) for n in ptx_entries]


__all__ = ["KernelName", "Entry", "KernelNameError", "parse_kernel_name", "canonical", "readable", "split_signature",
           "template_params_resolved", "match", "instantiated",
           "listing", "ambiguity", "instantiation_source", "how_to_instantiate", "demangle", "demangler",
           "entries_of", "split_top"]
