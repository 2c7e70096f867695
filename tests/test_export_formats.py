"""The one table of export formats (viz/export_formats.py) is what the exporter, the CLI,
the API and the export dialog read: each of them follows a change of the table."""

from __future__ import annotations

import pytest

from viz import export, export_formats
from viz.export_formats import FORMATS, NAMES, SEQUENCE, STILLS, VIDEOS


def test_the_table_lists_each_format_once_with_a_writer_in_the_exporter():
    assert NAMES == ("mp4", "webm", "gif", "png", "svg", "png-sequence")
    assert len(set(NAMES)) == len(NAMES) == 6
    assert STILLS == ("png", "svg") and VIDEOS == ("mp4", "webm")
    for f in FORMATS:
        assert callable(getattr(export, f.writer)), f.writer
        assert f.label() and f.label() != f.name
        assert set(f.options) <= {"fps", "hold", "title_card"}
        assert not (f.video and not f.animated)
    assert [f.name for f in FORMATS if f.is_folder] == [SEQUENCE]


@pytest.mark.parametrize("fmt", [f for f in FORMATS if not f.is_folder], ids=lambda f: f.name)
def test_the_exporter_picks_each_format_by_its_extension(fmt, tmp_path):
    assert export.output_kind(tmp_path / f"x{fmt.extension}") == fmt.name
    assert export.output_kind(tmp_path / f"x{fmt.extension.upper()}") == fmt.name


def test_an_unknown_extension_names_every_format_of_the_table(tmp_path):
    with pytest.raises(export.ExportError) as info:
        export.output_kind(tmp_path / "x.doc")
    assert ".mp4, .webm, .gif, .png, .svg, or a folder" in str(info.value)
    assert export.output_kind(tmp_path / "folder/") == SEQUENCE


def test_a_video_format_needs_an_even_size_and_the_others_do_not():
    odd = export.Settings(size=(641, 360))
    for f in FORMATS:
        if f.video:
            with pytest.raises(export.ExportError, match="even width and height"):
                export.check_settings(odd, f.name)
        else:
            export.check_settings(odd, f.name)


def test_the_cli_help_names_each_format(capsys):
    from viz.cli import main

    try:
        code = main(["export", "--help"])
    except SystemExit as done:                 # argparse's --help
        code = done.code
    assert code == 0
    text = " ".join(capsys.readouterr().out.split())
    for f in FORMATS:
        if not f.is_folder:
            assert f"{f.extension}: {f.label()}" in text


def test_the_api_takes_the_table_s_stills_for_prefer_and_save(tmp_path):
    import viz.api as api

    sc = api.scenario("transpose-tile")
    with pytest.raises(api.ApiError, match="'png', 'svg'"):
        sc.frame(prefer="gif")
    with pytest.raises(export.ExportError, match=r"saved as \.png or \.svg"):
        sc.frame().save(tmp_path / "x.gif")
    assert not (tmp_path / "x.gif").exists()
    assert export_formats.extensions_text(STILLS, "or") == ".png or .svg"     # (nothing painted: no Qt here)
