"""How far an apply got: a rich progress bar on a terminal, structured log lines otherwise.

Both are called from the executor's threads; rich's `Progress` locks itself, and the log lines
are throttled under a lock of their own.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from types import TracebackType
from typing import Any

from reconciler import logs
from reconciler.apply.ledger import Outcome, counted_outcomes
from reconciler.words import counted

#: At most one progress log line this often (seconds), besides the first and the last.
LOG_EVERY_S = 2.0


class LogProgress:
    """Progress as `apply progress` log events: for CI logs and any run without a terminal."""

    def __init__(self, total: int, every_s: float = LOG_EVERY_S) -> None:
        self._total = total
        self._every_s = every_s
        self._counts: Counter[Outcome] = Counter()
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._last_line = 0.0
        self._log = logs.get_logger("reconciler.apply.progress")

    def phase(self, name: str, total: int) -> None:
        self._log.info("apply phase", phase=name, steps=total)

    def advance(self, outcome: Outcome) -> None:
        with self._lock:
            self._counts[outcome] += 1
            now = time.monotonic()
            done = sum(self._counts.values())
            if done < self._total and now - self._last_line < self._every_s:
                return
            self._last_line = now
            fields = self._fields(done, now)
        self._log.info("apply progress", **fields)

    def _fields(self, done: int, now: float) -> dict[str, Any]:
        elapsed = now - self._started
        return {
            "done": done,
            "total": self._total,
            **{str(outcome): self._counts[outcome] for outcome in counted_outcomes(self._counts)},
            "rate_per_s": round(done / elapsed, 1) if elapsed > 0 else None,
        }

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class BarProgress:
    """A rich progress bar on stderr: changes settled of the total, failures, rate, time."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._counts: Counter[Outcome] = Counter()
        self._lock = threading.Lock()
        self._progress = Progress(
            TextColumn("[bold]{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[trouble]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._progress.add_task("applying", total=total, rate="", trouble="")
        self._started = time.monotonic()

    def phase(self, name: str, total: int) -> None:
        self._progress.update(self._task, description=name)

    def advance(self, outcome: Outcome) -> None:
        with self._lock:
            self._counts[outcome] += 1
            done = sum(self._counts.values())
            elapsed = time.monotonic() - self._started
            rate = f"{done / elapsed:,.1f}/s" if elapsed > 0 else ""
            trouble = ", ".join(
                f"{counted(self._counts[o])} {o}"
                for o in (Outcome.FAILED, Outcome.SKIPPED)
                if self._counts[o]
            )
        self._progress.update(self._task, advance=1, rate=rate, trouble=trouble)

    def __enter__(self) -> BarProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._progress.stop()


def progress_for(total: int, *, terminal: bool) -> BarProgress | LogProgress:
    """A progress bar on a terminal, log lines otherwise."""
    return BarProgress(total) if terminal else LogProgress(total)
