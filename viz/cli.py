"""Command line: `warpviz [FILE]`, `list`, `analyze` (reference: docs/scenario-format.md)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from . import __version__
from .argcheck import MAX_BLOCK_INDEX, MAX_INSTRUCTION, MAX_WARP_INDEX, bounded_int

COMMANDS = ("list", "analyze", "export", "validate", "bench", "calibrate", "trace", "layout", "matrix", "gui",
            "completion", "gpu-check", "replay", "suggest")
SHELLS = ("bash", "zsh", "fish")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warpviz", description="See how a GPU serves a warp's memory accesses.")
    p.add_argument("--version", action="version", version=f"warpviz {__version__}")
    sub = p.add_subparsers(dest="command")

    ls = sub.add_parser("list", help="list the built-in scenarios (name<TAB>title)")
    tags = ls.add_mutually_exclusive_group()
    tags.add_argument("--tag", nargs="?", const="", metavar="TAG",
                      help="only scenarios with this tag; without a tag, the tags and how many scenarios have each")
    tags.add_argument("--tags", action="store_true", help="the tags and how many scenarios have each")
    tags.add_argument("--traces", action="store_true", help="the shipped traces (name<TAB>title): open one by its "
                      "name, e.g. `warpviz analyze transpose_pad`")

    an = sub.add_parser("analyze", help="analyse a scenario file or built-in")
    an.add_argument("scenario", metavar="FILE_OR_NAME")
    an.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a param")
    an.add_argument("--json", action="store_true", help="print the contract's JSON document")
    an.add_argument("--all", action="store_true", help="a trace (.wvtrace): also list the traced kernel's "
                    "memory instructions that no recorded warp executed")

    lay = sub.add_parser("layout", help="print or draw a CuTe or Triton layout (logical-to-physical map)",
                         description="Print a layout's logical-to-physical map as CuTe's print_layout does, "
                         "or draw it coloured by bank (--out). A CuTe layout gives its own shape; a Triton "
                         "layout needs --shape.")
    lay.add_argument("layout", metavar="LAYOUT", help='e.g. "Sw<3,3,3> o (8,64):(64,1)" or '
                     '"SwizzledSharedLayout(8, 1, 8, [1, 0])"')
    lay.add_argument("--shape", metavar="ROWS,COLS", help="the array's shape, extents 1..2^40 (Triton layouts "
                     "need it)")
    lay.add_argument("--array", metavar="NAME", help="LAYOUT is then a scenario (file or built-in): draw the "
                     "layout of its array NAME, whatever its kind (pad, swizzle, CuTe, Triton)")
    lay.add_argument("--type", default="half", help="element type (default half): sets the banks")
    lay.add_argument("--out", metavar="FILE", help="write a picture: .svg or .png")
    lay.add_argument("--size", metavar="WxH", help="picture size, e.g. 1920x1080 (width 64..7680, height "
                     "64..4320; default: what the grid needs to write every number)")
    lay.add_argument("--theme", default="light", help="light, dark, high-contrast or colorblind")

    mat = sub.add_parser("matrix", help="an ldmatrix / stmatrix instruction: rows, banks and register fragments; "
                         "a wgmma: its core matrices on the banks",
                         description="For one warp of one ldmatrix / stmatrix instruction of a scenario: which "
                         "lane gives each 16-byte row, its banks and wavefront, and which lane's register holds "
                         "each element. Printed as text, or drawn with --out.")
    mat.add_argument("scenario", metavar="FILE_OR_NAME")
    mat.add_argument("--instruction", "-i", type=bounded_int(1, MAX_INSTRUCTION, "--instruction"), metavar="K",
                     help="warp instruction, 1-based as on screen; "
                     "of a trace (.wvtrace), the instruction's number as `warpviz analyze` lists it "
                     f"(default: the first ldmatrix / stmatrix; 1..{MAX_INSTRUCTION:,})")
    mat.add_argument("--block", "-b", type=bounded_int(0, MAX_BLOCK_INDEX, "--block"), default=0,
                     help="linear block index (default 0; below the launch's number of blocks)")
    mat.add_argument("--warp", "-w", type=bounded_int(0, MAX_WARP_INDEX, "--warp"), default=0,
                     help=f"warp in the block (default 0; 0..{MAX_WARP_INDEX})")
    mat.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a param")
    mat.add_argument("--out", metavar="FILE", help="write a picture: .svg or .png")
    mat.add_argument("--size", metavar="WxH", help="picture size, width 64..7680, height 64..4320 (default: "
                     "every number at 16 px)")
    mat.add_argument("--theme", default="light", help="light, dark, high-contrast or colorblind")

    from .gpu.cli import add_parsers as add_gpu_parsers  # validate, bench (no GPU import here)

    add_gpu_parsers(sub)
    from .gpu.cli import add_calibrate_parser  # no GPU import until it runs

    add_calibrate_parser(sub)

    from .export_cli import add_parser as add_export_parser  # no Qt import until it runs
    from .gpu.trace_cli import add_parser as add_trace_parser  # no GPU import until it runs

    add_trace_parser(sub)
    from .gpu.replay_cli import add_parser as add_replay_parser  # replay, suggest (no GPU)

    add_replay_parser(sub)

    add_export_parser(sub)

    gui = sub.add_parser("gui", help="open the app (the default when no command is given)")
    gui.add_argument("scenario", nargs="?", metavar="FILE_OR_NAME")

    comp = sub.add_parser("completion", help="print the shell completion script (bash, zsh, fish)",
                          description="Print a script that completes warpviz's commands, options, built-in "
                          "scenarios' and shipped traces' names, and files, for your shell (argcomplete). "
                          "bash: add `eval \"$(warpviz completion bash)\"` to ~/.bashrc; zsh: the same with zsh "
                          "in ~/.zshrc; fish: `warpviz completion fish > ~/.config/fish/completions/warpviz.fish`.")
    comp.add_argument("shell", choices=SHELLS)
    for command in sub.choices.values():            # FILE_OR_NAME: built-ins, shipped traces and files
        for action in command._actions:
            if action.metavar in ("FILE_OR_NAME", "LAUNCH.toml") or action.dest in ("scenarios",):
                action.completer = _complete_names  # type: ignore[attr-defined]
    return p


def _complete_names(prefix: str, **_kw) -> list[str]:
    """argcomplete's candidates for FILE_OR_NAME: built-in scenarios, shipped traces, then files."""
    from .assets import trace_names
    from .scenario import builtin_names

    names = [n for n in builtin_names() + trace_names() if n.startswith(prefix)]
    try:
        from argcomplete.completers import FilesCompleter

        files = list(FilesCompleter()(prefix))
    except Exception:  # noqa: BLE001 - no argcomplete, an unreadable folder: names only
        files = []
    return names + files


