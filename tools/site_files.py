"""The repository's other files (examples, schemas, the action) as pages of the site.

A page of docs/ links them as relative paths (`../examples/team.yaml`), which work where the
Markdown is read: on GitHub and in a clone. MkDocs cannot serve a file outside docs/, so the
site gets a page for each: the file's text in a code block, under `files/`, plus a page per
folder listing what it holds, and `files/index.md` listing them all. The links are rewritten to
those pages, so the site stands alone: no link leads to a repository host it cannot know.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

#: The folders published whole; any other repository file a page links is published too.
FOLDERS = ("examples", "schemas")
PREFIX = "files"

LINK = re.compile(r"\]\((?P<path>\.\./[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")

_LANGUAGES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".lock": "text", ".in": "text"}


def page_of(relative: str) -> str:
    """The docs-relative source path of the page showing a repository path (`examples/`)."""
    parts = [part.lstrip(".") or part for part in PurePosixPath(relative).parts]
    if not parts or relative.endswith("/"):
        return "/".join([PREFIX, *parts, "index.md"])
    return "/".join([PREFIX, *parts]) + ".md"


def linked_paths(root: Path, docs: Path) -> tuple[set[str], list[tuple[str, str]]]:
    """The repository paths the pages link (`dir/` for a folder), and the broken links."""
    found: set[str] = set()
    broken: list[tuple[str, str]] = []
    for page in sorted(docs.rglob("*.md")):
        here = page.parent
        for match in LINK.finditer(page.read_text(encoding="utf-8")):
            target = (here / match["path"]).resolve()
            if not target.is_relative_to(root) or target.is_relative_to(docs):
                continue
            if not target.exists():
                broken.append((page.relative_to(docs).as_posix(), match["path"]))
                continue
            relative = target.relative_to(root).as_posix()
            found.add(relative + "/" if target.is_dir() else relative)
    return found, broken


def published(root: Path, docs: Path) -> dict[str, str]:
    """Each published repository path (`dir/` for a folder) and its page's Markdown."""
    linked, _ = linked_paths(root, docs)
    files = {p for p in linked if not p.endswith("/")}
    for folder in FOLDERS:
        files |= {
            p.relative_to(root).as_posix()
            for p in (root / folder).rglob("*")
            if p.is_file() and not p.name.startswith(".")
        }
    folders = {p for p in linked if p.endswith("/")}
    for path in files:
        parent = PurePosixPath(path).parent
        while str(parent) != ".":
            folders.add(f"{parent}/")
            parent = parent.parent
    pages = {path: _file_page(root, path) for path in sorted(files)}
    for folder in sorted(folders):
        inside = sorted(p for p in files | folders if _parent(p) == folder)
        pages[folder] = _folder_page(folder, inside)
    top = sorted(p for p in files | folders if _parent(p) == "")
    pages[""] = _folder_page("", top)
    return pages


def _parent(path: str) -> str:
    parent = str(PurePosixPath(path.rstrip("/")).parent)
    return "" if parent == "." else f"{parent}/"


def _link(from_page: str, path: str) -> str:
    start = str(PurePosixPath(from_page).parent)
    return os.path.relpath(page_of(path), start).replace(os.sep, "/")


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    return "`" * (longest + 1)


def _file_page(root: Path, path: str) -> str:
    text = (root / path).read_text(encoding="utf-8")
    language = _LANGUAGES.get(PurePosixPath(path).suffix, "text")
    fence = _fence(text)
    up = _link(page_of(path), _parent(path))
    return (
        f"# {PurePosixPath(path).name}\n\n"
        f"`{path}` in the repository ([its folder]({up})).\n\n"
        f"{fence}{language}\n{text.rstrip()}\n{fence}\n"
    )


def _folder_page(folder: str, inside: list[str]) -> str:
    title = f"{folder}" if folder else "Examples, schemas and the action"
    page = page_of(folder)
    lines = [f"# {title}", ""]
    if folder:
        lines += [f"`{folder}` in the repository.", ""]
    else:
        lines += [
            "The repository's files the pages refer to, as they are in a clone: the examples,",
            "the JSON Schemas and the GitHub action.",
            "",
        ]
    lines += [
        f"- [`{PurePosixPath(p).name}{'/' if p.endswith('/') else ''}`]"
        f"({os.path.relpath(page_of(p), str(PurePosixPath(page).parent))})"
        for p in inside
    ]
    return "\n".join(lines) + "\n"


def rewrite_links(markdown: str, page_src: str, root: Path, docs: Path) -> str:
    """A page's links to repository files, turned into links to their pages of the site."""
    here = (docs / page_src).parent

    def rewrite(match: re.Match[str]) -> str:
        target = (here / match["path"]).resolve()
        if not target.is_relative_to(root) or target.is_relative_to(docs) or not target.exists():
            return match[0]
        relative = target.relative_to(root).as_posix() + ("/" if target.is_dir() else "")
        link = os.path.relpath(page_of(relative), str(PurePosixPath(page_src).parent))
        return f"]({link}{match['anchor'] or ''})"

    return LINK.sub(rewrite, markdown)
