"""The threads the reconciler starts, each carrying the context of the work that started it.

A new thread starts in an empty context (`contextvars`): without this, a line logged by an
account's refresh thread, page fetchers, webhook read or money reads would not name the
account (`logs.bound`). Every thread of the reconciler is started here: `start` for one
thread, `Pool` for a pool, whose every task runs in the context it was submitted from.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def start(target: Callable[..., object], *args: Any, name: str) -> threading.Thread:
    """A daemon thread running `target(*args)` in a copy of the caller's context, started."""
    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(target, *args), name=name, daemon=True
    )
    thread.start()
    return thread


class Pool(ThreadPoolExecutor):
    """A thread pool whose tasks run in the context they were submitted from."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        run: Callable[..., T] = contextvars.copy_context().run
        return super().submit(run, fn, *args, **kwargs)