def cmd_completion(args) -> int:
    """``warpviz completion bash|zsh|fish``: argcomplete's script for the ``warpviz`` command."""
    try:
        import argcomplete
    except ImportError as err:
        return _fail(f"shell completion needs argcomplete, which is not installed here ({err}). "
                     "Fix: pip install argcomplete")
    print(argcomplete.shellcode(["warpviz"], shell=args.shell), end="")
    return 0


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def builtin_tags() -> dict[str, list[str]]:
    """Each tag of the built-ins and the names that carry it (a lesson in an error too: its
    tags are read from the file as written)."""
    import tomllib

    from . import assets
    from .scenario import builtin_names

    out: dict[str, list[str]] = {}
    for name in builtin_names():
        try:
            raw = tomllib.loads((assets.scenario_dir() / f"{name}.toml").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        tags = raw.get("tags", [])
        for t in tags if isinstance(tags, list) else []:
            if isinstance(t, str):
                out.setdefault(t, []).append(name)
    return dict(sorted(out.items()))


def cmd_list(args) -> int:
    from .errors import safe_text
    from .scenario import ScenarioError, builtin_names, load

    tag = args.tag
    if getattr(args, "traces", False):
        return _list_traces()
    if args.tags or tag == "":
        for t, names in builtin_tags().items():
            print(f"{t}\t{len(names)}")
        return 0
    if tag is not None:
        known = builtin_tags()
        if tag not in known:
            return _fail(f"no built-in scenario has the tag {tag!r}; the tags are: "
                         + ", ".join(f"{t} ({len(n)})" for t, n in known.items())
                         + " (`warpviz list --tags` prints them)")
    for name in builtin_names():
        try:
            sc = load(name)
        except ScenarioError as err:
            if tag:
                continue
            print(f"{safe_text(name)}\t(invalid: {safe_text(err.problem)})")
            continue
        if tag and tag not in sc.tags:
            continue
        print(f"{safe_text(name)}\t{safe_text(sc.title)}")
    return 0


def _list_traces() -> int:
    """``warpviz list --traces``: each shipped trace's name and title (its header's)."""
    import unicodedata

    from .assets import trace_names, traces_dir
    from .trace import TraceError
    from .trace.tracefile import read_header

    for name in trace_names():
        try:
            title = str(read_header(traces_dir() / f"{name}.wvtrace").get("title") or "")
        except TraceError as err:
            title = f"(invalid: {err})"
        title = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in title)[:200]
        print(f"{name}\t{title}")
    return 0


