"""The layout built-ins' notes, checked in the model: what the plain tile would cost, and
that the three spellings of the 128-byte swizzle are one map."""

from __future__ import annotations

import re

import numpy as np
import pytest

from viz.engine import analyze
from viz.layout_text import layout_map
from viz.scenario import load, loads


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def per_instruction(sc, access):
    rows = analyze(sc).per_access()
    a = rows[access]
    return a.wavefronts / a.warp_instructions, a.bank_conflicts / a.warp_instructions


def plain(name, shape):
    sc = load(name)
    text = re.sub(r'^layout\s*=.*$', f"shape = {shape}" if shape else "", sc.text, count=1, flags=re.M)
    assert text != sc.text
    return loads(text, source=name)


def test_cute_sw128_tile_against_the_plain_tile():
    sc = load("cute-sw128-tile")
    assert per_instruction(sc, 0) == (4, 0) and per_instruction(sc, 1) == (4, 0)
    p = plain("cute-sw128-tile", "[64, 8]")
    assert per_instruction(p, 0) == (4, 0)          # "as without the swizzle"
    assert per_instruction(p, 1) == (32, 28)        # "the plain tile needs 32 wavefronts, 28 of them conflicts"
    assert "4 wavefronts, 0 conflicts" in sc.notes and "32 wavefronts, 28 of them conflicts" in sc.notes


def test_triton_swizzled_tile_against_the_plain_tile():
    sc = load("triton-swizzled-tile")
    assert per_instruction(sc, 0) == (1, 0)
    assert per_instruction(sc, 1) == (4, 3)
    p = plain("triton-swizzled-tile", None)        # the file gives the shape
    assert per_instruction(p, 0) == (1, 0)
    assert per_instruction(p, 1)[0] == 32            # "where the plain tile needs 32"
    assert "4 wavefronts, 3 of them conflicts" in sc.notes


def test_the_128_byte_swizzle_spelled_three_ways_is_one_map():
    """Sw<3,4,3> on bytes = Sw<3,3,3> on halves = Sw<3,0,3> on 16-byte chunks = tma:128B."""
    chunks = layout_map("Sw<3,0,3> o (64,8):(8,1)", None, "int4").offsets
    halves = layout_map("Sw<3,3,3> o (64,64):(64,1)", None, "half").offsets
    bytes_ = layout_map("Sw<3,4,3> o (64,128):(128,1)", None, "char").offsets
    for r in range(64):
        for c in range(8):
            assert halves[r, 8 * c] == 8 * chunks[r, c]
            assert bytes_[r, 16 * c] == 16 * chunks[r, c]
            assert np.array_equal(halves[r, 8 * c:8 * c + 8], 8 * chunks[r, c] + np.arange(8))
    tma = loads(load("cute-sw128-tile").text.replace('layout = "Sw<3,0,3> o (64,8):(8,1)"',
                                                     'shape = [64, 8]\nswizzle = "tma:128B"'), source="tma")
    assert analyze(tma).metrics == analyze(load("cute-sw128-tile")).metrics


def test_guide_layout_example_figures():
    """docs/guide/writing-scenarios.md: the swizzled column read is 4 wavefronts, plain 32."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "writing-scenarios.md").read_text()
    text = re.search(r"```toml\n(format = 2\ntitle = \"A 128-byte swizzled half tile, column read\".*?)```",
                     page, re.S).group(1)
    assert per_instruction(loads(text), 0) == (4, 0)
    plain_text = text.replace('layout = "Sw<3,0,3> o (64,8):(8,1)"', "shape = [64, 8]")
    assert per_instruction(loads(plain_text), 0) == (32, 28)


def test_api_compare_animation_from_the_guide():
    from viz import api

    tile = api.scenario("transpose-tile")
    v = tile.animation(instructions=9, compare=tile.with_params(PAD=1), labels=("plain", "padded"))
    assert v.pictures >= 2
