"""Every thread the reconciler starts carries the context of the work that started it, so a
line it logs names that work's account (`logs.bound`): threads are started through
`reconciler.threads` only, never `threading.Thread` or `ThreadPoolExecutor` directly (the
sandbox, a service of its own, is apart)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from reconciler import logs, threads

ROOT = Path(__file__).resolve().parents[2] / "reconciler"
_STARTERS = {"Thread", "ThreadPoolExecutor", "ProcessPoolExecutor", "start_new_thread", "Timer"}


def _called_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def test_no_thread_is_started_outside_reconciler_threads() -> None:
    found = []
    for file in sorted(ROOT.rglob("*.py")):
        relative = file.relative_to(ROOT)
        if relative.parts[0] == "sandbox" or relative == Path("threads.py"):
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _called_name(node) in _STARTERS:
                found.append(f"{relative}:{node.lineno}: {_called_name(node)}(...)")
    assert found == [], "start threads with reconciler.threads (start, Pool):\n" + "\n".join(found)


def test_a_thread_and_a_pools_tasks_run_in_the_context_they_were_started_from() -> None:
    seen: list[tuple[tuple[str, str], ...]] = []
    with logs.bound(account="eu"):
        threads.start(lambda: seen.append(logs.context()), name="reconciler-test").join()
        with threads.Pool(2) as pool:
            submitted = pool.submit(logs.context)
            with logs.bound(account="us"):  # each task: where it was submitted from
                later = pool.submit(logs.context)
            mapped = list(pool.map(lambda _: logs.context(), range(3)))
    outside = threading.Thread(target=lambda: seen.append(logs.context()))
    outside.start()
    outside.join()
    assert seen == [(("account", "eu"),), ()]
    assert submitted.result() == (("account", "eu"),)
    assert later.result() == (("account", "us"),)
    assert mapped == [(("account", "eu"),)] * 3
    assert logs.context() == ()
