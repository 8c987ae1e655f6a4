"""httpx as the reconciler imports it: without httpx's own command line.

`import httpx` also imports its command line (`httpx._main`, with rich's syntax highlighting
and pygments' lexers) whenever click, rich and pygments are installed, as they always are beside
the reconciler: about 30 ms of every networked command's start, spent before its first
request. httpx falls back to a stub `httpx.main` when that module cannot be imported, which a
None in `sys.modules` brings about (the import system's own way to block one module). Nothing
here runs httpx's command line; in a process that imports this, `httpx.main` is that stub (it
says httpx's command-line dependencies are missing), and one that imported httpx before keeps
it as it is. Logging at info or debug loads rich's syntax through structlog's console anyway.
"""

from __future__ import annotations

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None blocks the import

import httpx  # noqa: E402  (after the line above, which it depends on)

__all__ = ["httpx"]
