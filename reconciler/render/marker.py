"""The hidden marker that lets a bot find its own comment or issue again.

A marker is an HTML comment on the body's first line, which GitHub does not show. Only a body
whose first line is exactly the marker counts: a comment that quotes it, mentions it further
down, or carries another key is a look-alike and is never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = re.compile(r"[A-Za-z0-9_.\-/]{1,100}")


class InvalidMarkerKey(ValueError):
    """A key that cannot be written inside the marker."""


@dataclass(frozen=True, slots=True)
class Marker:
    """`<!-- reconciler:KIND -->`, or with a key (one per account or directory) when given."""

    kind: str
    key: str | None = None

    def __post_init__(self) -> None:
        if self.key is not None and not _KEY.fullmatch(self.key):
            raise InvalidMarkerKey(
                f"marker key {self.key!r}: use 1 to 100 letters, digits, '.', '_', '-' or '/'"
            )

    @property
    def text(self) -> str:
        key = f' key="{self.key}"' if self.key is not None else ""
        return f"<!-- reconciler:{self.kind}{key} -->"

    def stamp(self, body: str) -> str:
        """The body with the marker as its first line (once, even if it already had it)."""
        return self.text + "\n" + self.strip(body)

    def strip(self, body: str) -> str:
        """The body without the marker line, if it starts with it."""
        if self.matches(body):
            return body[len(self.text) :].removeprefix("\r").removeprefix("\n")
        return body

    def matches(self, body: str | None) -> bool:
        """Whether the body's first line is exactly this marker."""
        if not body:
            return False
        return body.split("\n", 1)[0].rstrip("\r") == self.text


#: The kinds of marked bodies: the plan comment, the refused-apply comment, the drift issue.
PLAN = "plan"
APPLY = "apply"
DRIFT = "drift"
ADOPT = "adopt"
