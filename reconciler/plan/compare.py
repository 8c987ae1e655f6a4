"""Comparing one desired worker with its live agreement, field by field.

A plan runs this once per managed worker (100,000 at a time), so the comparison is made once
per table of fields (`reconciler.worker_fields`): one check per compared field, after a quick
look at whether every compared value is equal as it stands, which nearly every worker is. The
refresh may run it ahead of the diff (`agreements.AgreementIndex`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from reconciler import worker_fields
from reconciler.desired.model import DesiredWorker
from reconciler.identity import email_key
from reconciler.plan.changes import FieldChange, live_worker_resource
from reconciler.quick import quick_function
from reconciler.service.models import Worker
from reconciler.worker_fields import Compare, WorkerField, WorkerFields

#: Whether a desired value differs from the live agreement: (the file's value, the live one).
_Differs = Callable[[Any, Worker], bool]


def compare_worker(want: DesiredWorker, live: Worker) -> tuple[FieldChange, ...]:
    """The fields in which the live agreement differs from the file, in the file's names."""
    differing = _differing_fields(want, live)
    if not differing:
        return ()
    before = live_worker_resource(live)
    by_key = worker_fields.WORKER_FIELDS.by_key
    return tuple(FieldChange(name, before[name], by_key[name].getter()(want)) for name in differing)


def _differing_fields(want: DesiredWorker, live: Worker) -> list[str]:
    """The fields that differ, in the order a plan shows them, minus `ignoreChanges`.

    Only fields the service shows are compared, each in its normal form (emails by mailbox,
    an empty text as none); a plan runs this once per managed worker.
    """
    comparison = _comparison(worker_fields.WORKER_FIELDS)
    if comparison.same is not None and comparison.same(want, live):
        return []  # equal as they stand: no field differs, however it is compared
    differing = [key for key, get, differs in comparison.checks if differs(get(want), live)]
    if differing and want.ignore_changes:
        return [name for name in differing if name not in want.ignore_changes]
    return differing


class _Comparison:
    """A table's comparison: `checks` (key, read the file's value, differs) in the file's
    order, and `same`, whether every compared value of each side is equal as it stands (None
    when a field is carried in `more`)."""

    __slots__ = ("checks", "same")

    def __init__(self, table: WorkerFields) -> None:
        compared = [item for item in table if item.compared]
        self.checks = tuple((item.key, item.getter(), _differs(item, table)) for item in compared)
        attributed = all(item.attribute and item.live_attribute for item in compared)
        self.same: Callable[[DesiredWorker, Worker], bool] | None = None
        if attributed and compared:  # compiled: a plan asks it of nearly every worker
            equal = [f"want.{item.attribute} == live.{item.live_attribute}" for item in compared]
            self.same = quick_function("same", "want, live", " and ".join(equal), {})


@functools.cache
def _comparison(table: WorkerFields) -> _Comparison:
    return _Comparison(table)


def _differs(item: WorkerField, table: WorkerFields) -> _Differs:
    """How `item` is compared (`worker_fields.Compare`)."""
    get = item.live_getter()
    if item.compare is Compare.SHOWN:  # fills in when the worker answers: null is not drift

        def shown(want: Any, live: Worker) -> bool:
            value = get(live)
            return value is not None and want != value

        return shown
    if item.compare is Compare.LEGAL_NAME:
        # A Business is recognised by its legal name, so once the names show, a missing one counts.
        names = [field.live_getter() for field in table if field.compare is Compare.SHOWN]

        def legal_name(want: Any, live: Worker) -> bool:
            value = get(live)
            names_shown = any(name(live) is not None for name in names)
            return (names_shown or value is not None) and (want or None) != (value or None)

        return legal_name
    if item.compare is Compare.EMAIL:
        return lambda want, live: (
            (value := get(live)) != want and email_key(want) != email_key(value)
        )
    if item.compare is Compare.COUNTRY:  # the service answers a name, mapped back to its code
        return lambda want, live: (
            live.country is not None
            and want != (live.country if live.country_iso is None else live.country_iso)
        )
    return lambda want, live: (want or None) != (get(live) or None)
