"""MkDocs hook: links from docs/ to the repository's other files (examples, schemas, the action).

Written as relative paths (`../examples/team.yaml`) they work where the Markdown is read, on
GitHub or in an editor; MkDocs cannot serve a file outside docs/, so on the site each becomes a
link to the file in the repository (`repo_url`). Each target is checked to exist, so
`mkdocs build --strict` fails on a broken one as it does on a broken link between pages.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.repo_links")

_LINK = re.compile(r"\]\((?P<path>\.\./[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    here = (docs / page.file.src_path).parent
    repo_url = str(config["repo_url"] or "").rstrip("/")

    def rewrite(match: re.Match[str]) -> str:
        target = (here / match["path"]).resolve()
        if not target.is_relative_to(root) or target.is_relative_to(docs):
            return match[0]
        if not target.exists():
            log.warning(
                "Doc file '%s' links to '%s', which is not a file of the repository.",
                page.file.src_path,
                match["path"],
            )
            return match[0]
        kind = "tree" if target.is_dir() else "blob"
        relative = target.relative_to(root).as_posix() + ("/" if target.is_dir() else "")
        return f"]({repo_url}/{kind}/main/{relative}{match['anchor'] or ''})"

    return _LINK.sub(rewrite, markdown)
