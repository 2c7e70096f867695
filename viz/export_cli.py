"""`warpviz export FILE_OR_NAME --out PATH [options]`: the command line of ``viz.export``.

Every problem the user can fix (path, extension, size, fps, a missing ffmpeg, a full disk,
an invalid scenario or selection) is one line on stderr and exit status 2; Ctrl-C stops the
export, leaves nothing behind and exits 130.
"""

from __future__ import annotations

import argparse
import sys

from . import export_formats
from .argcheck import MAX_SCALE, MIN_SCALE, bounded_float

HELP_FRAMES = ("frames of each instruction: numbers and ranges (1-based), first, last, or kinds "
               "(compute, request, wavefront, line, summary), comma-separated; default: all "
               "(a .png/.svg: last, the summary)")


def _formats_text() -> str:
    """``.mp4: MP4 video (H.264); ...``: each file format of ``viz.export_formats`` and what it is."""
    return "; ".join(f"{f.extension}: {f.label()}" for f in export_formats.FORMATS if not f.is_folder)


def add_parser(sub) -> None:
    ex = sub.add_parser(
        "export", help=f"render the animation or one frame to {export_formats.extensions_text()} or a PNG folder",
        description="Render frames with the app's painter, without a screen. The format follows the "
                    f"extension of --out: {_formats_text()}, or a folder (ending in /) for a PNG sequence.")
    ex.add_argument("scenario", metavar="FILE_OR_NAME", help="a scenario (file or built-in) or a recorded trace "
                    "(.wvtrace: --instruction then picks steps of each warp's own stream, the header's \"step k of n\")")
    ex.add_argument("--out", "-o", required=True, metavar="PATH", help="the file (or folder/) to write")
    ex.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a param")
    ex.add_argument("--instruction", "-i", default="all", metavar="RANGE",
                    help="warp instructions, 1-based as on screen: 9, 9-12, 1,5 or all (default)")
    ex.add_argument("--block", "-b", default="0", metavar="RANGE", help="linear block index (default 0)")
    ex.add_argument("--warp", "-w", default="0", metavar="RANGE", help="warp in the block (default 0)")
    ex.add_argument("--frames", "-f", metavar="SPEC", help=HELP_FRAMES)
    ex.add_argument("--size", default="1080p", help="720p, 1080p (default), 4k or WIDTHxHEIGHT "
                    "(width 64..7680, height 64..4320)")
    ex.add_argument("--fps", type=bounded_float(1, 240, "--fps"), default=10.0,
                    help="video frame rate, 1..240 (default 10: each picture is held, so more only costs time)")
    ex.add_argument("--hold", type=bounded_float(0.001, 600, "--hold"), default=1.0, metavar="SECONDS",
                    help="how long each frame is shown, 0.001..600 (default 1)")
    ex.add_argument("--theme", default="light", help="light (default), dark, high-contrast, colorblind")
    ex.add_argument("--scale", type=bounded_float(MIN_SCALE, MAX_SCALE, "--scale"), default=1.0,
                    help=f"type size factor, {MIN_SCALE:g}..{MAX_SCALE:g}, e.g. 1.3 for a large hall")
    ex.add_argument("--no-captions", action="store_true", help="leave out the caption bar")
    ex.add_argument("--title", help="the title bar's text (default: the scenario's title)")
    ex.add_argument("--no-title", action="store_true", help="leave out the title bar")
    ex.add_argument("--title-card", action="store_true", help="open the video with a title card")
    cmp_ = ex.add_mutually_exclusive_group()
    cmp_.add_argument("--compare", nargs="?", const="", metavar="OTHER_FILE_OR_NAME",
                      help="a second layout, side by side; without a name, the scenario's partner "
                           "(its `compare` key, as Ctrl+M in the app)")
    cmp_.add_argument("--compare-set", action="append", default=[], metavar="NAME=VALUE",
                      help="the same scenario with this param changed, side by side (repeatable)")
    ex.add_argument("--rows", default="auto", metavar="ROWS",
                    help="lane rows: auto (default: those that fit at the smallest type; the picture names any it "
                         "leaves out), all (every row, folded as deep as it takes), or a comma list of "
                         "lane, thread, index, addr")
    ex.add_argument("--labels", nargs=2, metavar=("LEFT", "RIGHT"), help="titles of the two sides")
    ex.add_argument("--png-sequence", action="store_true", help="write frame_00001.png ... into the --out folder")
    ex.add_argument("--quiet", "-q", action="store_true", help="no progress or summary")


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def _compare_labels(sc, compare_set: dict[str, str]) -> tuple[str, str]:
    before = ", ".join(f"{k} = {sc.params.get(k, '?')}" for k in compare_set)
    after = ", ".join(f"{k} = {v}" for k, v in compare_set.items())
    return before, after


