"""Text from files reaches the terminal escaped and cut: a shared trace, a
calibration or results file, a launch file's PTX or a scenario cannot send a terminal an
escape sequence (OSC 52 sets the clipboard, OSC 0 the window title, CSI 2J clears the
screen), reorder what is read with bidirectional overrides, or print millions of characters."""

from __future__ import annotations

import io
import json
import unicodedata
import zipfile
from pathlib import Path

from viz.cli import main
from viz.errors import MAX_FIELD, MAX_LINE, SafeStream, cut, escape_controls, safe_text

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "assets" / "traces" / "transpose_pad.wvtrace"
EVIL = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07\u202eevil\u2066x\x9b31m\u200b\x7f"
RAW = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\u2066", "\u200b")


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean(text: str) -> None:
    bad = sorted({repr(c) for c in text if c in RAW})
    assert not bad, f"raw control characters printed: {bad}"


# ---------------------------------------------------------------------------- the function


def test_safe_text_escapes_controls_and_bidi_and_keeps_readable_text():
    got = safe_text("T" + EVIL + "\t矩阵 ×", limit=None)
    assert got == ("T\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\\x1b]0;pwned\\x07\\u202eevil\\u2066x\\x9b31m\\u200b\\x7f"
                   "\t矩阵 ×")
    assert safe_text("a\nb") == "a\\x0ab"                 # a field stays one line
    assert safe_text("a\nb\r", newlines=True) == "a\nb\\x0d"
    assert safe_text(None) == ""


def test_every_control_and_format_character_of_unicode_is_escaped():
    # the ranges are hand-listed for speed: checked here against this Python's Unicode tables
    missed = [hex(n) for n in range(0x110000) if chr(n) not in "\t\n"
              and unicodedata.category(chr(n)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
              and escape_controls(chr(n)) == chr(n)]
    assert missed == []


def test_cut_says_how_much_it_cut():
    assert cut("x" * 10, 4) == "xxxx...[6 characters cut]"
    assert cut("x" * 4, 4) == "xxxx"
    assert safe_text("A" * 400_000) == "A" * MAX_FIELD + f"...[{400_000 - MAX_FIELD:,} characters cut]"


def test_safe_stream_escapes_across_writes_and_cuts_long_lines():
    buf = io.StringIO()
    s = SafeStream(buf, line_limit=10)
    s.write("ab\x1b")
    s.write("[2J" + "y" * 20 + "\nok\u202e\n")
    s.flush()
    # ten characters of the line as printed (an escape counts as written), then the count of the rest
    assert buf.getvalue() == "ab\\x1b[2Jy...[19 characters cut]\nok\\u202e\n"
    assert s.getvalue() == buf.getvalue()          # the rest is the wrapped stream's


# ---------------------------------------------------------------------------- the commands


def _evil_trace(tmp_path: Path, long: int = 4000) -> Path:
    with zipfile.ZipFile(TRACE) as z:
        members = {n: z.read(n) for n in z.namelist()}
    h = json.loads(members["header.json"])
    h["title"] = "T" + EVIL
    h["name"] = "n" + EVIL
    h["kernel"] = "K" * long
    h["gpu"] = {**h["gpu"], "name": "G" + EVIL}
    name = h["source_name"]
    h["sources"] = {name: h["sources"][name].replace("\n", "\n// " + EVIL + "X" * long + "\n", 20)}
    for i in h["instructions"]:
        i["ptx"] = i["ptx"] + EVIL + "P" * long
        i["file"] = "f" + EVIL
    members["header.json"] = json.dumps(h).encode()
    out = tmp_path / "shared.wvtrace"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return out


def test_analyze_of_a_hostile_trace_prints_no_escape_and_is_bounded(tmp_path, capsys):
    path = _evil_trace(tmp_path)
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 0, err
    assert_clean(out + err)
    assert "\\x1b]52;c;" in out and "\\u202eevil" in out          # shown, as escapes
    # 16 instructions, each naming a 4,000-character PTX line and file: every field is cut
    assert out.count("characters cut]") >= 17
    assert len(out) < 40_000
    assert max(len(line) for line in out.splitlines()) <= MAX_LINE + 40


def test_analyze_json_of_a_hostile_trace_is_ascii_json_with_the_text_intact(tmp_path, capsys):
    path = _evil_trace(tmp_path, long=10)
    code, out, err = run(capsys, "analyze", str(path), "--json")
    assert code == 0, err
    assert out.isascii()                # json.dumps' ensure_ascii: bidi and controls as \uXXXX
    doc = json.loads(out)
    assert doc["scenario"] == "T" + EVIL                         # the data itself is not altered


def test_huge_entry_names_in_a_ptx_give_a_short_message(tmp_path, capsys):
    ents = []
    for k in range(24):
        name = f"k{k}_" + "A" * 400_000
        ents.append(f".visible .entry {name}(\n\t.param .u64 {name}_p0\n)\n{{\n\tret;\n}}\n")
    (tmp_path / "k.ptx").write_text(".version 8.0\n.target sm_80\n.address_size 64\n\n" + "\n".join(ents))
    (tmp_path / "k.launch.toml").write_text('format = 2\nptx = "k.ptx"\nkernel = "nope"\nblock = [32]\n'
                                            'grid = [1]\n[[arg]]\ntype = "float*"\ncount = 32\n')
    code, out, err = run(capsys, "trace", str(tmp_path / "k.launch.toml"))
    assert code == 2
    assert "has no kernel `nope`" in err and "characters cut]" in err and "Fix:" in err
    assert len(out + err) < 6_000           # was 9.6 million characters


def test_calibration_file_device_name_is_escaped(tmp_path, capsys):
    doc = json.loads((ROOT / "assets" / "calibration" / "nvidia-h100-80gb-hbm3.json").read_text())
    doc["device"]["name"] = "H100" + EVIL + "N" * 900     # under the file check's 1,000, over the 300 printed
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "calibrate", "--show", str(path))
    assert code == 0, err
    assert_clean(out + err)
    assert out.startswith("H100\\x1b]52;") and "characters cut]" in out.splitlines()[0]
    assert len(out.splitlines()[0]) < 600
    doc["device"]["name"] = "H100" + EVIL + "N" * 5000    # a longer one: the file is refused, still escaped
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "calibrate", "--show", str(path))
    assert code == 2 and "device.name must be a short text" in err
    assert_clean(out + err)


