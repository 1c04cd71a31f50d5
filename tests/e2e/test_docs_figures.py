"""What the README and the pages of docs/ say the server's tools/list costs is what it costs.

A line that quotes a number of tools and a size in bytes (or a row of a table with a tools and a bytes column) says
what it measured in a comment the reader does not see, `<!-- tools-list: --profile memory -->`: serve settings,
`--profile`, and schema files loaded first. Each such configuration is served here and listed; the line must hold
its number of tools and its size (compact JSON, UTF-8, as `schema_bytes` counts it). A quote without the comment
fails too, and `<!-- tools-list: other: whose -->` marks figures that are not this server's. (docs/development/
docs.md says the same for writers.)"""

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import settings_env
from tests.e2e import readme_blocks as rb
from write_gate import cli
from write_gate.serving.assembly import open_backend
from write_gate.serving.config import Settings
from write_gate.store.migrations import migrate
from write_gate.store.schema_files import load_into_graph, read_sources
from write_gate.surface.server import build_server
from write_gate.surface.tool_schemas import schema_bytes

pytestmark = pytest.mark.anyio

ANNOTATION = re.compile(r"<!--\s*tools-list:\s*(.*?)\s*-->")
COUNT = re.compile(r"\b\d[\d,]*\s+tools\b", re.IGNORECASE)
SIZE = re.compile(r"\b\d[\d,]*(?:\.\d+)?\s*(?:B|bytes|KB|kB|KiB)\b")
NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)|\d+")
SEPARATOR = re.compile(r"^\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$")
OTHER = "other:"


@dataclass(frozen=True)
class Quote:
    where: str
    text: str  # the line, its code spans and its comment left out
    spec: str | None  # what the comment says was measured; None: it does not say


def figure_table(header: str) -> bool:
    cells = [cell.strip().lower() for cell in header.strip().strip("|").split("|")]
    return any(re.search(r"\btools\b", c) for c in cells) and any(
        re.search(r"\bbytes\b|^(b|kb|size)$", c) for c in cells
    )


def quotes(text: str, where: str) -> list[Quote]:
    """Each line of a Markdown text that quotes tool-list figures, outside fences and code spans."""
    found: list[Quote] = []
    lines = text.splitlines()
    fenced, in_figure_table = False, False
    for n, raw in enumerate(lines):
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        line = rb.prose(raw)
        if fenced or SEPARATOR.match(line.strip()):
            continue
        if line.lstrip().startswith("|"):
            if n + 1 < len(lines) and SEPARATOR.match(lines[n + 1].strip()):  # a table's header
                in_figure_table = figure_table(line)
                continue
        else:
            in_figure_table = False
        comment = ANNOTATION.search(line)
        bare = ANNOTATION.sub("", line)
        if comment or in_figure_table or (COUNT.search(bare) and SIZE.search(bare)):
            found.append(Quote(f"{where} line {n + 1}", bare, comment.group(1) if comment else None))
    return found


def quoted() -> list[Quote]:
    return [q for path in rb.documents() for q in quotes(rb.text_of(path), str(path.relative_to(rb.ROOT)))]


def numbers(text: str) -> set[int]:
    return {int(n.replace(",", "")) for n in NUMBER.findall(text)}


def test_figures_are_found_in_lines_and_tables() -> None:
    """The reading rules themselves, on a text that holds each kind of quote and each kind of non-quote."""
    text = "\n".join(
        [
            "The gate lists 39 tools in 37,535 B.",  # 1: a quote without a comment
            "It lists 39 tools in 37,535 bytes <!-- tools-list: --profile gate -->.",  # 2
            "`12 tools, 9,000 B` in a code span, and 12 tools alone.",  # not a quote
            "```",
            "14 tools, 10,000 B",  # in a fence: not a quote
            "```",
            "| profile | tools | bytes |",
            "|---|---|---|",
            "| memory <!-- tools-list: --profile memory --> | 36 | 32,947 |",  # 9
            "| gate | 39 | 37,535 |",  # 10: a row without a comment
            "",
            "| code | when |",
            "|---|---|",
            "| X | 9 tools refused |",  # another table: not a quote
        ]
    )
    found = quotes(text, "t")
    assert [(q.where, q.spec) for q in found] == [
        ("t line 1", None),
        ("t line 2", "--profile gate"),
        ("t line 9", "--profile memory"),
        ("t line 10", None),
    ]
    assert numbers(found[2].text) == {36, 32947}


def configuration(spec: str) -> tuple[str, dict[str, str], list[Path]]:
    """A comment's `--profile NAME`, `VAR=value` settings and schema paths."""
    words, profile, env, paths = shlex.split(spec), "gate", {}, []
    while words:
        word = words.pop(0)
        if word == "--profile":
            profile = words.pop(0)
        elif re.fullmatch(r"[A-Z][A-Z0-9_]*=.*", word):
            env[word.partition("=")[0]] = word.partition("=")[2]
        elif word.startswith("-"):
            raise AssertionError(f"{spec!r}: {word} is not measured here: give it as its WRITE_GATE_ setting")
        else:
            paths.append(rb.ROOT / word)
    cli.parser().parse_args(["serve", "--profile", profile])  # a profile `serve` does not offer fails here
    return profile, env, paths


async def measure(settings: Settings, spec: str, monkeypatch: pytest.MonkeyPatch, n: int) -> tuple[int, int]:
    """The tools a client lists from a fresh server so configured, on a graph of its own (the n-th), and their size."""
    profile, env, paths = configuration(spec)
    own = settings.model_copy(update={"graph_name": f"{settings.graph_name}_{n}"})
    for name in [name for name in os.environ if name.startswith("WRITE_GATE_")]:  # none left from the last one
        monkeypatch.delenv(name)
    for name, value in {**settings_env(own), **env}.items():
        monkeypatch.setenv(name, value)
    configured = Settings()
    backend = await open_backend(configured)
    try:
        await migrate(backend)
        if paths:
            await load_into_graph(backend, read_sources(paths))
    finally:
        await backend.close()
    async with Client(build_server(configured, profile=profile, auto_migrate=False)) as client:
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools]
    return len(tools), schema_bytes(tools)


async def test_quoted_tool_list_figures_are_the_servers(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    found = quoted()
    unsaid = [q.where for q in found if q.spec is None]
    assert unsaid == [], f"tool-list figures that do not say what they measure (<!-- tools-list: ... -->): {unsaid}"
    measured: dict[str, tuple[int, int]] = {}
    for quote in found:
        assert quote.spec is not None
        if quote.spec.startswith(OTHER):
            continue
        if quote.spec not in measured:
            measured[quote.spec] = await measure(settings, quote.spec, monkeypatch, len(measured))
        tools, size = measured[quote.spec]
        assert {tools, size} <= numbers(quote.text), (
            f"{quote.where} quotes figures the server no longer has: serving `{quote.spec}` lists {tools} tools "
            f"in {size:,} bytes: {quote.text.strip()}"
        )
    assert measured, "no page quotes a measured tool-list figure: this test would hold nothing"
