"""The fenced blocks of README.md and of the documentation site's pages (docs/), each with a stable id, and the
comparison of a real answer with a shown one.

The documents are read in the order a reader meets them: README.md (the site's home), then the pages in the order
of mkdocs.yml's `nav`, then any page under docs/ that the nav does not name (the strict build refuses those, but
their blocks are still found here, so none escapes its test)."""

import re
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"
HOME = "index.md"  # the site's home page: README.md, made so by docs/_hooks/readme_home.py
# `<!-- readme-test: ID -->` on the line before a fence names the block (where its first line is not unique).
MARKER = re.compile(r"<!--\s*readme-test:\s*(\S+)\s*-->")

# Fields an answer may legitimately hold with another value than the README shows, and why. Nothing else.
VARYING = {
    "last_updated": "the time of the write",
    "created_at": "the time of the first write",
    "written_by": "the agent: the README shows one, the test's client has its own name",
    "updated_by": "the agent, as written_by",
}


@dataclass(frozen=True)
class Block:
    path: Path  # the document
    line: int  # of the opening fence, for messages
    lang: str
    text: str
    key: str  # the marker, else the first line

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)} line {self.line}"


def nav_pages(nav: Any) -> list[str]:
    """The page paths of an mkdocs `nav`, in order: a page is a string, a titled page or section a one-key map."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return [page for item in nav for page in nav_pages(item)]


@cache
def documents() -> tuple[Path, ...]:
    """README.md, then the site's pages in nav order, then the pages the nav leaves out."""
    listed = [DOCS / page for page in nav_pages(yaml.safe_load(MKDOCS.read_text(encoding="utf-8"))["nav"])]
    pages = [page for page in listed if page != DOCS / HOME]
    unlisted = sorted(set(DOCS.rglob("*.md")) - set(pages))
    return (README, *pages, *unlisted)


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def blocks(path: Path | None = None) -> list[Block]:
    """Every fenced block of one document, or of all of them in reading order."""
    if path is None:
        return [found for document in documents() for found in parsed(document)]
    return list(parsed(path))


@cache  # the documents do not change while the tests run; each test asks for blocks many times
def parsed(path: Path) -> tuple[Block, ...]:
    lines = text_of(path).splitlines()
    found, i = [], 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("```"):  # indented fences too (in a list item), so none escapes
            i += 1
            continue
        start, lang = i, lines[i].lstrip()[3:].strip()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```"))
        body = lines[start + 1 : end]
        marker = MARKER.search(lines[start - 1]) if start else None
        key = marker.group(1) if marker else body[0].strip()
        found.append(Block(path, start + 1, lang, "\n".join(body) + "\n", key))
        i = end + 1
    return tuple(found)


def prose(line: str) -> str:
    """A line without its code spans: a marker or figure shown as code is an example, not one."""
    return re.sub(r"`[^`]*`", "", line)


def markers() -> list[tuple[Path, int, str]]:
    """Every `readme-test` marker: its document, line and id (a marker must stand right before a fence)."""
    return [
        (path, n, match.group(1))
        for path in documents()
        for n, line in enumerate(text_of(path).splitlines(), 1)
        if (match := MARKER.search(prose(line)))
    ]


def commands(block: Block) -> list[str]:
    """The commands of a `sh` block: continuation lines joined, comments and shown output dropped."""
    out: list[str] = []
    pending = ""
    for raw in block.text.splitlines():
        line = raw.split("  #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not pending and (not line or re.match(r"^wg_", line)):  # a token printed by the line before
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        out.append(" ".join((pending + line.strip()).split()))
        pending = ""
    return out


def ids(all_blocks: list[Block]) -> list[str]:
    """What must be run or exempt: every command of a `sh` block, every other block by its key."""
    return [c for b in all_blocks for c in (commands(b) if b.lang == "sh" else [b.key])]


def block(key: str) -> Block:
    matches = [b for b in blocks() if b.key == key]
    assert len(matches) == 1, f"the README and docs have {len(matches)} blocks keyed {key!r}"
    return matches[0]


def sh_block(command: str) -> Block:
    """The `sh` block that holds this command."""
    matches = [b for b in blocks() if b.lang == "sh" and command in commands(b)]
    assert len(matches) == 1, f"the README and docs have {len(matches)} sh blocks with {command!r}"
    return matches[0]


def argv(command: str) -> list[str]:
    return shlex.split(command)


def assert_matches(actual: Any, shown: Any, where: str = "answer") -> None:
    """`actual` is what the README shows: "..." stands for any value, a `"...": "..."` entry for more keys,
    and the VARYING fields only need to be present."""
    if shown == "...":
        return
    if isinstance(shown, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is not an object"
        keys = set(shown) - {"..."}
        missing, extra = keys - set(actual), set(actual) - keys
        assert not missing, f"{where}: missing {sorted(missing)} in {actual!r}"
        assert "..." in shown or not extra, f"{where}: not shown in the README: {sorted(extra)} in {actual!r}"
        for key in keys:
            if key not in VARYING:
                assert_matches(actual[key], shown[key], f"{where}.{key}")
        return
    if isinstance(shown, list):
        assert isinstance(actual, list) and len(actual) == len(shown), f"{where}: {actual!r} is not {shown!r}"
        for n, (a, s) in enumerate(zip(actual, shown, strict=True)):
            assert_matches(a, s, f"{where}[{n}]")
        return
    assert actual == shown and type(actual) is type(shown), f"{where}: {actual!r}, the README shows {shown!r}"