def cmd_analyze(args) -> int:
    from .engine import analyze
    from .report import to_json, to_table
    from .scenario import ScenarioError, load, parse_overrides

    from .assets import trace_argument

    trace = trace_argument(args.scenario)     # a .wvtrace, or a shipped trace's name
    if trace is not None:
        from .gpu.trace_cli import cmd_analyze_trace

        return cmd_analyze_trace(trace, args.json, args.all)
    try:
        sc = load(args.scenario, parse_overrides(args.set))
        an = analyze(sc)
    except ScenarioError as err:
        return _fail(str(err))
    if args.json:
        print(json.dumps(to_json(an), indent=2))
    else:
        print(to_table(an))
    return 0


def _shape_arg(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    import re

    parts = re.split(r"\s*[,x×]\s*", text.strip().strip("[]").strip())
    from .argcheck import shown, to_int

    try:
        shape = tuple(to_int(x, "--shape", 1, 2**40) for x in parts)
    except ValueError as err:
        if "out of range" in str(err):
            raise ValueError(f"--shape {shown(text)}: out of range; give one or two extents of 1..2^40, "
                             "e.g. --shape 8,64") from None
        shape = ()
    if not 1 <= len(shape) <= 2 or any(n < 1 for n in shape):
        raise ValueError(f"--shape {text!r}: give one or two positive extents, e.g. --shape 8,64")
    return shape


def cmd_layout(args) -> int:
    from .layout import LayoutError
    from .layout_text import layout_map

    from .scenario import ScenarioError, load

    try:
        if args.array:
            from .api import array_map

            m = array_map(load(args.layout), args.array)
        else:
            m = layout_map(args.layout, _shape_arg(args.shape), args.type)
    except ScenarioError as err:
        return _fail(str(err))
    except LayoutError as err:
        fix = err.fix[:1].upper() + err.fix[1:] if err.fix else ""
        return _fail(f"{err.problem}." + (f" {fix.rstrip('.')}." if fix else ""))
    except ValueError as err:
        return _fail(str(err))
    from .export import export_layout_map

    return _print_or_export(m, args, export_layout_map)


def _print_or_export(m, args, export) -> int:
    """A map (layout or matrix) as text on stdout, or with --out as a picture through ``export``."""
    if not args.out:
        print(m.to_text())
        return 0
    from .export import ExportError, parse_size

    try:
        size = parse_size(args.size) if args.size else None
        res = export(m, args.out, size=size, theme=args.theme)
    except (ExportError, ValueError) as err:
        return _fail(str(err))
    print(f"wrote {res.path} ({res.size[0]}x{res.size[1]})")
    return 0


def cmd_matrix(args) -> int:
    """An ldmatrix / stmatrix instruction: who gives each row, its banks, who holds each element."""
    from .engine import analyze
    from .kinds.ldmatrix import matrix_map
    from .kinds.registry import kind_of
    from .scenario import ScenarioError, load, parse_overrides
    from .warp import warp_detail

    from .assets import trace_argument

    trace = trace_argument(args.scenario)
    if trace is not None:
        args.scenario = trace
        return _matrix_of_trace(args)
    try:
        sc = load(args.scenario, parse_overrides(args.set))
        analyze(sc)
        instrs = sc.instructions()
        def own_map(i):     # a kind that draws its own map (Kind.matrix_map: wgmma's core matrices)
            k = kind_of(sc.accesses[i.access].op)
            return k.matrix_map if k is not None else None

        def is_matrix(i):
            return sc.accesses[i.access].matrix is not None or own_map(i) is not None

        if args.instruction is None:
            pick = next((i for i in instrs if is_matrix(i)), None)
            if pick is None:
                return _fail(f"{args.scenario}: no access is ldmatrix or stmatrix (op = \"ldmatrix.x4\" ...) or wgmma "
                             "(op = \"wgmma\")")
        else:
            if not 1 <= args.instruction <= len(instrs):
                return _fail(f"--instruction {args.instruction}: the scenario has instructions 1-{len(instrs)}")
            pick = instrs[args.instruction - 1]
            if not is_matrix(pick):
                return _fail(f"--instruction {args.instruction} is a plain {sc.accesses[pick.access].op}, not "
                             "ldmatrix or stmatrix (or wgmma): give the number of a matrix instruction")
        if not 0 <= args.block < sc.launch.blocks or not 0 <= args.warp < sc.launch.warps_per_block:
            return _fail(f"--block {args.block} --warp {args.warp}: the launch has blocks 0-{sc.launch.blocks - 1}, "
                         f"warps 0-{sc.launch.warps_per_block - 1}")
        if own_map(pick) is not None:
            m = own_map(pick)(sc, pick, args.block, args.warp)
        else:
            m = matrix_map(warp_detail(sc, pick, args.block, args.warp))
    except ScenarioError as err:
        return _fail(str(err))
    from .export import export_matrix_map

    return _print_or_export(m, args, export_matrix_map)


def _matrix_of_trace(args) -> int:
    """``warpviz matrix FILE.wvtrace``: a traced ldmatrix / stmatrix instruction (``-i``: its
    number, as ``analyze`` lists it), at its first execution in the warp asked for (else in the
    first warp that ran it)."""
    from dataclasses import replace

    from .kinds.ldmatrix import matrix_map
    from .kinds.registry import trace_kind
    from .trace import TraceError
    from .trace.analysis import instruction_numbers, matrix_op
    from .trace.detail import TraceSource

    if args.set:
        return _fail(f"{args.scenario}: a trace has no params to set (--set); it shows what the kernel did. "
                     "Fix: change the launch file and record it again")
    try:
        src = TraceSource.open(args.scenario)
    except TraceError as err:
        return _fail(str(err))
    trace = src.trace
    numbers = instruction_numbers(trace)
    ops = {k: matrix_op(trace.instructions[k]) for k in numbers}
    own = {}                # a form that draws its own map (TraceForm.matrix_map: wgmma's core matrices)
    for k in numbers:
        f = trace_kind(trace.instructions[k].get("kind"))
        if f is not None and f.matrix_map is not None:
            ops[k] = own[k] = f.matrix_map
    matrix = [k for k in numbers if ops[k] is not None]
    if not matrix:
        return _fail(f"{args.scenario}: the traced kernel has no ldmatrix or stmatrix instruction; `warpviz matrix` "
                     f"shows those only. Fix: pick a trace of a kernel that uses them, or see `warpviz analyze "
                     f"{args.scenario}`")
    if args.instruction is None:
        pick = matrix[0]
    else:
        by_number = {n: k for k, n in numbers.items()}
        pick = by_number.get(args.instruction)
        if pick is None:
            return _fail(f"--instruction {args.instruction}: the traced kernel has instructions 1-{len(numbers)} "
                         f"(its ldmatrix / stmatrix: {', '.join(str(numbers[k]) for k in matrix)})")
        if ops[pick] is None:
            return _fail(f"--instruction {args.instruction} is a {trace.instructions[pick]['kind']}, not ldmatrix or "
                         f"stmatrix: give the number of one ({', '.join(str(numbers[k]) for k in matrix)})")
    if not 0 <= args.block < src.blocks or not 0 <= args.warp < src.warps:
        return _fail(f"--block {args.block} --warp {args.warp}: the launch has blocks 0-{src.blocks - 1}, "
                     f"warps 0-{src.warps - 1}")
    hit = src.first_execution([pick], args.block, args.warp)
    if hit is None:
        return _fail(f"{args.scenario}: no recorded warp executed instruction {numbers[pick]} (recorded blocks: "
                     f"{src.recorded_text()})")
    b, w, k = hit
    if (b, w) != (args.block, args.warp):
        print(f"warpviz: warp {args.warp} of block {args.block} did not execute instruction {numbers[pick]}; "
              f"showing warp {w} of block {b}", file=sys.stderr)
    if pick in own:
        m = own[pick](trace, pick, b, w, numbers[pick])
        from .export import export_matrix_map

        return _print_or_export(m, args, export_matrix_map)
    accesses = src.scenario.accesses
    if getattr(accesses[pick], "matrix", None) is None:
        # the picture's frame may not name the matrix op: give it the one the PTX has
        src.scenario = replace(src.scenario, accesses=accesses[:pick] + (replace(accesses[pick], matrix=ops[pick]),)
                               + accesses[pick + 1:])
    d = src.detail(b, w, k)
    # its header names the instruction by its number, not by its place in the warp's stream
    m = matrix_map(replace(d, instruction=replace(d.instruction, number=numbers[pick] - 1)))
    from .export import export_matrix_map

    return _print_or_export(m, args, export_matrix_map)


def cmd_gui(args) -> int:
    from .assets import trace_argument

    trace = trace_argument(args.scenario) if getattr(args, "scenario", None) else None
    if trace is not None:
        args.scenario = trace
        # a trace that cannot be read is refused here, with the reason, before any window opens
        from .trace import TraceError
        from .trace.tracefile import load as load_trace

        try:
            load_trace(args.scenario)
        except TraceError as err:
            return _fail(str(err))
    try:
        from .app.main import run_app
    except ImportError as err:  # the app's Qt parts are not installed or not built yet
        return _fail(f"the app cannot start: {err}")
    return run_app(getattr(args, "scenario", None))


def _opens_in_the_app(word: str) -> bool:
    """``warpviz WORD`` opens the app: WORD is a file that exists, a built-in scenario's or a
    shipped trace's name."""
    from .assets import path_exists, named_trace, scenario_dir

    if path_exists(Path(word)):
        return not Path(word).is_dir()          # a folder is not a file to open
    if "/" in word or "\\" in word or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}", word):
        return False
    return path_exists(scenario_dir() / f"{word}.toml") or named_trace(word) is not None


