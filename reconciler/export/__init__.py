"""Export: write the desired-state file(s) of a live account, for onboarding it."""

from reconciler.export.model import (
    PLACEHOLDER,
    Export,
    ExportedFile,
    ExportOptions,
    HeaderVariable,
    SplitBy,
    Unfinished,
)
from reconciler.export.render import render_export

__all__ = [
    "PLACEHOLDER",
    "Export",
    "ExportOptions",
    "ExportedFile",
    "HeaderVariable",
    "SplitBy",
    "Unfinished",
    "render_export",
]
