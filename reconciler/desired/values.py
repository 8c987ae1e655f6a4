"""A file's parsed values, as the rules see them: its own module, since the rules and the
look-alike check (`desired.lookalikes`, which the rules call) both read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class FileValues:
    """One file's parsed values (a mapping), under the name its problems are reported with.

    `ascii_text`: every text in it is ASCII, as in a file of ASCII without a backslash (only an
    escape such as `\\u00e9` could make anything else of it).
    """

    name: str
    data: dict[Any, Any]
    ascii_text: bool = False
