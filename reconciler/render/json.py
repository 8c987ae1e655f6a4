"""The plan as JSON in the shape of Terraform's plan JSON, described by schemas/plan.schema.json.

The document is written as it is made (`render.json_stream`): `planned_values` lists every managed
resource, 100,000 for an account of 100,000 workers, and neither it nor `resource_changes` is
ever held whole; each resource is built, encoded and let go. The bytes are those
`json.dumps(document, indent=2, ensure_ascii=False)` wrote when the document was built whole.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from operator import itemgetter
from typing import Any

from reconciler import __version__
from reconciler.desired.model import DesiredWorker
from reconciler.money import two_places
from reconciler.plan.changes import (
    WEBHOOK_ADDRESS,
    Change,
    Conflict,
    Drift,
    FieldChange,
    Inactivate,
    PastAgreement,
    Replace,
    Unmanaged,
    desired_worker_resource,
    live_worker_resource,
    sensitive_mask,
    webhook_resource,
    worker_address,
)
from reconciler.plan.model import ClosedEntry, Plan
from reconciler.plan.payrun_checks import WalletCheck
from reconciler.plan.payruns import PayrunDecision, parts_of
from reconciler.plan.variance import Variance
from reconciler.render.base import jsonable
from reconciler.render.json_stream import Output, Stream, materialised, write_document
from reconciler.render.money import money_json
from reconciler.service.models import Worker

FORMAT_VERSION = "1.2"  # 1.2: money.top_ups is null in a plan (drift reads the journal)

# Terraform's words for why an action was chosen, where one of them fits.
_REASONS = {Inactivate: "delete_because_no_resource_config", Replace: "replace_by_request"}


class JsonRenderer:
    """Machine-readable plan: `resource_changes`, `resource_drift`, `unmanaged`, `summary`."""

    def render(self, plan: Plan) -> str:
        return plan_json(plan)

    def write(self, plan: Plan, out: Output) -> None:
        write_plan_json(plan, out)


#: Terraform's `provider_name` for every resource: policies written for Terraform filter on it.
PROVIDER = "registry.reconciler.dev/reconciler/workforce"


def write_plan_json(plan: Plan, out: Output) -> None:
    """Write the plan's JSON document (UTF-8, a final new line) to `out` as it is made, in
    pieces that each end with a new line; `out` sees the document once and nothing holds it
    whole. To stdout, through `redaction.guarded_bytes` as every output."""
    write_document(_document(plan), out)


def plan_json(plan: Plan) -> str:
    """The plan's JSON document as text, exactly as `write_plan_json` writes it."""
    buffer = io.BytesIO()
    write_plan_json(plan, buffer)
    return buffer.getvalue().decode()


def plan_document(plan: Plan) -> dict[str, Any]:
    """The JSON document of a plan as one value, before serialisation (what `write_plan_json`
    writes without ever holding it): a superset of Terraform's plan representation
    (`resource_changes[].mode`, `type`, `name`, `provider_name`, `change.actions`,
    `planned_values.root_module.resources`, `resource_drift`), so policies written for
    Terraform plans (OPA/conftest) read it unchanged."""
    document: dict[str, Any] = materialised(_document(plan))
    return document


def _document(plan: Plan) -> dict[str, Any]:
    """The document, its long lists as `Stream`s made while it is written."""
    return {
        "format_version": FORMAT_VERSION,
        "terraform_version": __version__,
        "reconciler_version": __version__,
        "planned_values": {"root_module": {"resources": Stream(_planned(plan))}},
        "resource_changes": Stream(_changes(plan)),
        "resource_drift": Stream(_drift(drift) for drift in plan.drift),
        "conflicts": Stream(_conflict(conflict) for conflict in plan.conflicts),
        "unmanaged": Stream(_unmanaged(item) for item in plan.unmanaged),
        "history": Stream(_history(past) for past in plan.history),
        "closed_in_service": [
            _closed(entry) for entry in plan.closed_entries if entry.agreements is not None
        ],
        "warnings": list(plan.warnings),
        "ignored": [
            {
                "address": item.address,
                "reason": item.rule.reason,
                "owner": item.rule.owner,
                "until": item.rule.until.isoformat(),
            }
            for item in plan.ignored
        ],
        "safety": {
            "safe": plan.safety.safe,
            "problems": list(plan.safety.problems),
            "owned_open_agreements": plan.safety.owned_open,
            "inactivations": plan.safety.inactivations,
            "max_inactivations": str(plan.safety.limit),
        },
        "summary": plan.summary.as_dict(),
        "payruns": [_payrun(decision, parts_of(plan.payruns)) for decision in plan.payruns],
        "wallet": None if plan.wallet is None else _wallet(plan.wallet),
        "money": None if plan.money is None else money_json(plan.money),
        # Dual control, where the plan judged it (`plan` and `comment` do): optional, as
        # plans of other commands and of versions before it have none.
        **({} if plan.approvals is None else {"approvals": plan.approvals.as_dict()}),
    }


