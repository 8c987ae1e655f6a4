"""Adopt for one account: read it (only reads) with the plan's own reading, then edit its files.

`adopt PATH` and each account of `adopt --all` do the same, so it is one function; the
connection is handed in (the command's, or one made from an account's entry), as `plan` takes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reconciler.adopt.files import adopt_path
from reconciler.adopt.model import Adoption
from reconciler.plan import PlanOptions
from reconciler.session.connection import Connection
from reconciler.session.planning import plan_path


def adopt_account(
    path: Path,
    connection: Connection,
    *,
    only: Iterable[str] = (),
    into: Path | None = None,
    write: bool = True,
) -> Adoption:
    """What the live account has, written into the files at `path` (nothing when not `write`)."""
    planned = plan_path(path, PlanOptions(), connection)
    return adopt_path(
        path,
        planned.plan,
        planned.live,
        planned.scope_prefix,
        only=only,
        into=into,
        write=write,
    )
