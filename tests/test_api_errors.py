"""viz.api raises only warpviz's own errors: every public function and method, called with
arbitrary argument values, returns or raises a viz.errors.WarpvizError (with the message
the command line prints), never an AttributeError, TypeError, RecursionError or another
built-in error."""

from __future__ import annotations

import contextlib
import inspect
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viz import api
from viz.errors import WarpvizError
from viz.export import ExportError

pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


SC = api.scenario("transpose-tile")
LD = api.scenario("ldmatrix-x4-tile")
CUTE = api.scenario("cute-sw128-tile")
AN = SC.analyze()
PIC = SC.frame(instruction=1, size=(320, 180))
MAP = api.layout_map("(8,8):(8,1)")
VIDEO = SC.animation(instructions="1", frames="last", size=(320, 180))
TRACE = api.open_trace(Path(__file__).resolve().parents[1] / "assets" / "traces" / "copy_float.wvtrace")

# Every public function and method of viz.api (the properties and reprs take no argument).
TARGETS = {
    "scenario": api.scenario, "to_toml": api.to_toml, "layout_map": api.layout_map, "array_map": api.array_map,
    "Scenario": api.Scenario, "Analysis": api.Analysis, "Picture": api.Picture, "Layout": api.Layout,
    "Matrix": api.Matrix, "Video": api.Video,
    "Scenario.with_params": SC.with_params, "Scenario.frame": SC.frame, "Scenario.frames": SC.frames,
    "Scenario.animation": SC.animation, "Scenario.layout_map": CUTE.layout_map,
    "Scenario.matrix_map": LD.matrix_map, "Analysis.__getitem__": AN.__getitem__,
    "Picture.save": PIC.save, "Layout.save": MAP.save, "Video.save": VIDEO.save,
    # tracing: without a GPU (as here) they refuse with TraceFailed, after checking their arguments
    "open_trace": api.open_trace, "trace_launch": api.trace_launch, "trace_ptx": api.trace_ptx,
    "trace_triton": api.trace_triton, "triton_launch": api.triton_launch, "Trace": api.Trace,
    "TraceAnalysis": api.TraceAnalysis, "Trace.picture": TRACE.picture, "Trace.animation": TRACE.animation,
    "Trace.save": TRACE.save, "Trace.replay": TRACE.replay, "Trace.suggest": TRACE.suggest,
}
PUBLIC = {name for name in api.__all__}


def test_the_targets_are_every_public_function_and_method():
    names = set()
    for name in PUBLIC:
        obj = getattr(api, name)
        if inspect.isfunction(obj):
            names.add(name)
        elif inspect.isclass(obj) and not issubclass(obj, Exception):
            names.add(name)
            names |= {f"{name}.{m}" for m, f in vars(obj).items()
                      if inspect.isfunction(f) and (not m.startswith("_") or m == "__getitem__")}
    # png(), svg(), mp4(), text(), the DataFrames take no argument; what is left takes arguments and is fuzzed
    assert names - set(TARGETS) == {"Picture.png", "Picture.svg", "Layout.text", "Matrix.text", "Video.mp4",
                                    "Analysis.json", "Analysis.table", "Scenario.analyze", "Trace.analysis",
                                    "Analysis.metrics_frame", "Analysis.to_dataframe"}


def values():
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-3, 70), st.floats(),
                        st.text(max_size=12), st.sampled_from(["all", "last", "1", "1-3", "png", "svg", "light",
                                                               "tile", "half", "(8,8):(8,1)", "transpose-tile",
                                                               "x.png", "x.gif", "\x00", "a" * 300]),
                        st.binary(max_size=4), st.just(object()), st.just(SC), st.just(AN))
    return st.one_of(scalars, st.lists(scalars, max_size=3), st.tuples(scalars, scalars),
                     st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), scalars, max_size=3),
                     st.recursive(scalars, lambda x: st.lists(x, max_size=2), max_leaves=40))


