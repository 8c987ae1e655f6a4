"""What an account's work tells of its progress, apart from who shows it.

The runner (`accounts.run`) shows a line per account; the processes the accounts are spread
over (`accounts.spread`) pass the same calls back through a pipe. Both name this protocol, so
neither has to import the other to know its shape.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """What an account's work tells of its progress: agreements read, and its state."""

    def count(self, read: int) -> None: ...

    def say(self, state: str) -> None: ...
