"""Every relative link of every Markdown file of the product resolves inside the repository
(the file exists; a #fragment names a heading of that file, as GitHub makes its anchors),
and nothing points to the project's shared folder outside it, which a clone does not have.
No page still holds a placeholder for figures to be measured on the H100."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = "../" + "shared"          # spelled so that this file does not mention it
SKIP_DIRS = {".git", ".venv", "venv", "build", "dist", "node_modules", "__pycache__", ".pytest_cache",
             ".hypothesis", ".mypy_cache"}


def tracked_files() -> list[Path]:
    """The repository's files: git's list where this is a checkout, else a walk of the tree."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=600).stdout
        files = [ROOT / p for p in out.decode("utf-8").split("\0") if p]
        if files:
            return [p for p in files if p.is_file()]
    except (OSError, subprocess.CalledProcessError):
        pass
    return [p for p in ROOT.rglob("*") if p.is_file() and not SKIP_DIRS & set(p.relative_to(ROOT).parts)]


FILES = tracked_files()
MARKDOWN = sorted(p for p in FILES if p.suffix.lower() == ".md")
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.M)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text without code blocks and code spans (links there are examples, not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    body = prose(text)
    found = [m.group(1) for m in INLINE.finditer(body)] + [m.group(1) for m in REFERENCE.finditer(body)]
    return [t[1:-1] if t.startswith("<") else t for t in found]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed
    (letters, digits, '-', '_' and spaces stay), spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)     # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for m in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        s = slug(m.group(2))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    out |= set(re.findall(r"""<a\s+(?:name|id)=["']([^"']+)["']""", path.read_text(encoding="utf-8")))
    return out


def test_the_product_has_its_references():
    names = {p.relative_to(ROOT).as_posix() for p in MARKDOWN}
    assert {"README.md", "docs/scenario-format.md", "docs/memory-model.md", "docs/guide/README.md"} <= names
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for ref in ("docs/scenario-format.md", "docs/memory-model.md"):
        assert f"]({ref}" in readme, f"README does not link {ref}"
    assert sum(len(links(p.read_text(encoding="utf-8"))) for p in MARKDOWN) > 50


@pytest.mark.parametrize("page", MARKDOWN, ids=[p.relative_to(ROOT).as_posix() for p in MARKDOWN])
def test_relative_links_resolve_inside_the_repository(page):
    bad = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
            continue                                        # https:, mailto:, ...
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.is_relative_to(ROOT):
            bad.append(f"{target}: outside the repository")
        elif not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix.lower() == ".md" and fragment not in anchors(dest):
            bad.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT).as_posix()}")
    assert not bad, f"{page.relative_to(ROOT).as_posix()}: " + "; ".join(bad)


def test_github_slugs():
    assert slug("The JSON document (`--json`)") == "the-json-document---json"
    assert slug("Where warpviz refines the rules (measured on the H100)") == \
        "where-warpviz-refines-the-rules-measured-on-the-h100"
    assert slug("How it works (`viz/gpu/`, no Qt; PyCUDA only in `runner.py`, imported lazily)") == \
        "how-it-works-vizgpu-no-qt-pycuda-only-in-runnerpy-imported-lazily"


def test_no_file_points_outside_the_repository_to_the_shared_folder():
    found = [p.relative_to(ROOT).as_posix() for p in FILES if OUTSIDE.encode() in p.read_bytes()]
    assert not found, f"these files mention {OUTSIDE!r}, which a clone does not have: {found}"


PLACEHOLDER = "\u27e8H100"          # the marker of a figure still to be measured: ⟨H100: ...⟩ / ⟨H100：...⟩


def placeholders(text: str) -> list[str]:
    """The lines of a page that hold the placeholder marker, stripped."""
    return [ln.strip() for ln in text.splitlines() if PLACEHOLDER in ln]


def test_the_placeholder_finder_finds_both_spellings():
    page = "intro\n\u27e8H100: paste the output\u27e9\ntext\n\u27e8H100\uff1a\u7c98\u8d34\u27e9\n\u27e8 not one\n"
    assert placeholders(page) == ["\u27e8H100: paste the output\u27e9", "\u27e8H100\uff1a\u7c98\u8d34\u27e9"]


def test_no_page_holds_a_placeholder_for_h100_figures():
    found = {p.relative_to(ROOT).as_posix(): placeholders(p.read_text(encoding="utf-8")) for p in MARKDOWN}
    found = {k: v for k, v in found.items() if v}
    assert not found, f"pages still waiting for measured figures (fill them from a real run): {found}"