def _changes(plan: Plan) -> Iterator[dict[str, Any]]:
    for change in plan.changes:
        yield _resource_change(change)
    for decision in plan.to_pay:
        yield _paylist_change(decision)


def _paylist_change(decision: PayrunDecision) -> dict[str, Any]:
    return {
        **_identity(decision.address, decision.payrun_id, "paylist"),
        "change": _change_block(["create"], None, _paylist_after(decision)),
    }


def _paylist_after(decision: PayrunDecision) -> dict[str, Any]:
    return {
        "idempotence_key": decision.key,
        "description": decision.description,
        "payments": [
            {"email": p.email, "amount": two_places(p.amount), "description": p.description}
            for p in decision.payments
        ],
        "total": two_places(decision.total),
    }


def _change_block(
    actions: list[str],
    before: Any,
    after: Any,
    changed_fields: list[str] | None = None,
    *,
    before_sensitive: Any = False,
    after_sensitive: Any = False,
) -> dict[str, Any]:
    """Terraform's `change`: the actions, the values before and after, and their masks."""
    return {
        "actions": actions,
        "before": before,
        "after": after,
        "after_unknown": {},
        "before_sensitive": before_sensitive,
        "after_sensitive": after_sensitive,
        "changed_fields": changed_fields or [],
    }


def _payrun(decision: PayrunDecision, parts: dict[str, int]) -> dict[str, Any]:
    return {
        "address": decision.address,
        "id": decision.payrun_id,
        "part": decision.part,
        "parts": parts[decision.payrun_id],
        "idempotence_key": decision.key,
        "state": decision.state,
        "reasons": list(decision.reasons),
        "outcomes": dict(decision.outcomes),
        "paylist_id": decision.paylist_id,
        "total": two_places(decision.total),
        "period": decision.period,
        "notes": list(decision.notes),
        "changed": None if decision.variance is None else _variance(decision.variance),
    }


def _variance(variance: Variance) -> dict[str, Any]:
    return {
        "since": variance.before,
        "total_before": two_places(variance.before_total),
        "total_after": two_places(variance.after_total),
        "added": [{"email": e, "amount": two_places(a)} for e, a in variance.added],
        "no_longer_paid": [{"email": e, "amount": two_places(a)} for e, a in variance.removed],
        "amount_changed": [
            {"email": e, "before": two_places(b), "after": two_places(a)}
            for e, b, a in variance.changed
        ],
    }


def _wallet(wallet: WalletCheck) -> dict[str, Any]:
    return {
        "balance": two_places(wallet.balance),
        "over_draft_limit": two_places(wallet.over_draft_limit),
        "enabled": wallet.enabled,
        "total_to_pay": two_places(wallet.total_to_pay),
        "balance_after": two_places(wallet.balance_after),
        "problems": list(wallet.problems),
    }


def _identity(address: str, index: str | None, kind: str | None = None) -> dict[str, Any]:
    kind = kind or (WEBHOOK_ADDRESS if address == WEBHOOK_ADDRESS else "worker")
    identity: dict[str, Any] = {"address": address, "mode": "managed", "type": kind, "name": kind}
    if index is not None:
        identity["index"] = index
    identity["provider_name"] = PROVIDER
    return identity


#: What `planned_values` lists besides the kept workers, each with its place: (rank, address).
_Other = Change | PayrunDecision | None  # None: the kept webhook
_KeptPair = tuple[Worker, DesiredWorker, tuple[FieldChange, ...]]


def _planned(plan: Plan) -> Iterator[dict[str, Any]]:
    """Every managed resource as an apply would leave it, those it leaves alone included (as
    Terraform's `planned_values`): the changes' `after`, the kept workers, the kept webhook;
    workers in address order, then the webhook, then the paylists (`_place`), the changes
    first where two share a place. Made one at a time: only references are sorted."""
    webhook: list[_Other] = [None] if plan.kept_webhook is not None else []
    others = sorted(
        (_place(other), number, other)
        for number, other in enumerate([*plan.changes, *plan.to_pay, *webhook])
    )
    kept = sorted(
        ((worker_address(pair[1].external_id), pair) for pair in plan.kept_pairs), key=itemgetter(0)
    )
    position, count = 0, len(others)
    for address, pair in kept:
        while position < count and others[position][0] <= (0, address):
            yield from _planned_other(plan, others[position][2])
            position += 1
        yield _kept_resource(address, pair)
    for _, _, other in others[position:]:
        yield from _planned_other(plan, other)


