"""MkDocs hooks (mkdocs.yml): the site's home page is README.md, the newcomer's page, with its links into
docs/ made relative to the site (README.md links `docs/cli.md`; the site's index.md sits beside cli.md)."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parent.parent / "README.md"


def home_page(readme: str) -> str:
    """The README as the site's index.md: `](docs/x.md)` becomes `](x.md)`."""
    return re.sub(r"\]\(docs/", "](", readme)


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, "index.md", content=home_page(README.read_text())))
    return files
