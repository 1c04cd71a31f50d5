"""The site's home page is the repository's README.md, so the two never differ.

The README links to pages as `docs/<page>.md`, and pages link to it as `../README.md` (both right on a forge);
on the site the pages sit at the root and the README is `index.md`, so those links are rewritten. Every other
relative link is left alone, and a broken one fails `mkdocs build --strict`."""

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

INTO_DOCS = re.compile(r"\]\(docs/")
TO_README = re.compile(r"\]\(((?:\.\./)+)README\.md")


def on_files(files: Files, config: Any) -> Files:
    readme = Path(config["config_file_path"]).parent / "README.md"
    home = INTO_DOCS.sub("](", readme.read_text(encoding="utf-8"))
    files.append(File.generated(config, "index.md", content=home))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    # A page one folder down links `../../README.md`: one `../` leaves docs/, the rest reach the site's root.
    return TO_README.sub(lambda m: "](" + m.group(1)[3:] + "index.md", markdown)
