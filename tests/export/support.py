"""What a person does with an exported file, shared by the export tests."""

from __future__ import annotations

import re

from reconciler.export import PLACEHOLDER

_TRUE_VALUES = {"typeOfWorker": "Worker", "countryIso": "GB"}


def fill(text: str) -> str:
    """Write a true value in place of each placeholder (names become `Filled`)."""
    return re.sub(
        rf"^(    (\w+): ){re.escape(PLACEHOLDER)}$",
        lambda match: match.group(1) + _TRUE_VALUES.get(match.group(2), "Filled"),
        text,
        flags=re.MULTILINE,
    )


def placeholder_lines(text: str) -> set[int]:
    """The line numbers holding a placeholder value (not those of the comments)."""
    return {
        number
        for number, line in enumerate(text.splitlines(), 1)
        if line.endswith(f": {PLACEHOLDER}") and not line.startswith("#")
    }
