"""How the command line's process ends: once its output is flushed, without freeing first.

A plan of 100,000 workers builds about a million objects, and the interpreter would free them
one by one, a tenth of a second after everything is printed: when the command's function
returns (its states go out of scope), then again at the interpreter's exit. Like mypy, the
console entry (`reconciler.cli.run`) ends the process as soon as the output is flushed, and
what a command built is held (`hold`) until then. In a test that calls `main` itself nothing
is held, and the process is not ended.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from typing import NoReturn

_held: list[object] = []
_armed = False


def arm() -> None:
    """The process will end through `end` (the console entry): hold what commands build."""
    global _armed
    _armed = True


def hold(*values: object) -> None:
    """Keep `values` until the process ends, when it ends through `end`, so they are never
    freed one by one; otherwise nothing is kept."""
    if _armed:
        _held.extend(values)


def end(code: object) -> NoReturn:
    """Exit with `code` (a `SystemExit` code) once stdout and stderr are flushed, without
    freeing anything; the usual way when a thread still runs (Python waits for it) or
    flushing fails otherwise than by a reader who left."""
    status = 0 if code is None else code
    if not isinstance(status, int) or _running_threads():
        raise SystemExit(code)
    logging.shutdown()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        discard_output()
        status = status or 1
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(status)


def discard_output() -> None:
    """What is left to write to stdout goes nowhere: its reader has left (`| head`), as the
    Python documentation advises, so neither the rest of the command nor the exit meets the
    broken pipe again and prints a traceback."""
    # Without a file descriptor (a test's capture) nothing is flushed to a pipe either.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _running_threads() -> bool:
    current = threading.current_thread()
    return any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not current)
