"""Renderers: one plan, shown as text for a terminal, JSON for machines, Markdown for a PR."""

from reconciler.render.base import FORMATS, Renderer, renderer_for
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