def _unknown_word(word: str) -> int:
    from .assets import path_exists

    # repr: no control character reaches the terminal; a long one keeps its end (the file's own name)
    shown = repr(word if len(word) <= 80 else word[:30] + "..." + word[-47:])
    looks_like_a_file = "/" in word or "\\" in word or word.endswith((".toml", ".wvtrace"))
    if path_exists(Path(word)):                                            # only a folder gets here
        what = f"{shown} is a folder, not a scenario or trace file"
    else:
        what = f"{shown}: no such file" if looks_like_a_file else f"unknown command or file {shown}"
    return _fail(f"{what}; commands: {', '.join(COMMANDS)}. A scenario file, a trace file, a built-in scenario's "
                 "name (`warpviz list`) or a shipped trace's name (`warpviz list --traces`) opens the app; "
                 "`warpviz --help` says more")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "_ARGCOMPLETE" in os.environ:                 # the shell asks for completions (warpviz completion SHELL)
        try:
            import argcomplete
        except ImportError:
            return 1
        argcomplete.autocomplete(_parser())
    if not argv:
        argv = ["gui"]
    elif argv[0] not in COMMANDS and not argv[0].startswith("-"):
        if not _opens_in_the_app(argv[0]):
            return _unknown_word(argv[0])
        argv = ["gui", *argv]
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:      # argparse: --help, --version, or a refused argument (exit 2, its message)
        return stop.code if isinstance(stop.code, int) else 2
    from .gpus import GpuDescriptionError, active

    try:                            # $WARPVIZ_GPU names the GPU; a wrong name is one paragraph, exit 2
        active()
    except GpuDescriptionError as err:
        return _fail(str(err))
    from .export_cli import cmd_export
    from .gpu.cli import cmd_calibrate
    from .gpu.cli import cmd_bench, cmd_validate
    from .gpu.doctor import cmd_gpu_check
    from .gpu.trace_cli import cmd_trace
    from .gpu.replay_cli import cmd_replay, cmd_suggest

    handler = {"list": cmd_list, "analyze": cmd_analyze, "gui": cmd_gui, "layout": cmd_layout, "matrix": cmd_matrix,
               "validate": cmd_validate, "bench": cmd_bench, "export": cmd_export,
               "trace": cmd_trace, "calibrate": cmd_calibrate, "completion": cmd_completion,
               "gpu-check": cmd_gpu_check, "replay": cmd_replay, "suggest": cmd_suggest}.get(args.command)
    if handler is None:
        return _fail(f"`{args.command}` is not available in this build")
    # Every line a command prints, its error paragraph included, goes out through
    # ``SafeStream``: a title, a file name, a PTX or source line or a compiler's message
    # from a file cannot steer the terminal (docs/trace-format.md, "What analyze prints"). JSON
    # keeps its long lines whole (json.dumps escapes every control and non-ASCII character).
    from .errors import MAX_LINE, SafeStream

    # (a layout's map is as wide as its columns: its lines are escaped, not cut)
    limit = None if getattr(args, "json", False) or args.command == "layout" else MAX_LINE
    out, err = sys.stdout, sys.stderr
    # (no stream at all under pythonw: nothing to wrap)
    sys.stdout, sys.stderr = (None if s is None else SafeStream(s, limit) for s in (out, err))
    try:
        return _run(handler, args)
    finally:
        for s in (sys.stdout, sys.stderr):
            try:
                if s is not None:
                    s.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = out, err


def _run(handler, args) -> int:
    from .fileio import WriteError

    try:
        return handler(args)
    except WriteError as err:       # any write of a file the user named (a full disk, a FIFO): one sentence, exit 2
        return _fail(str(err))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
