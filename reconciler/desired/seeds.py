"""A sandbox seed file among desired-state files: said once, at its path, instead of a problem
for each of its keys.

A seed (`reconciler sandbox serve --seed FILE`) describes the live account the sandbox starts
with, in its own words (`firstName`, `email`, `country`, `status`); a desired state says what the
account should be (`version`, and the file's own names for a worker's fields). Planning a
folder that holds both used to report every seed key as unknown (80 problems for the demo seed).
"""

from __future__ import annotations

import re
from functools import cache

from reconciler import worker_fields
from reconciler.desired.model import Location
from reconciler.desired.problems import Problem
from reconciler.desired.source import SourceText
from reconciler.worker_fields import WorkerFields


@cache
def _worker_keys(table: WorkerFields) -> tuple[frozenset[str], frozenset[str]]:
    """The keys only a seed's workers have (the worker list's names, and `status`), which a
    desired state calls otherwise; and those only a desired state's workers have: a file with
    any of them is a desired state, however mistaken (its problems are reported one by one)."""
    live = {item.live for item in table if item.live is not None}
    seed = frozenset({key for key in live if key not in table.by_key} | {"status"})
    return seed, frozenset(key for key in table.by_key if key not in live)


#: What a seed holds at its top level, and nothing else.
_SEED_KEYS = frozenset({"workers", "webhook"})

_WORKERS = re.compile(r"^workers[ \t]*:", re.MULTILINE)


def seed_problem(source: SourceText, data: object) -> Problem | None:
    """The one problem of a file that is a sandbox seed, or None when it is not one."""
    if not isinstance(data, dict) or not data or not set(data) <= _SEED_KEYS:
        return None
    workers = data.get("workers")
    if not isinstance(workers, list):
        return None
    keys = [set(worker) for worker in workers if isinstance(worker, dict)]
    seed_keys, desired_keys = _worker_keys(worker_fields.WORKER_FIELDS)
    if any(found & desired_keys for found in keys):
        return None
    if not any(len(found & seed_keys) >= 2 for found in keys):
        return None  # one such key is more likely a typo in a desired state
    found = _WORKERS.search(source.text)
    line = 1 if found is None else source.text.count("\n", 0, found.start()) + 1
    return Problem(
        Location(source.name, line, 1),
        "this is a sandbox seed (workers with firstName, lastName, email, country, status), "
        "not a desired state: the sandbox loads it (`reconciler sandbox serve --seed FILE`), "
        "plan and validate do not; keep it out of the desired-state folder, or name the "
        "desired-state file itself",
    )
