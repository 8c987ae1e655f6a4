"""The seed file: a YAML account (workers and a webhook) loaded into the demo client.

    workers:
      - externalId: ENG-001      # optional
        type: Worker             # Worker (default) or Business (then legalName is required)
        firstName: Ada
        lastName: Lovelace
        legalName: null          # optional for a Worker
        email: ada@example.com
        country: GB              # ISO 3166-1 alpha-2
        jobTitle: Engineer       # optional
        status: ACTIVE           # INVITATION_SENT, VERIFICATION_PENDING, ACTIVE, ENDED, INACTIVATED
    webhook:                     # optional; the body of POST /webhooks/clients
      url: https://hooks.example.com/workforce
      event_types: [KYC]
      headers: []                # optional here
      enabled: true              # optional

Workers are checked by the same rules as an invitation; each becomes one agreement, in file order.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reconciler.sandbox import webhooks, workers
from reconciler.sandbox.problems import FieldError, Problem
from reconciler.sandbox.timestamps import now_ns
from reconciler.sandbox.validation import ObjectReader

#: Seed keys and the invitation fields (interface §2.2) they are checked as.
_AS_INVITATION = {
    "firstName": "workerName",
    "lastName": "workerSurname",
    "legalName": "workerLegalName",
    "email": "workerEmail",
    "country": "countryIso",
    "jobTitle": "jobTitle",
    "externalId": "externalId",
    "type": "typeOfWorker",
}
_AS_SEED = {api: seed for seed, api in _AS_INVITATION.items()}
_STATUSES = (*workers.MOVABLE_STATUSES, workers.INACTIVATED)


class SeedError(ValueError):
    """A seed file that cannot be loaded; the message lists every problem with its place."""


@dataclass(frozen=True, slots=True)
class SeedWorker:
    invitation: workers.Invitation
    status: str


@dataclass(frozen=True, slots=True)
class Seed:
    workers: tuple[SeedWorker, ...]
    webhook: webhooks.WebhookConfig | None


def _place(error: FieldError, prefix: str, *, api_names: bool = True) -> str:
    """Where an error is, in the seed's own key names (the invitation's are translated back;
    a key the seed file itself wrote is named as written)."""
    field = _AS_SEED.get(error.field or "", error.field) if api_names else error.field
    index = "" if error.index is None else f"[{error.index}]"
    return f"{prefix}{index}{'.' + field if field else ''}: {error.message}"


def _read_worker(value: Any, index: int, problems: list[str]) -> SeedWorker | None:
    reader = ObjectReader(value, (*_AS_INVITATION, "status"), index=index)
    if not isinstance(value, dict):
        problems += [_place(error, "workers", api_names=False) for error in reader.errors]
        return None
    status = reader.choice("status", _STATUSES)
    as_invitation = {
        _AS_INVITATION[key]: item for key, item in value.items() if key in _AS_INVITATION
    }
    as_invitation.setdefault("typeOfWorker", "Worker")
    invitation, errors = workers.read_invitation(as_invitation, index)
    problems += [_place(error, "workers", api_names=False) for error in reader.errors]
    problems += [_place(error, "workers") for error in errors]
    if reader.errors or errors or invitation is None or status is None:
        return None
    return SeedWorker(invitation, status)


def load_seed(path: Path) -> Seed:
    """Read and check a seed file; SeedError lists everything wrong in it."""
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise SeedError(f"cannot read the seed file {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise SeedError(
            f"{path} is not UTF-8 text (byte {error.start + 1} is {error.object[error.start]:#04x})"
        ) from None
    except yaml.YAMLError as error:
        raise SeedError(f"{path} is not valid YAML: {error}") from None
    document = {} if document is None else document
    if not isinstance(document, dict):
        raise SeedError(f"{path}: the seed must be a mapping with `workers` and `webhook`")
    problems = [f"{key}: unknown key" for key in document if key not in ("workers", "webhook")]
    raw_workers = document.get("workers") or []
    if not isinstance(raw_workers, list):
        problems.append("workers: must be a list")
        raw_workers = []
    seeded = [_read_worker(value, index, problems) for index, value in enumerate(raw_workers)]
    webhook = None
    if (raw_webhook := document.get("webhook")) is not None:
        if isinstance(raw_webhook, dict):
            raw_webhook = {"headers": [], **raw_webhook}
        try:
            webhook = webhooks.read_config(raw_webhook)
        except Problem as problem:
            problems += [_place(error, "webhook") for error in problem.errors] or [
                f"webhook: {problem.detail}"
            ]
    if problems:
        raise SeedError(f"{path} is not a valid seed:\n  " + "\n  ".join(problems))
    return Seed(tuple(worker for worker in seeded if worker is not None), webhook)


def apply_seed(conn: sqlite3.Connection, client_id: int, seed: Seed) -> None:
    """Add the seed's workers (in order) and webhook to the client, in the caller's transaction."""
    now = now_ns()
    for index, worker in enumerate(seed.workers):
        if worker.status in workers.OPEN_STATUSES:
            conflicts = workers.open_conflicts(conn, client_id, [worker.invitation])
            if conflicts:
                place = f"workers[{index}].{_AS_SEED.get(conflicts[0].field or '', '')}"
                raise SeedError(f"{place}: {conflicts[0].message} earlier in the seed")
        workers.insert_agreement(conn, client_id, worker.invitation, worker.status, now)
    if seed.webhook is not None:
        webhooks.upsert(conn, client_id, seed.webhook)