def test_results_file_names_are_escaped(tmp_path, capsys):
    src = ROOT / "assets" / "measurements" / "h100-traces.json"
    doc = json.loads(src.read_text())
    first = next(iter(doc["traces"]))
    doc["traces"] = {first + EVIL: doc["traces"][first], **doc["traces"]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "bench", "--traces", "--show", str(path))
    assert code == 0, err
    assert_clean(out + err)
    assert "\\x1b]52;c;" in out


def test_an_error_that_quotes_a_scenario_is_escaped(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('title = "x"\ncompare = "' + EVIL.replace("\x1b", "\\u001b").replace("\x07", "\\u0007")
                 .replace("\x9b", "\\u009b").replace("\x7f", "\\u007f") + '"\n[launch]\nblock = [32]\n'
                 'grid = [1]\n[arrays]\ns = { space = "shared", type = "float", shape = [32] }\n'
                 '[[access]]\nop = "load"\nat = "s[lane]"\n')
    code, out, err = run(capsys, "analyze", str(p))
    assert code == 2
    assert "compare" in err
    assert_clean(out + err)


def test_a_scenario_title_is_escaped_in_analyze(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('title = "t\\u001b]0;pwned\\u0007\\u202e' + "L" * 1000 + '"\n[launch]\nblock = [32]\n'
                 'grid = [1]\n[arrays]\ns = { space = "shared", type = "float", shape = [32] }\n'
                 '[[access]]\nop = "load"\nat = "s[lane]"\n')
    code, out, err = run(capsys, "analyze", str(p))
    assert code == 0, err
    assert_clean(out + err)
    assert out.splitlines()[0].startswith("t\\x1b]0;pwned\\x07\\u202eLLL") and "characters cut]" in out


def test_nothing_printed_by_the_stream_wrapper_outlives_the_command(capsys):
    import sys

    before = sys.stdout, sys.stderr
    run(capsys, "list")
    assert (sys.stdout, sys.stderr) == before


def test_exports_own_progress_line_still_reaches_a_terminal(tmp_path, monkeypatch, qapp):
    """warpviz's own carriage return and erase-line on a terminal are not escaped: only text
    from files is (the progress line goes to the stream SafeStream wraps)."""
    import sys

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["export", "coalesced", "--out", str(tmp_path / "a.png"), "-i", "1"]) == 0
    assert "\rwarpviz: rendering 1/1" in tty.getvalue() and "\r\x1b[K" in tty.getvalue()
    assert sys.stderr is tty


def test_a_trace_the_app_refuses_before_opening_is_reported_escaped(tmp_path, capsys):
    """The file's own name can hold escapes too (a name a shell's * hands over)."""
    with zipfile.ZipFile(TRACE) as z:
        members = {n: z.read(n) for n in z.namelist()}
    h = json.loads(members["header.json"])
    h["format"] = "warpviz-trace" + EVIL
    members["header.json"] = json.dumps(h).encode()
    path = tmp_path / "bad\x1b]0;pwned\x07\u202e.wvtrace"
    with zipfile.ZipFile(path, "w") as z:
        for k, v in members.items():
            z.writestr(k, v)
    code, out, err = run(capsys, "gui", str(path))
    assert code == 2 and "bad\\x1b]0;pwned\\x07\\u202e.wvtrace: not a warpviz trace" in err
    assert_clean(out + err)


def test_a_wide_layout_map_is_printed_whole(capsys):
    code, out, err = run(capsys, "layout", "(4,2048):(2048,1)")
    assert code == 0, err
    assert "characters cut" not in out and max(len(line) for line in out.splitlines()) > MAX_LINE