def _open_trace(path: str):
    """A recorded trace for the painter (``viz.trace.detail``); TraceError when it cannot be read."""
    from .trace.detail import open_source

    return open_source(path)


def cmd_export(args) -> int:
    from .export import ExportCancelled, ExportError, Settings, export, parse_size, selection, trace_selection
    from .scenario import ScenarioError, load, parse_overrides, partner_path
    from .trace import TraceError

    try:
        overrides = parse_overrides(args.set)
        from .assets import trace_argument

        trace = trace_argument(args.scenario) is not None       # a .wvtrace, or a shipped trace's name
        if trace:
            args.scenario = trace_argument(args.scenario)
            if args.set or args.compare_set:
                return _fail(f"{args.scenario}: a trace has no params to set (--set, --compare-set); it shows "
                             "what the kernel did. Fix: change the launch file and record it again")
            if args.compare == "":
                return _fail(f"--compare: {args.scenario} is a trace; name the trace or scenario to compare "
                             "with, e.g. --compare other.wvtrace")
            sc = _open_trace(args.scenario)
        else:
            sc = load(args.scenario, overrides)
        compare = labels = None
        if args.compare and trace_argument(args.compare) is not None:
            compare = _open_trace(trace_argument(args.compare))
            labels = (sc.title, compare.title)
        elif args.compare is not None:
            other = args.compare or partner_path(sc)
            if other is None:
                return _fail(f"--compare: {args.scenario} names no scenario to compare with; "
                             "give one, e.g. --compare transpose-tile-pad")
            compare = load(other, overrides)
            labels = (sc.title, compare.title)
        elif args.compare_set:
            changed = parse_overrides(args.compare_set)
            unknown = [k for k in changed if k not in sc.params]
            if unknown:
                return _fail(f"--compare-set: {', '.join(unknown)} is not a param of {args.scenario} "
                             f"(its params: {', '.join(sc.params) or 'none'})")
            compare = load(args.scenario, {**overrides, **changed})
            labels = _compare_labels(sc, changed)
        if args.labels:
            labels = tuple(args.labels)
        if trace:
            sel = trace_selection(sc, args.instruction, args.block, args.warp, args.frames)
        else:
            sel = selection(sc, args.instruction, args.block, args.warp, args.frames)
        title = "" if args.no_title else args.title
        from .argcheck import parse_rows

        try:
            parse_rows(args.rows)
        except ValueError as err:
            return _fail(f"--rows: {err}")
        settings = Settings(size=parse_size(args.size), fps=args.fps, hold=args.hold, theme=args.theme,
                            scale=args.scale, captions=not args.no_captions, title=title,
                            title_card=args.title_card, rows=args.rows)
        show = not args.quiet and sys.stderr.isatty()
        tty = getattr(sys.stderr, "wrapped", sys.stderr)    # warpviz's own \r and erase-line (not a file's)

        def progress(done: int, total: int) -> None:
            if show:
                print(f"\rwarpviz: rendering {done}/{total}", end="", file=tty, flush=True)

        try:
            res = export(sc, args.out, settings, sel, compare=compare, labels=labels,
                         png_sequence=args.png_sequence, progress=progress)
        finally:
            if show:
                print("\r\033[K", end="", file=tty, flush=True)
    except (ScenarioError, ExportError, TraceError) as err:
        return _fail(str(err))
    except ExportCancelled:
        return _fail("export cancelled; nothing was written")
    except KeyboardInterrupt:
        print("warpviz: export interrupted; nothing was written", file=sys.stderr)
        return 130
    if not args.quiet:
        w, h = res.size
        fmt = export_formats.get(res.format)
        if fmt.still:
            what = "1 frame"
        else:
            what = f"{res.pictures} pictures" + (f", {res.video_frames} video frames at {args.fps:g} fps"
                                                 if fmt.video else "")
            what += f", {res.seconds:.1f} s"
        print(f"wrote {res.path} ({res.format}, {w}x{h}, {what})")
    return 0