@st.composite
def calls(draw):
    name = draw(st.sampled_from(sorted(TARGETS)))
    fn = TARGETS[name]
    args, kwargs = [], {}
    positional = True           # until one is left out or given by name
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            named = set(inspect.signature(fn).parameters)     # a name of its own is not a **keyword
            for key in draw(st.lists(st.sampled_from([k for k in ["block", "grid", "arrays", "access", "params",
                                                                  "launch", "title", "PAD", "TILE"]
                                                      if k not in named]), max_size=3, unique=True)):
                kwargs[key] = draw(values())
        elif p.kind is p.VAR_POSITIONAL:
            continue
        elif p.default is not p.empty and draw(st.booleans()):
            positional = False
        elif p.kind is p.KEYWORD_ONLY or not positional or (p.default is not p.empty and draw(st.booleans())):
            positional = False
            kwargs[p.name] = draw(values())
        else:
            args.append(draw(values()))
    return name, args, kwargs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_any_arguments_give_a_result_or_a_warpviz_error(call):
    name, args, kwargs = call
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):      # a save() writes here, if anywhere
        try:
            TARGETS[name](*args, **kwargs)
        except WarpvizError as err:
            msg = str(err)
            assert msg and "\n" not in msg.strip(), (name, msg)


@pytest.mark.parametrize("call, error, message", [
    (lambda: api.scenario(toml=123), api.ApiError, "scenario(): toml must be a string, not 123 (int)."),
    (lambda: SC.frame(size="x"), api.ApiError, "frame(): size must be (width, height) in pixels, not 'x' (str). "
                                               "E.g. size=(1280, 720)."),
    (lambda: SC.frame(size=(10, 10)), api.ApiError, "frame(): size's width is 10, outside 64..7680."),
    (lambda: SC.frame(instruction=99), ExportError, "instruction '99' is outside 1..16"),
    (lambda: SC.frames(1, warp=17), ExportError, "warp '17' is outside 0..7"),
    (lambda: SC.animation(fps=float("nan")), api.ApiError, "animation(): fps must be a finite number, not nan"),
    (lambda: SC.with_params(PAD=[1]), api.ApiError, "with_params(): params['PAD'] must be a whole number or an "
                                                     "expression string, not [1] (list)."),
    (lambda: api.scenario("transpose-tile", set={"PAD": 2 ** 70}), api.ApiError,
     "scenario(): set['PAD'] is 1180591620717411303424, outside -4,611,686,018,427,387,904..4,611,686,018,427,387,904"),
    (lambda: api.to_toml([1]), api.ApiError, "to_toml(): fields must be a dict of the scenario's tables"),
    (lambda: api.scenario(block=[32], arrays={"a": {"shape": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}}),
     api.ApiError, "is nested more than 16 levels deep"),
    (lambda: AN["nope"], api.UnknownMetric, "Analysis(): [metric] 'nope' (str) is not one of the figures"),
    (lambda: PIC.save(None), api.ApiError, "save(): path must be a file name (str or pathlib.Path), not None"),
    (lambda: PIC.save("x" * 5000 + ".png"), ExportError, "the path is 5,004 bytes long, over the 4,096"),
    (lambda: api.layout_map("(8,8):(8,1)", shape=(0, 8)), api.ApiError, "layout_map(): shape's extent is 0"),
])
def test_bad_arguments_are_named_in_one_paragraph(call, error, message):
    with pytest.raises(error) as err:
        call()
    assert isinstance(err.value, WarpvizError) and message in str(err.value), str(err.value)


def test_the_errors_keep_the_built_in_bases_callers_catch():
    with pytest.raises(ValueError):
        api.scenario(toml=123)
    with pytest.raises(KeyError):
        AN["nope"]
    assert str(pytest.raises(KeyError, lambda: AN[1]).value).startswith("Analysis(): [metric] 1 (int)")


HUGE = 10 ** 5000          # past Python's 4,300-digit limit: str() and int() of it raise ValueError


