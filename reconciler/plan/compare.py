"""Comparing one desired worker with its live agreement, field by field.

A plan runs this once per managed worker (100,000 at a time), so it is plain code, not a
generic deep diff; the refresh may run it ahead of the diff (`agreements.AgreementIndex`).
"""

from __future__ import annotations

from typing import Any

from reconciler.desired.model import DesiredWorker
from reconciler.identity import email_key
from reconciler.plan.changes import FieldChange, live_worker_resource
from reconciler.service.models import Worker


def compare_worker(want: DesiredWorker, live: Worker) -> tuple[FieldChange, ...]:
    """The fields in which the live agreement differs from the file, in the file's names."""
    differing = _differing_fields(want, live)
    if not differing:
        return ()
    before = live_worker_resource(live)
    after: dict[str, Any] = {
        "workerName": want.worker_name,
        "workerSurname": want.worker_surname,
        "workerLegalName": want.worker_legal_name,
        "workerEmail": want.worker_email,
        "jobTitle": want.job_title,
        "countryIso": want.country_iso,
    }
    return tuple(FieldChange(name, before[name], after[name]) for name in differing)


def _differing_fields(want: DesiredWorker, live: Worker) -> list[str]:
    """The fields that differ, in the order a plan shows them, minus `ignoreChanges`.

    Only fields the service shows are compared, each in its normal form (emails by mailbox,
    an empty text as none); a plan runs this once per managed worker, so it is plain code.
    """
    differing = []
    # Names fill in when the worker answers the invitation: null until then is not drift.
    if live.first_name is not None and want.worker_name != live.first_name:
        differing.append("workerName")
    if live.last_name is not None and want.worker_surname != live.last_name:
        differing.append("workerSurname")
    # A Business is recognised by its legal name, so once the names show, a missing one counts.
    names_shown = not (live.first_name is None and live.last_name is None)
    if (names_shown or live.legal_name is not None) and (want.worker_legal_name or None) != (
        live.legal_name or None
    ):
        differing.append("workerLegalName")
    if want.worker_email != live.email and email_key(want.worker_email) != email_key(live.email):
        differing.append("workerEmail")
    if live.country is not None and want.country_iso != (
        live.country if live.country_iso is None else live.country_iso
    ):
        differing.append("countryIso")
    if (want.job_title or None) != (live.job_title or None):
        differing.append("jobTitle")
    if differing and want.ignore_changes:
        return [name for name in differing if name not in want.ignore_changes]
    return differing
