"""Renderers: one plan, shown as text for a terminal, JSON for machines, Markdown for a PR.

`base` holds what every renderer shares and knows none of them; this package picks one. The
package's other modules (the look commands' rows and tables, a comment's body) load without the
plan's renderers: these are imported when first named.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.render.base import FORMATS, Renderer
    from reconciler.render.json import JsonRenderer
    from reconciler.render.markdown import MarkdownRenderer
    from reconciler.render.text import TextRenderer

__all__ = [
    "FORMATS",
    "JsonRenderer",
    "MarkdownRenderer",
    "Renderer",
    "TextRenderer",
    "renderer_for",
]


def renderer_for(
    fmt: str,
    *,
    color: bool = False,
    show_unmanaged: bool = False,
    strict: bool = False,
    drift: bool = False,
    width: int | None = None,
) -> Renderer:
    """The renderer for `--format`: text, json or markdown (`strict`: for `drift --strict`;
    `drift`: the Markdown is titled as `reconciler drift`'s report; `width`: the terminal's, for
    the text plan to wrap between words)."""
    from reconciler.render.base import FORMATS
    from reconciler.render.json import JsonRenderer
    from reconciler.render.markdown import MarkdownRenderer
    from reconciler.render.text import TextRenderer

    if fmt == "json":
        return JsonRenderer()
    if fmt == "markdown":
        return MarkdownRenderer(show_unmanaged=show_unmanaged, strict=strict, drift=drift)
    if fmt == "text":
        return TextRenderer(color=color, show_unmanaged=show_unmanaged, strict=strict, width=width)
    raise ValueError(f"unknown plan format {fmt!r}; expected one of {', '.join(FORMATS)}")


_WHERE = {
    "FORMATS": "base",
    "Renderer": "base",
    "JsonRenderer": "json",
    "MarkdownRenderer": "markdown",
    "TextRenderer": "text",
}


def __getattr__(name: str) -> Any:
    """The renderers, imported when first named (`from reconciler.render import ...`)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
