"""The documentation site builds strictly, offline, and reads nothing from elsewhere; the README stays a page a
newcomer reads in five minutes, with its two commands first. (What the pages' blocks do: test_readme.py.)"""

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e import readme_blocks as rb

README_MOST_LINES = 300


def test_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link or anchor, a page the nav leaves out or names wrongly, fails it. The
    home page is the README, every page of the nav is built, and no page loads a script, a style or a font from
    another site (the build fetches nothing either: this machine reaches no such site)."""
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(rb.MKDOCS), "--site-dir", str(site)],
        cwd=rb.ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # Material's notice about MkDocs 2.0, on every build
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "The first three calls" in (site / "index.html").read_text(encoding="utf-8")
    pages = [page for page in rb.documents() if page != rb.README]
    for page in pages:
        built = site / page.relative_to(rb.DOCS).with_suffix("") / "index.html"
        assert built.is_file(), f"{page.relative_to(rb.ROOT)} was not built"
    fetched = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.IGNORECASE)
    for html in site.rglob("*.html"):
        assert not fetched.search(html.read_text(encoding="utf-8")), f"{html.relative_to(site)} loads from elsewhere"


def test_readme_is_short_and_its_two_commands_come_first() -> None:
    lines = rb.text_of(rb.README).splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines: move the detail to a page of docs/"
    first = rb.blocks(rb.README)[0]
    assert first.lang == "sh" and rb.commands(first) == ["uv run write-gate serve", "uv run pytest"]
    assert not [line for line in lines[: first.line] if line.startswith("## ")], "a section before the two commands"
    assert any("UV_PYTHON" in line for line in lines[: first.line + 12]), "the UV_PYTHON note follows the commands"
