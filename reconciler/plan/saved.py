"""Saved plans (`plan --out`): what to change, and how to tell later whether it still holds.

A saved plan records its changes, a fingerprint of each live resource they touch ("absent" for
an invitation whose worker must still be missing), when it was made and by which version. It
never holds a secret in clear, nor an unkeyed hash of one (a short header value would fall to a
dictionary): a header value from `${VAR}` is stored as the template and an HMAC-SHA256 keyed
with a key derived from the token; fingerprints are keyed the same way because the webhook's
includes its header values. A header value written literally in the file is in git already and
is carried as it is.

`apply` tells a saved plan from a desired-state file by its content (`"format"`), re-reads the
live state, and calls `SavedPlan.resume`, which refuses a plan that is stale or too old.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from reconciler.desired.model import (
    DesiredWebhook,
    DesiredWorker,
    InactivationLimit,
    WebhookHeader,
)
from reconciler.errors import ReconcilerError
from reconciler.plan.changes import (
    Change,
    Inactivate,
    Invite,
    Replace,
    WebhookCreate,
    WebhookUpdate,
)
from reconciler.plan.diff import diff_webhook
from reconciler.plan.model import LiveState, Plan
from reconciler.plan.safety import assess
from reconciler.secrets import Secret
from reconciler.service.models import Webhook, Worker

FORMAT = "reconciler-plan"
FORMAT_VERSION = 1
ABSENT = "absent"
DEFAULT_MAX_AGE = timedelta(hours=1)

_HEADER_LABEL = b"reconciler saved-plan header-value v1"
_FINGERPRINT_LABEL = b"reconciler saved-plan fingerprint v1"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class InvalidSavedPlan(ReconcilerError):
    """The file looks like a saved plan but cannot be read as one."""


class StalePlan(ReconcilerError):
    """The account or the environment changed since the plan was made: nothing was applied."""


def derive_key(token: str, label: bytes) -> bytes:
    """A key for one purpose, derived from the token (HKDF-extract style: HMAC(token, label))."""
    return hmac.new(token.encode(), label, hashlib.sha256).digest()


# --- fingerprints -------------------------------------------------------------------------


class _LiveIndex:
    """The open agreements of the live state by externalId and by email, for fingerprints."""

    def __init__(self, live: LiveState) -> None:
        self.webhook = live.webhook
        self.by_id: dict[str, list[Worker]] = defaultdict(list)
        self.by_email: dict[str, list[Worker]] = defaultdict(list)
        self.by_agreement = {agreement.agreement_id: agreement for agreement in live.workers}
        for agreement in live.workers:
            if agreement.status.is_open:
                if agreement.external_id is not None:
                    self.by_id[agreement.external_id].append(agreement)
                self.by_email[agreement.email.lower()].append(agreement)

    def touched(self, external_id: str, email: str | None) -> list[Worker]:
        """The open agreements an action on this worker depends on."""
        found = {a.agreement_id: a for a in self.by_id.get(external_id, ())}
        if email is not None:
            found.update((a.agreement_id, a) for a in self.by_email.get(email.lower(), ()))
        return [found[key] for key in sorted(found)]


def _digest(key: bytes, value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "hmac-sha256:" + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def _worker_fingerprint(agreements: list[Worker], key: bytes) -> str:
    if not agreements:
        return ABSENT
    return _digest(
        key,
        [
            [
                a.agreement_id,
                str(a.status),
                a.external_id,
                a.email,
                a.first_name,
                a.last_name,
                a.legal_name,
                a.job_title,
                a.country,
            ]
            for a in agreements
        ],
    )


def _webhook_fingerprint(webhook: Webhook | None, key: bytes) -> str:
    if webhook is None:
        return ABSENT
    headers = sorted((h.name.lower(), h.name, h.value.reveal()) for h in webhook.headers)
    return _digest(key, [webhook.url, webhook.enabled, sorted(webhook.event_types), headers])


def _fingerprint(change: Change, index: _LiveIndex, key: bytes) -> str:
    if isinstance(change, WebhookCreate | WebhookUpdate):
        return _webhook_fingerprint(index.webhook, key)
    email = change.worker.worker_email if isinstance(change, Invite | Replace) else None
    return _worker_fingerprint(index.touched(change.external_id, email), key)


# --- writing ------------------------------------------------------------------------------


def saved_plan_document(
    plan: Plan,
    live: LiveState,
    *,
    token: str,
    created_at: datetime,
    tool_version: str,
    sources: Iterable[str] = (),
) -> dict[str, Any]:
    """The JSON document `plan --out` writes."""
    fingerprint_key = derive_key(token, _FINGERPRINT_LABEL)
    header_key = derive_key(token, _HEADER_LABEL)
    index = _LiveIndex(live)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool_version": tool_version,
        "created_at": created_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "sources": list(sources),
        "safety": {
            "owned_open_agreements": plan.safety.owned_open,
            "max_inactivations": {
                "value": str(plan.safety.limit.value),
                "is_share": plan.safety.limit.is_share,
            },
        },
        "changes": [
            {
                **_change_record(change, header_key),
                "fingerprint": _fingerprint(change, index, fingerprint_key),
            }
            for change in plan.changes
        ],
    }


def write_saved_plan(path: Path, document: Mapping[str, Any]) -> None:
    """Write the document atomically, readable by its owner only."""
    path = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(prefix=".plan-", dir=path.parent)
    except OSError as error:
        raise ReconcilerError(f"cannot write the saved plan {path}: {error.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise ReconcilerError(f"cannot write the saved plan {path}: {error.strerror}") from None


def _change_record(change: Change, header_key: bytes) -> dict[str, Any]:
    record: dict[str, Any] = {"address": change.address}
    if isinstance(change, Invite):
        record.update(action="invite", worker=_worker_record(change.worker))
    elif isinstance(change, Inactivate):
        record.update(
            action="inactivate",
            externalId=change.external_id,
            agreementId=change.agreement.agreement_id,
        )
    elif isinstance(change, Replace):
        record.update(
            action="replace",
            agreementId=change.agreement.agreement_id,
            worker=_worker_record(change.worker),
        )
    else:
        action = "webhook_create" if isinstance(change, WebhookCreate) else "webhook_update"
        record.update(action=action, webhook=_webhook_record(change.webhook, header_key))
    return record


_WORKER_FIELDS = (
    ("externalId", "external_id"),
    ("typeOfWorker", "type_of_worker"),
    ("workerName", "worker_name"),
    ("workerSurname", "worker_surname"),
    ("workerLegalName", "worker_legal_name"),
    ("workerEmail", "worker_email"),
    ("countryIso", "country_iso"),
    ("jobTitle", "job_title"),
    ("workerEmailText", "worker_email_text"),
)


def _worker_record(worker: DesiredWorker) -> dict[str, Any]:
    record = {api: getattr(worker, attribute) for api, attribute in _WORKER_FIELDS}
    return {name: value for name, value in record.items() if value is not None}


def _webhook_record(webhook: DesiredWebhook, header_key: bytes) -> dict[str, Any]:
    headers = []
    for header in webhook.headers:
        if header.value.template is not None:
            headers.append(
                {
                    "name": header.name,
                    "template": header.value.template,
                    "hmac": header.value.hmac(header_key),
                }
            )
        else:  # written literally in the file, so already in git: carried as it is
            headers.append({"name": header.name, "value": header.value.reveal()})
    return {
        "url": webhook.url,
        "enabled": webhook.enabled,
        "event_types": sorted(webhook.event_types),
        "headers": headers,
    }


# --- reading ------------------------------------------------------------------------------


def is_saved_plan(path: Path) -> bool:
    """Whether `path` holds a saved plan: by content (a JSON object whose format says so)."""
    path = Path(path)
    if not path.is_file():
        return False
    try:
        with path.open("rb") as stream:
            if not stream.read(64).lstrip().startswith(b"{"):
                return False  # a desired-state file is YAML; no need to read it all
            stream.seek(0)
            document = json.load(stream)
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT


@dataclass(frozen=True, slots=True)
class SavedPlan:
    """A saved plan as read back: its records, to be resumed against a fresh live state."""

    created_at: datetime
    tool_version: str
    records: tuple[dict[str, Any], ...]
    owned_open: int
    limit_value: str
    limit_is_share: bool
    sources: tuple[str, ...] = ()

    def resume(
        self,
        live: LiveState,
        *,
        token: str,
        environ: Mapping[str, str],
        now: datetime | None = None,
        max_age: timedelta = DEFAULT_MAX_AGE,
    ) -> Plan:
        """The plan to apply now; `StalePlan` if it is too old, or anything it touches changed."""
        now = now or datetime.now(UTC)
        if now - self.created_at > max_age:
            raise StalePlan(
                f"the saved plan was made at {self.created_at.isoformat()}, more than "
                f"{max_age} ago",
                hint="run `reconciler plan --out` again",
            )
        fingerprint_key = derive_key(token, _FINGERPRINT_LABEL)
        header_key = derive_key(token, _HEADER_LABEL)
        index = _LiveIndex(live)
        changes = [
            _rebuild(record, index, lambda item: _header(item, header_key, environ))
            for record in self.records
        ]
        stale = [
            record["address"]
            for record, change in zip(self.records, changes, strict=True)
            if _fingerprint(change, index, fingerprint_key) != record["fingerprint"]
        ]
        if stale:
            raise StalePlan(
                "the live account changed since the plan was made: " + ", ".join(stale),
                hint="nothing was applied; run `reconciler plan --out` again",
            )
        inactivations = sum(isinstance(change, Inactivate) for change in changes)
        limit = InactivationLimit(Decimal(self.limit_value), is_share=self.limit_is_share)
        return Plan(changes=tuple(changes), safety=assess(self.owned_open, inactivations, limit))


def _rebuild(
    record: dict[str, Any],
    index: _LiveIndex,
    header: Callable[[dict[str, Any]], WebhookHeader],
) -> Change:
    action = record["action"]
    if action == "invite":
        return Invite(_desired_worker(record["worker"]))
    if action in ("inactivate", "replace"):
        agreement = index.by_agreement.get(record["agreementId"])
        if agreement is None:
            raise StalePlan(
                f"{record['address']}: agreement {record['agreementId']} is gone",
                hint="nothing was applied; run `reconciler plan --out` again",
            )
        if action == "inactivate":
            return Inactivate(record["externalId"], agreement)
        worker = _desired_worker(record["worker"])
        return Replace(agreement, worker, ())
    webhook = _desired_webhook(record["webhook"], header)
    change = diff_webhook(webhook, index.webhook)
    if change is None:  # someone already made the change: the fingerprint check says so
        return WebhookUpdate(index.webhook, webhook, ())  # type: ignore[arg-type]
    return change


def load_saved_plan(path: Path) -> SavedPlan:
    """Read a saved plan, with a clear error for anything that is not one."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidSavedPlan(f"{path}: not a readable saved plan ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidSavedPlan(f'{path}: not a saved plan (no "format": "{FORMAT}")')
    if document.get("format_version") != FORMAT_VERSION:
        raise InvalidSavedPlan(
            f"{path}: saved plan format_version {document.get('format_version')!r} is not "
            f"supported (this version reads {FORMAT_VERSION})"
        )
    try:
        created_at = datetime.fromisoformat(document["created_at"].replace("Z", "+00:00"))
        limit = document["safety"]["max_inactivations"]
        records = tuple(document["changes"])
        for record in records:
            _check_record(record)
        return SavedPlan(
            created_at=created_at,
            tool_version=str(document["tool_version"]),
            records=records,
            owned_open=int(document["safety"]["owned_open_agreements"]),
            limit_value=str(limit["value"]),
            limit_is_share=bool(limit["is_share"]),
            sources=tuple(document.get("sources", ())),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InvalidSavedPlan(f"{path}: the saved plan is damaged ({error!r})") from None


_RECORD_KEYS = {
    "invite": ("worker",),
    "inactivate": ("externalId", "agreementId"),
    "replace": ("agreementId", "worker"),
    "webhook_create": ("webhook",),
    "webhook_update": ("webhook",),
}


_REQUIRED_WORKER_FIELDS = (
    "externalId",
    "typeOfWorker",
    "workerName",
    "workerSurname",
    "workerEmail",
    "countryIso",
)


def _check_record(record: Any) -> None:
    if not isinstance(record, dict) or record.get("action") not in _RECORD_KEYS:
        raise ValueError(f"unknown change {record!r:.80}")
    for key in ("address", "fingerprint", *_RECORD_KEYS[record["action"]]):
        if key not in record:
            raise KeyError(f"{record['action']} change without {key}")
    worker = record.get("worker", {})
    for key in _REQUIRED_WORKER_FIELDS:
        if "worker" in record and not isinstance(worker.get(key), str):
            raise KeyError(f"{record['address']}: worker without {key}")


def _desired_worker(record: dict[str, Any]) -> DesiredWorker:
    return DesiredWorker(
        external_id=record["externalId"],
        type_of_worker=record["typeOfWorker"],
        worker_name=record["workerName"],
        worker_surname=record["workerSurname"],
        worker_email=record["workerEmail"],
        country_iso=record["countryIso"],
        worker_legal_name=record.get("workerLegalName"),
        job_title=record.get("jobTitle"),
        worker_email_text=record.get("workerEmailText"),
    )


def _desired_webhook(
    record: dict[str, Any], header: Callable[[dict[str, Any]], WebhookHeader]
) -> DesiredWebhook:
    return DesiredWebhook(
        url=record["url"],
        enabled=bool(record["enabled"]),
        event_types=frozenset(record["event_types"]),
        headers=tuple(header(item) for item in record["headers"]),
    )


def _header(item: dict[str, Any], header_key: bytes, environ: Mapping[str, str]) -> WebhookHeader:
    if "value" in item:
        return WebhookHeader(item["name"], Secret(item["value"]))
    template = item["template"]
    value = Secret(_expand(template, item["name"], environ), template=template)
    if not hmac.compare_digest(value.hmac(header_key), item["hmac"]):
        raise StalePlan(
            f'webhook header "{item["name"]}": {template} no longer has the value the plan '
            "was made with",
            hint="nothing was applied; set it as it was, or run `reconciler plan --out` again",
        )
    return WebhookHeader(item["name"], value)


def _expand(template: str, header: str, environ: Mapping[str, str]) -> str:
    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise StalePlan(
                f'webhook header "{header}": the environment variable {name} is not set',
                hint="apply a saved plan in the environment it was made for",
            )
        return environ[name]

    return _VARIABLE.sub(lookup, template)
