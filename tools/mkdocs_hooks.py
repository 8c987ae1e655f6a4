"""MkDocs hooks: the site stands alone.

- Links from docs/ to the repository's other files (examples, schemas, the action) are written
  as relative paths (`../examples/team.yaml`), which work where the Markdown is read, on GitHub
  or in a clone. MkDocs cannot serve a file outside docs/, so the site gets a page showing each
  such file (tools/site_files.py) and the links lead there. Each target is checked to exist, so
  `mkdocs build --strict` fails on a broken one as it does on a broken link between pages.
- The command reference (`<!-- reference reconciler.cli:main reconciler -->` in a page) is made
  from the click commands themselves, with the defaults `--help` shows (tools/site_reference.py).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import site_files
import site_reference
from mkdocs.structure.files import File, InclusionLevel

log = logging.getLogger("mkdocs.plugins.repo_files")


def _places(config: Any) -> tuple[Path, Path]:
    docs = Path(config["docs_dir"]).resolve()
    return docs.parent, docs


def on_config(config: Any) -> Any:
    """The pages of the repository's files, last in the navigation (when it is written out)."""
    entry = {"Examples and schemas": f"{site_files.PREFIX}/index.md"}
    if config["nav"] is not None and entry not in config["nav"]:
        config["nav"].append(entry)
    return config


def on_files(files: Any, config: Any) -> Any:
    root, docs = _places(config)
    _, broken = site_files.linked_paths(root, docs)
    for page, path in broken:
        log.warning(
            "Doc file '%s' links to '%s', which is not a file of the repository.", page, path
        )
    for path, markdown in site_files.published(root, docs).items():
        # Reached from "Examples and schemas" and the links of the pages, not each from the nav.
        inclusion = InclusionLevel.INCLUDED if path == "" else InclusionLevel.NOT_IN_NAV
        src = site_files.page_of(path)
        files.append(File.generated(config, src, content=markdown, inclusion=inclusion))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    root, docs = _places(config)
    markdown = site_files.rewrite_links(markdown, page.file.src_uri, root, docs)
    if site_reference.MARKER in markdown:
        markdown = site_reference.expand(markdown)
    return markdown
