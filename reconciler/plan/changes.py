"""The nouns of a plan: typed changes, and the findings that are reported but never acted on.

Each change is a small frozen value that knows its address (`worker["ENG-001"]`, `webhook`),
its actions in Terraform's words, the resource before and after, and which values are
sensitive. Before and after use the file's own field names, so a reviewer reads the same words
in the plan as in the YAML.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date
from typing import Any, ClassVar

from reconciler import worker_fields
from reconciler.desired.model import DesiredWebhook, DesiredWorker
from reconciler.quick import quick_function
from reconciler.secrets import Secret, live_webhook_url
from reconciler.service.models import Webhook, Worker
from reconciler.worker_fields import Compare, WorkerFields

#: A resource as a plain mapping; secret values stay `Secret` until a renderer masks them.
Resource = dict[str, Any]

WEBHOOK_ADDRESS = "webhook"


def worker_address(external_id: str) -> str:
    """The address of a managed worker, as Terraform would spell it."""
    return f'worker["{external_id}"]'


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that differs: `name` is the file's field name."""

    name: str
    before: Any
    after: Any
    sensitive: bool = False


# --- resources as mappings ----------------------------------------------------------------


def desired_worker_resource(worker: DesiredWorker) -> Resource:
    """The invitation item the file asks for, in the API's own field names."""
    return _resources(worker_fields.WORKER_FIELDS)[0](worker)


def live_worker_resource(worker: Worker) -> Resource:
    """A live agreement in the file's field names, plus its agreement id and status."""
    return _resources(worker_fields.WORKER_FIELDS)[1](worker)


@functools.cache
def _resources(
    table: WorkerFields,
) -> tuple[Callable[[DesiredWorker], Resource], Callable[[Worker], Resource]]:
    """What makes a desired and a live worker's resource: the fields a plan shows, in the
    file's order (a live one only those the service shows, the country as it answered it
    when no code maps it). Compiled to dict displays: a plan makes one per worker."""
    wanted = [item for item in table if item.shown]
    names: dict[str, Any] = {}
    desired, live = [], ['"agreementId": w.agreement_id', '"status": str(w.status)']
    for number, item in enumerate(wanted):
        if item.attribute is not None:
            desired.append(f"{item.key!r}: w.{item.attribute}")
        else:
            names[f"_desired{number}"] = item.getter()
            desired.append(f"{item.key!r}: _desired{number}(w)")
        if item.live is None:
            continue
        if item.compare is Compare.COUNTRY:
            value = (
                f"(w.{item.live_attribute} if w.{item.live_attribute} is not None else w.country)"
            )
        elif item.live_attribute is not None:
            value = f"w.{item.live_attribute}"
        else:
            names[f"_live{number}"] = item.live_getter()
            value = f"_live{number}(w)"
        live.append(f"{item.key!r}: {value}")
    return (
        quick_function("desired_resource", "w", "{" + ", ".join(desired) + "}", names),
        quick_function("live_resource", "w", "{" + ", ".join(live) + "}", names),
    )


def webhook_resource(webhook: DesiredWebhook | Webhook) -> Resource:
    """A webhook, the file's or the service's, with its headers in name order."""
    return {
        "url": webhook.url,
        "enabled": webhook.enabled,
        "event_types": sorted(webhook.event_types),
        "headers": [{"name": h.name, "value": h.value} for h in _sorted(webhook.headers)],
    }


def _sorted(headers: tuple[Any, ...]) -> list[Any]:
    return sorted(headers, key=lambda header: header.name.lower())


def sensitive_mask(resource: Resource | None) -> Any:
    """Terraform's `after_sensitive`: the resource's shape with `true` where a value is secret."""
    return _mask(resource) if resource is not None else False


def _mask(value: Any) -> Any:
    if isinstance(value, Secret):
        return True
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items() if _has_secret(item)}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return False


