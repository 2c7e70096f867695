"""PTX text built to make a parser backtrack or loop over it quadratically: each case is
parsed to its exact result (the suite's faulthandler_timeout dumps the stacks should one
ever hang again), and a module over the size limits is refused, naming the limit, before a
line of it is parsed."""

from __future__ import annotations

import pytest

from viz.trace import TraceError, module
from viz.trace import ptx as P
from viz.trace.launch import MAX_PTX_LINES, check_ptx_text
from viz.trace.pyargs import ArgumentError, write_launch_folder

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
ENTRY = ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n"


@pytest.mark.parametrize("text, problem", [
    ("\n" * 200_000, "no `.version` line"),                  # minutes before: ^\s* under re.M
    ("   \n" * 200_000, "no `.version` line"),
    (".version 8.0\n" + "\n" * 200_000, "no `.target` line"),
    (".version 8.0\n.target sm_90\n" + " \n" * 200_000, "not 64-bit"),
])
def test_header_of_blank_lines(text, problem):
    with pytest.raises(module.PtxModuleError, match=problem):
        module.header(text)


def test_header_still_reads_its_directives():
    h = module.header("// made by hand\n\n  .version 8.4 \r\n\t.target sm_90a, debug\n.address_size\t64\n")
    assert (h.version, h.target, h.address_size) == ((8, 4), "sm_90a", 64)


def test_a_line_of_letters_without_a_semicolon():
    p = P.parse(HEAD + ENTRY + "a" * 100_000 + "\nld.global.f32 %f1, [%rd1];\n}\n")
    assert [(i.line_no, i.kind, i.address) for i in p.instrs] == [(9, "load", "%rd1")]


def test_a_long_opcode():
    p = P.parse(HEAD + ENTRY + "ld.global" + ".a" * 50_000 + "\n}\n")
    assert p.instrs == []


def test_brackets_that_never_close():
    with pytest.raises(P.PtxError, match="no address operand"):
        P.parse(HEAD + ENTRY + "ld.global.f32 %f1, " + "[" * 100_000 + ";\n}\n")


def test_func_parentheses_that_never_close():
    text = HEAD + ".func (" * 30_000 + "\n"
    assert module.entry_names(text) == []
    assert P.parse(text).instrs == []


def test_many_statements_on_one_line():
    p = P.parse(HEAD + ENTRY + "ld.global.f32 %f1, [%rd1]" + ";" * 100_000 + "x\n}\n")
    assert [(i.line_no, i.kind) for i in p.instrs] == [(8, "load")]
    assert len(p.lines) == 8 + 100_000 + 1 + 1        # one line a statement: 99,999 empty ones and `x`


def test_many_atomics_whose_results_go_unused():
    n = 20_000
    body = "".join(f"atom.global.add.u32 %r{i}, [%rd1], 1;\n" for i in range(n))
    p = P.parse(HEAD + ENTRY + body + "add.u32 %r7, %r7, 1;\n}\n")
    kinds = [i.kind for i in p.instrs]
    assert len(kinds) == n
    assert kinds.count("reduction") == n - 1 and kinds[7] == "atomic"     # only %r7 is read again


def test_atomic_read_in_another_function_is_unused_here():
    text = (HEAD + ".visible .entry a()\n{\natom.global.add.u32 %r1, [%rd1], 1;\n}\n"
            ".visible .entry b()\n{\nadd.u32 %r1, %r1, 1;\natom.global.add.u32 %r1, [%rd1], 1;\n}\n")
    assert [i.kind for i in P.parse(text).instrs] == ["reduction", "atomic"]


def test_too_many_lines_refused_before_parsing(tmp_path):
    text = HEAD + ENTRY + "\n" * MAX_PTX_LINES + "}\n"
    with pytest.raises(TraceError, match=f"over warpviz's limit of {MAX_PTX_LINES:,}"):
        check_ptx_text(tmp_path / "k.launch.toml", text)
    with pytest.raises(ArgumentError, match=f"over warpviz's limit of {MAX_PTX_LINES:,}"):
        write_launch_folder(tmp_path / "launch", text, "k", (1,), (32,), [None])
    assert not (tmp_path / "launch").exists()


def test_data_file_swapped_for_a_fifo_is_refused_not_waited_on(tmp_path):
    """A launch's ``npy:`` data checked, then swapped for a FIFO before it is read again at
    launch time (``read_data``): refused on the opened file (before: ``open`` waited for a
    writer that never comes)."""
    import os
    from pathlib import Path

    import numpy as np

    from viz.trace.launch import load_launch, read_data

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    ptx = (Path(__file__).parent / "data" / "ptx" / "triton_add.ptx").read_text()
    x = np.arange(4096, dtype=np.float32)
    p = write_launch_folder(tmp_path, ptx, "add_kernel", (4,), 128, [x, x, x, 4096, None, None])
    la = load_launch(p)
    assert read_data(la.args[0]) == x.tobytes()
    (tmp_path / "arg1.npy").unlink()
    os.mkfifo(tmp_path / "arg1.npy")
    with pytest.raises(TraceError, match=r"named pipe \(FIFO\), not a data file"):
        read_data(la.args[0])
    with pytest.raises(TraceError, match=r"the data file .arg1.npy. is not a regular file"):
        load_launch(p)