@pytest.mark.parametrize("call, message", [
    (lambda: api.scenario("transpose-tile", set={"TILE": HUGE}), "scenario(): set['TILE'] is a whole number of "
                                                                 "about 5,001 digits, outside -4,611,686"),
    (lambda: api.scenario("transpose-tile", set={"TILE": "9" * 5000}), "5000 characters long, more than the 2000"),
    (lambda: api.scenario("transpose-tile", set={"TILE": 1e308}), "must be a whole number or an expression string"),
    (lambda: SC.with_params(TILE=-HUGE), "with_params(): params['TILE'] is a whole number of about 5,001 digits"),
    (lambda: SC.frame(HUGE), "frame(): instruction is a whole number of about 5,001 digits"),
    (lambda: SC.frame(1, HUGE), "frame(): frame is a whole number of about 5,001 digits"),
    (lambda: SC.frame(1, "9" * 5000), "--frames 999999999999999999999999…(5,000 digits): out of range"),
    (lambda: SC.frame(1, block=HUGE), "frame(): block is a whole number of about 5,001 digits, outside 0..9,223"),
    (lambda: SC.frame(1, warp=40), "frame(): warp is 40, outside 0..31"),
    (lambda: SC.frame(1, size=(HUGE, 100)), "frame(): size's width is a whole number of about 5,001 digits, "
                                            "outside 64..7680"),
    (lambda: SC.frame(1, scale=HUGE), "frame(): scale is a whole number of about 5,001 digits, outside 0.25..8"),
    (lambda: SC.frame(1, scale=1e9), "frame(): scale is 1e+09, outside [0.25, 8]"),
    (lambda: SC.frames(HUGE), "frames(): instruction is a whole number of about 5,001 digits, outside 1..10,000,000"),
    (lambda: SC.animation("9" * 5000), "instruction 999999999999999999999999…(5,000 digits): out of range"),
    (lambda: SC.animation(1, fps=HUGE), "animation(): fps is a whole number of about 5,001 digits, outside 1..240"),
    (lambda: LD.matrix_map(HUGE), "matrix_map(): instruction is a whole number of about 5,001 digits"),
    (lambda: api.layout_map("SwizzledSharedLayout(8, 1, 8, [1, 0])", shape=(HUGE, 8)),
     "layout_map(): shape's extent is a whole number of about 5,001 digits"),
])
def test_huge_numbers_are_refused_with_the_argument_named(call, message):
    """A 5,000-digit number, 1e308 or a 5,000-digit string: a WarpvizError naming the argument
    and its range, never the ValueError or OverflowError from deep inside."""
    with pytest.raises(WarpvizError) as err:
        call()
    assert message in str(err.value), str(err.value)


@pytest.mark.parametrize("call, message", [
    (lambda: TRACE.picture(HUGE), "picture(): i is a whole number of about 5,001 digits"),
    (lambda: TRACE.picture(1, block=HUGE), "picture(): block is a whole number of about 5,001 digits, outside 0..63"),
    (lambda: TRACE.animation(1, frames=HUGE), "animation(): frames is a whole number of about 5,001 digits"),
    (lambda: api.trace_launch(Path(__file__).resolve().parents[1] / "kernels" / "copy_2d.launch.toml", blocks=[0, HUGE]),
     "trace(): blocks is a whole number of about 5,001 digits"),
    (lambda: api.trace_ptx(".version 8.0\n.target sm_90\n", "k", grid=(HUGE,)),
     "trace_ptx(): grid[0] is a whole number of about 5,001 digits, past any launch CUDA takes"),
    (lambda: api.trace_ptx(".version 8.0\n.target sm_90\n", "k", shared_bytes=HUGE),
     "trace_ptx(): shared_bytes is a whole number of about 5,001 digits"),
])
def test_huge_numbers_given_to_traces_are_refused_with_the_argument_named(call, message):
    with pytest.raises(WarpvizError) as err:
        call()
    assert str(err.value).startswith(message) or message in str(err.value), str(err.value)
