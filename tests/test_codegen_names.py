"""A scenario's file name and title go into the CUDA source that the SASS tab, `validate` and
`bench` compile only as one line of a comment: a newline, a carriage
return, ``*/``, a trailing backslash or a trigraph in them cannot add a line of code."""

from __future__ import annotations

import pytest

from viz.gpu.codegen import generate, kernel_name
from viz.kinds.codegen import c_comment
from viz.scenario import load, loads, resolve
from viz.toolchain.compile import CompileError, compile_cubin, find_nvcc

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")

NAMES = ["x\n#error pwned\n", "*/ bad /*", "a\r#error carriage", "ends in a backslash \\", "tri??/",
         "v\x0b#error vt\x0c#error ff", "sep\u2028#error ls\u2029#error ps", "bidi\u202e#error"]
TITLE = 'title\\n#error title\\n */ #error close /* \\\\'         # as written in the TOML file


def _hostile(tmp_path, name: str):
    text = resolve("transpose-tile").read_text()
    first = next(ln for ln in text.splitlines() if ln.startswith("title = "))
    text = text.replace(first, f'title = "{TITLE}"', 1)
    if "/" in name:           # not a file name on this system: the name a caller gives (viz.api)
        return loads(text, source="<text>", name=name)
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return load(p)


def _code_lines(source: str) -> list[str]:
    return [ln for ln in source.splitlines() if not ln.lstrip().startswith("//")]


@pytest.mark.parametrize("name", NAMES)
def test_a_hostile_file_name_and_title_stay_inside_one_comment(tmp_path, name):
    sc = _hostile(tmp_path, name)
    assert sc.name == name and "\n#error title\n" in sc.title
    src = generate(sc).source
    code = _code_lines(src)
    assert not [ln for ln in code if "#error" in ln or "pwned" in ln or "bad" in ln]
    head = next(ln for ln in src.splitlines() if ln.startswith("// warpviz kernel for "))
    assert "#error title" in head                       # kept readable, on the one comment line
    comments = [ln for ln in src.splitlines() if ln.lstrip().startswith("//")]
    assert not [ln for ln in comments if "/*" in ln or "*/" in ln or ln.rstrip().endswith("\\") or "??" in ln]
    # the bench's kernel name from the label is an identifier
    assert kernel_name(3, name).isidentifier()


def test_c_comment():
    assert c_comment("a\n#error x\r\n*/ y /*\\") == "a #error x * / y / * /"
    assert c_comment("??/??=") == "?/?="
    assert c_comment("矩阵 32×33") == "矩阵 32×33"
    assert c_comment("\x1b[2J\u202e") == "?[2J?"
    assert c_comment("A" * 500) == "A" * 200 + "..."


@needs_nvcc
def test_the_generated_source_of_hostile_names_compiles(tmp_path):
    sources = [generate(_hostile(tmp_path, n), name=kernel_name(k, n)).source for k, n in enumerate(NAMES)]
    for src in sources:
        try:
            compile_cubin(src, use_cache=False)
        except CompileError as err:         # an injected #error line would stop nvcc here
            pytest.fail(f"nvcc refused the generated source: {err}")
