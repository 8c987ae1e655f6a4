"""The payroll register of an account, read: its paylists, and the files' payruns when given.

Read-only (GETs): the paylists as a plan with payruns reads them (`MoneyReading`, without the
wallet, which the register does not show), started as soon as the client is open; the file, when
there is one, is loaded while their pages are awaited, and a problem in it is the error shown
(the reads are then stopped). Only its payruns are used, so its `${VAR}`s are checked by name
alone. The register itself is `reconciler.plan.register`'s, pure. The garbage collector is
paused while the pages are read, the file loaded and the register built (`collector`): 12
paylists of 1,000 payments and their file make no cycles for it to find.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from reconciler.desired import load_desired_state
from reconciler.plan.paylist_reads import MoneyReading
from reconciler.plan.payruns import units_of
from reconciler.plan.register import MergeRecord, Register, build_register
from reconciler.session.collector import collector_paused
from reconciler.session.connection import Connection


def read_register(
    connection: Connection,
    path: Path | None,
    *,
    since: str | None,
    until: str | None,
    merges: Mapping[int, MergeRecord] | None = None,
) -> Register:
    """The register of the account (without `path`) or of the payruns of the files at `path`,
    of the months from `since` to `until` (YYYY-MM, both included)."""
    with collector_paused():
        with connection.open(read_only=True) as client:
            reading = MoneyReading(
                client,
                payruns=True,
                window=None,
                parallelism=client.config.parallelism,
                wallet=False,
            )
            try:
                units, periods = None, {}
                if path is not None:
                    desired = load_desired_state(path, connection.env(), read_variables=False)
                    units = units_of(desired.payruns)
                    periods = {p.id: p.period for p in desired.payruns if p.period is not None}
            except BaseException:
                reading.stop()
                raise
            paylists = reading.result().paylists
        return build_register(
            paylists, units, since=since, until=until, periods=periods, merges=merges
        )
