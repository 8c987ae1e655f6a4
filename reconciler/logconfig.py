"""The log settings the command line asked for, kept until logging is set up.

`reconciler.logs` (structlog) is imported only by commands that log; `validate` never loads
it. The command line records its settings here; `logs` applies them when it loads, or at once
when it is loaded already.
"""

from __future__ import annotations

import sys

requested: tuple[str, str] | None = None


def request(log_format: str, level: str) -> None:
    """Use these settings: now if logging is loaded, else when it loads."""
    global requested
    requested = (log_format, level)
    loaded = sys.modules.get("reconciler.logs")
    if loaded is not None:
        loaded.configure(log_format, level)