def _place(other: _Other) -> tuple[int, str]:
    """Workers in address order, then the webhook, then the paylists (the plan's order)."""
    if other is None:
        return 1, WEBHOOK_ADDRESS
    if isinstance(other, PayrunDecision):
        return 2, other.address
    return (1 if other.address == WEBHOOK_ADDRESS else 0), other.address


def _planned_other(plan: Plan, other: _Other) -> Iterator[dict[str, Any]]:
    if other is None:
        assert plan.kept_webhook is not None
        yield _planned_resource(WEBHOOK_ADDRESS, None, webhook_resource(plan.kept_webhook))
    elif isinstance(other, PayrunDecision):
        yield _planned_entry(other.address, "paylist", other.payrun_id, _paylist_after(other), {})
    else:
        after = other.after
        if after is not None:  # an inactivation leaves nothing
            yield _planned_resource(other.address, other.external_id, after)


def _kept_resource(address: str, pair: _KeptPair) -> dict[str, Any]:
    """A kept worker as the account holds it after an apply (`Kept.planned`): a drifted field
    keeps its live value."""
    _, worker, drifted = pair
    values = desired_worker_resource(worker)
    for field in drifted:
        values[field.name] = field.before
    return _planned_resource(address, worker.external_id, values)


def _planned_resource(address: str, index: str | None, values: dict[str, Any]) -> dict[str, Any]:
    kind = WEBHOOK_ADDRESS if address == WEBHOOK_ADDRESS else "worker"
    if set(map(type, values.values())) <= _PLAIN:  # the common case: nothing to mask
        return _planned_entry(address, kind, index, values, {})
    mask = sensitive_mask(values)
    return _planned_entry(address, kind, index, jsonable(values), mask)


#: The types of a resource's values that `jsonable` and `sensitive_mask` leave alone.
_PLAIN = frozenset({str, int, bool, type(None)})


def _planned_entry(
    address: str, kind: str, index: str | None, values: Any, mask: Any
) -> dict[str, Any]:
    """A resource of `planned_values`: `_identity`'s keys with the index after the provider."""
    resource: dict[str, Any] = {
        "address": address,
        "mode": "managed",
        "type": kind,
        "name": kind,
        "provider_name": PROVIDER,
    }
    if index is not None:
        resource["index"] = index
    resource["schema_version"] = 0
    resource["values"] = values
    resource["sensitive_values"] = mask if isinstance(mask, dict) else {}
    return resource


def _resource_change(change: Change) -> dict[str, Any]:
    entry = _identity(change.address, change.external_id)
    before, after = change.before, change.after
    entry["change"] = _change_block(
        list(change.actions),
        jsonable(before),
        jsonable(after),
        [field.name for field in change.fields],
        before_sensitive=sensitive_mask(before),
        after_sensitive=sensitive_mask(after),
    )
    reason = _REASONS.get(type(change))
    if reason is not None:
        entry["action_reason"] = reason
    return entry


def _drift(drift: Drift) -> dict[str, Any]:
    entry = _identity(drift.address, drift.external_id)
    entry["change"] = _change_block(
        list(drift.actions),
        jsonable(drift.before),
        jsonable(drift.after),
        [field.name for field in drift.fields],
    )
    return entry


def _conflict(conflict: Conflict) -> dict[str, Any]:
    return {
        "address": conflict.address,
        "externalId": conflict.external_id,
        "email": conflict.email,
        "reason": conflict.reason,
        "agreements": [live_worker_resource(a) for a in conflict.agreements],
    }


def _unmanaged(item: Unmanaged) -> dict[str, Any]:
    return {**live_worker_resource(item.agreement), "reason": item.reason}


def _closed(entry: ClosedEntry) -> dict[str, Any]:
    """A worker closed in the service: this plan's, or the one its saved plan kept."""
    return {
        "address": entry.address,
        "externalId": entry.external_id,
        "reason": entry.reason,
        "rehire": entry.rehire,
        "agreements": list(entry.agreements or ()),
    }


def _history(past: PastAgreement) -> dict[str, Any]:
    return {"address": past.address, **live_worker_resource(past.agreement)}
