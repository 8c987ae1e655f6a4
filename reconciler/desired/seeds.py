"""A sandbox seed file among desired-state files: said once, at its path, instead of a problem
for each of its keys.

A seed (`reconciler sandbox serve --seed FILE`) describes the live account the sandbox starts
with, in its own words (`firstName`, `email`, `country`, `status`); a desired state says what the
account should be (`version`, `workerName`, `workerEmail`, `countryIso`). Planning a folder that
holds both used to report every seed key as unknown (80 problems for the demo seed).
"""

from __future__ import annotations

import re

from reconciler.desired.model import Location
from reconciler.desired.problems import Problem
from reconciler.desired.source import SourceText

#: Keys only a seed's workers have; a desired state calls them otherwise (or has no such key).
_SEED_WORKER_KEYS = frozenset({"firstName", "lastName", "legalName", "email", "country", "status"})
#: Keys only a desired state's workers have: a file with any of them is a desired state, however
#: mistaken (its problems are reported one by one).
_DESIRED_WORKER_KEYS = frozenset(
    {"typeOfWorker", "workerName", "workerSurname", "workerLegalName", "workerEmail", "countryIso"}
)
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
    if any(found & _DESIRED_WORKER_KEYS for found in keys):
        return None
    if not any(len(found & _SEED_WORKER_KEYS) >= 2 for found in keys):
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