def _has_secret(value: Any) -> bool:
    if isinstance(value, Secret):
        return True
    if isinstance(value, dict):
        return any(_has_secret(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_secret(item) for item in value)
    return False


# --- changes ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PastAgreement:
    """An ENDED or INACTIVATED agreement for a managed externalId: history, never acted on."""

    external_id: str
    agreement: Worker

    @property
    def address(self) -> str:
        return worker_address(self.external_id)


class _Wanted:
    """A value holding the file's `worker`: its identity and its `after` come from it."""

    __slots__ = ()
    worker: DesiredWorker

    @property
    def external_id(self) -> str:
        return self.worker.external_id

    @property
    def address(self) -> str:
        return worker_address(self.worker.external_id)

    @property
    def after(self) -> Resource | None:
        return desired_worker_resource(self.worker)


class _Held:
    """A value holding a live `agreement`: its `before` comes from it."""

    __slots__ = ()
    agreement: Worker

    @property
    def before(self) -> Resource | None:
        return live_worker_resource(self.agreement)


@dataclass(frozen=True, slots=True)
class Invite(_Wanted):
    """Create: the file has a worker the service holds no open agreement for."""

    worker: DesiredWorker
    history: tuple[PastAgreement, ...] = ()

    actions: ClassVar[tuple[str, ...]] = ("create",)
    verb: ClassVar[str] = "invited"
    before: ClassVar[None] = None
    fields: ClassVar[tuple[FieldChange, ...]] = ()


@dataclass(frozen=True, slots=True)
class Inactivate(_Held):
    """Delete: an owned open agreement whose worker is no longer in the file (prune)."""

    external_id: str
    agreement: Worker
    ended: date | None = None  #: the file's `ended:` day: offboarding from git

    actions: ClassVar[tuple[str, ...]] = ("delete",)
    after: ClassVar[None] = None
    fields: ClassVar[tuple[FieldChange, ...]] = ()

    @property
    def address(self) -> str:
        return worker_address(self.external_id)

    @property
    def verb(self) -> str:
        if self.ended is not None:
            return f"inactivated (ended: {self.ended.isoformat()} in the file)"
        return "inactivated (no longer in the file)"


@dataclass(frozen=True, slots=True)
class Replace(_Wanted, _Held):
    """Delete then create, asked for with `--replace ID`: the only way to fix a drifted worker."""

    agreement: Worker
    worker: DesiredWorker
    fields: tuple[FieldChange, ...]

    actions: ClassVar[tuple[str, ...]] = ("delete", "create")
    verb: ClassVar[str] = "replaced (inactivated, then invited again)"


@dataclass(frozen=True, slots=True)
class WebhookCreate:
    """Create: the file has a webhook and the service has none."""

    webhook: DesiredWebhook

    actions: ClassVar[tuple[str, ...]] = ("create",)
    verb: ClassVar[str] = "created"
    address: ClassVar[str] = WEBHOOK_ADDRESS
    external_id: ClassVar[None] = None
    before: ClassVar[None] = None
    fields: ClassVar[tuple[FieldChange, ...]] = ()

    @property
    def after(self) -> Resource | None:
        return webhook_resource(self.webhook)


@dataclass(frozen=True, slots=True)
class WebhookUpdate:
    """Update in place: the service's webhook differs from the file's."""

    live: Webhook
    webhook: DesiredWebhook
    fields: tuple[FieldChange, ...]

    actions: ClassVar[tuple[str, ...]] = ("update",)
    verb: ClassVar[str] = "updated in place"
    address: ClassVar[str] = WEBHOOK_ADDRESS
    external_id: ClassVar[None] = None

    @property
    def before(self) -> Resource | None:
        # The live URL may hold a credential the files no longer write: masked unless written.
        return {
            **webhook_resource(self.live),
            "url": live_webhook_url(self.live.url, self.webhook.url),
        }

    @property
    def after(self) -> Resource | None:
        return webhook_resource(self.webhook)


Change = Invite | Inactivate | Replace | WebhookCreate | WebhookUpdate


def closed_agreements(changes: Iterable[Change]) -> frozenset[int]:
    """The agreements the changes close: inactivated, or replaced (inactivated, then invited
    again as a new agreement that is not ACTIVE yet). The one list every payee check uses."""
    return frozenset(
        change.agreement.agreement_id
        for change in changes
        if isinstance(change, Inactivate | Replace)
    )


WorkerChange = Invite | Inactivate | Replace


# --- findings -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Drift(_Wanted, _Held):
    """A managed worker whose live fields differ from the file: reported, never fixed in place."""

    agreement: Worker
    worker: DesiredWorker
    fields: tuple[FieldChange, ...]

    actions: ClassVar[tuple[str, ...]] = ("update",)


@dataclass(frozen=True, slots=True)
class Kept(_Wanted, _Held):
    """A managed worker the plan leaves as it is: in sync, or drifted (reported, not fixed)."""

    agreement: Worker
    worker: DesiredWorker
    drifted: tuple[FieldChange, ...] = ()

    @property
    def planned(self) -> Resource:
        """The worker as the account holds it after an apply: a drifted field keeps its live
        value, since the service cannot change it in place."""
        resource = desired_worker_resource(self.worker)
        resource.update((field.name, field.before) for field in self.drifted)
        return resource


@dataclass(frozen=True, slots=True)
class ClosedInService(_Wanted):
    """A worker of the files whose every agreement the service closed (HR ended it in the
    service's screens): reported risk first, never invited again by surprise. `rehire:` on
    its entry (once) or `--replace ID` invites it; `ended:` acknowledges the end."""

    worker: DesiredWorker
    history: tuple[PastAgreement, ...]

    @property
    def past(self) -> str:
        """'10 ENDED, 4 INACTIVATED': its agreements, newest first."""
        agreements = sorted((h.agreement for h in self.history), key=_newest_first)
        return ", ".join(f"{a.agreement_id} {a.status}" for a in agreements)

    @property
    def reason(self) -> str:
        """Why it is not invited, and what a file may say instead."""
        rehire = self.worker.rehire
        spent = ""
        if rehire is not None and rehire > max(
            h.agreement.created_at.astimezone(UTC).date() for h in self.history
        ):
            spent = f"rehire: {rehire.isoformat()} is ahead (invited from that day), "
        elif rehire is not None:
            spent = f"its rehire: {rehire.isoformat()} is spent, "
        return (
            f"closed in the service (agreement {self.past}): {spent}not invited again; "
            "write `ended: YYYY-MM-DD` on it (adopt does), or `rehire: YYYY-MM-DD` to invite "
            "it again once"
        )


def _newest_first(agreement: Worker) -> int:
    return -agreement.agreement_id


@dataclass(frozen=True, slots=True)
class Conflict:
    """Something the reconciler will not touch because the live account is ambiguous."""

    reason: str
    agreements: tuple[Worker, ...]
    external_id: str | None = None
    email: str | None = None

    @property
    def address(self) -> str | None:
        return worker_address(self.external_id) if self.external_id is not None else None


@dataclass(frozen=True, slots=True)
class Unmanaged:
    """An open agreement this file does not own: counted, listed on request, never touched."""

    agreement: Worker
    reason: str  # "no externalId" or "outside the scope"
