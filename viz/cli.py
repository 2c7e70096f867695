"""Command line: `warpviz [FILE]`, `list`, `analyze` (reference: docs/scenario-format.md)."""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__

COMMANDS = ("list", "analyze", "export", "validate", "bench", "trace", "gui")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warpviz", description="See how a GPU serves a warp's memory accesses.")
    p.add_argument("--version", action="version", version=f"warpviz {__version__}")
    sub = p.add_subparsers(dest="command")

    ls = sub.add_parser("list", help="list the built-in scenarios (name<TAB>title)")
    ls.add_argument("--tag", help="only scenarios with this tag")

    an = sub.add_parser("analyze", help="analyse a scenario file or built-in")
    an.add_argument("scenario", metavar="FILE_OR_NAME")
    an.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a param")
    an.add_argument("--json", action="store_true", help="print the contract's JSON document")

    from .gpu.cli import add_parsers as add_gpu_parsers  # validate, bench (no GPU import here)

    add_gpu_parsers(sub)

    from .export_cli import add_parser as add_export_parser  # no Qt import until it runs
    from .trace.cli import add_parser as add_trace_parser  # no GPU import until it runs

    add_trace_parser(sub)

    add_export_parser(sub)

    gui = sub.add_parser("gui", help="open the app (the default when no command is given)")
    gui.add_argument("scenario", nargs="?", metavar="FILE_OR_NAME")
    return p


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def cmd_list(args) -> int:
    from .scenario import ScenarioError, builtin_names, load

    for name in builtin_names():
        try:
            sc = load(name)
        except ScenarioError as err:
            if args.tag:
                continue
            print(f"{name}\t(invalid: {err.problem})")
            continue
        if args.tag and args.tag not in sc.tags:
            continue
        print(f"{name}\t{sc.title}")
    return 0


def cmd_analyze(args) -> int:
    from .engine import analyze
    from .report import to_json, to_table
    from .scenario import ScenarioError, load, parse_overrides

    if args.scenario.endswith(".wvtrace"):
        from .trace.cli import cmd_analyze_trace

        return cmd_analyze_trace(args.scenario, args.json)
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


def cmd_gui(args) -> int:
    if str(getattr(args, "scenario", None) or "").endswith(".wvtrace"):
        return _fail(f"{args.scenario}: traces do not open in the app yet. Fix: use "
                     f"`warpviz analyze {args.scenario}` (add --json for the whole document)")
    try:
        from .app.main import run_app
    except ImportError as err:  # the app's Qt parts are not installed or not built yet
        return _fail(f"the app cannot start: {err}")
    return run_app(getattr(args, "scenario", None))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        argv = ["gui", *argv]
    args = _parser().parse_args(argv)
    from .export_cli import cmd_export
    from .gpu.cli import cmd_bench, cmd_validate
    from .trace.cli import cmd_trace

    handler = {"list": cmd_list, "analyze": cmd_analyze, "gui": cmd_gui,
               "validate": cmd_validate, "bench": cmd_bench, "export": cmd_export,
               "trace": cmd_trace}.get(args.command)
    if handler is None:
        return _fail(f"`{args.command}` is not available in this build")
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
