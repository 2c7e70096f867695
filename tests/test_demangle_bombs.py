"""A mangled C++ name that makes the demangler explode: back-references let a name of 189
characters demangle to 6 MB of text and one of 453 to terabytes (each template argument
list repeats the one before twice). warpviz demangles in a process of its own with a memory
and time limit (viz.trace.names.demangle): such a name is shown as it is, the names around
it are demangled, and warpviz's own memory does not grow."""

from __future__ import annotations

import resource

from viz.trace import names as N


def bomb(levels: int) -> str:
    def b36(n: int) -> str:
        digits, s = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
        while True:
            s, n = digits[n % 36] + s, n // 36
            if n == 0:
                return s
    name = "_Z1f1AIiE"
    for i in range(levels):
        ref = f"S{b36(2 * i)}_"
        name += f"1AI{ref}{ref}E"          # A<previous, previous>: the text doubles at each level
    return name


def test_the_bomb_is_what_it_says():
    """18 levels: 6,291,369 characters of text from a 189-character name (the C++ runtime's
    demangler in this process, as it is called for one checked name, refuses it over the cap)."""
    six = bomb(18)
    assert len(six) == 189
    assert N._cxa() is None or N._cxa_demangle(six) is None          # 6 MB > MAX_DEMANGLED_CHARS
    assert N._cxa() is None or N._cxa_demangle(bomb(2)) == "f(A<int>, A<A<int>, A<int> >, A<A<A<int>, A<int> >, " \
                                                            "A<A<int>, A<int> > >)"


def test_a_name_that_explodes_is_shown_as_it_is_and_its_neighbours_are_demangled():
    N._DEMANGLED.clear()
    huge = bomb(40)                                   # 453 characters, terabytes of text
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = N.demangle(["_Z3fooi", huge, "c_kernel", "_Z3bari", bomb(18)])
    assert got == {"_Z3fooi": "foo(int)", huge: huge, "c_kernel": "c_kernel", "_Z3bari": "bar(int)",
                   bomb(18): bomb(18)}
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024     # KiB: under 64 MiB more
    assert [e.demangled for e in N.entries_of([huge, "_Z3fooi"])] == [huge, "foo(int)"]


def test_an_overlong_name_is_not_demangled():
    long_name = "_Z" + str(N.MAX_MANGLED_CHARS) + "a" * N.MAX_MANGLED_CHARS
    assert N.demangle([long_name]) == {long_name: long_name}
