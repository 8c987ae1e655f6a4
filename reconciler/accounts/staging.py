"""A saved plan per account appears in `plan --out DIR` only once its account is reported
planned.

An account's run (in a forked process, or a thread) writes its plan aside, as a hidden file
`DIR/.<name>.json.pending` that no `*.json` reader takes; this process moves it into place,
`DIR/<name>.json`, after the run reported the account planned, and removes it otherwise. A
process killed after writing its plan, or a plan whose account then failed (its output could
not be shown), leaves no plan that `apply DIR` or `comment DIR` would take for planned.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from reconciler.errors import ReconcilerError

_PENDING = ".pending"


def staged_plan(out: Path, name: str) -> Path:
    """Where the run of account `name` writes its plan, aside."""
    return out / f".{name}.json{_PENDING}"


def place_plans(out: Path, planned: Iterable[str], names: Iterable[str]) -> None:
    """Move the plan of each account `planned` into place; drop what every other of `names`
    wrote aside (its run failed, or its process ended before it said)."""
    done = set(planned)
    for name in names:
        staged = staged_plan(out, name)
        if name not in done:
            staged.unlink(missing_ok=True)
            continue
        try:
            os.replace(staged, out / f"{name}.json")
        except OSError as error:
            raise ReconcilerError(
                f"account {name} was planned, but its plan could not be put in "
                f"{out / (name + '.json')}: {error.strerror or error}"
            ) from None


def drop_staged(out: Path, names: Iterable[str]) -> None:
    """Remove what an earlier run left aside for these accounts (it was never reported)."""
    for name in names:
        staged_plan(out, name).unlink(missing_ok=True)
