"""The plan as JSON in the shape of Terraform's plan JSON, described by schemas/plan.schema.json."""

from __future__ import annotations

import json
from typing import Any

from reconciler import __version__
from reconciler.money import two_places
from reconciler.plan.changes import (
    WEBHOOK_ADDRESS,
    Change,
    Conflict,
    Drift,
    Inactivate,
    PastAgreement,
    Replace,
    Unmanaged,
    live_worker_resource,
    sensitive_mask,
    webhook_resource,
)
from reconciler.plan.model import Plan
from reconciler.plan.payruns import PayrunDecision, WalletCheck, parts_of
from reconciler.render.base import jsonable
from reconciler.render.money import money_json

FORMAT_VERSION = "1.2"  # 1.2: money.top_ups is null in a plan (drift reads the journal)

# Terraform's words for why an action was chosen, where one of them fits.
_REASONS = {Inactivate: "delete_because_no_resource_config", Replace: "replace_by_request"}


class JsonRenderer:
    """Machine-readable plan: `resource_changes`, `resource_drift`, `unmanaged`, `summary`."""

    def render(self, plan: Plan) -> str:
        return json.dumps(plan_document(plan), indent=2, ensure_ascii=False) + "\n"


#: Terraform's `provider_name` for every resource: policies written for Terraform filter on it.
PROVIDER = "registry.reconciler.dev/reconciler/workforce"


def plan_document(plan: Plan) -> dict[str, Any]:
    """The JSON document of a plan, before serialisation: a superset of Terraform's plan
    representation (`resource_changes[].mode`, `type`, `name`, `provider_name`, `change.actions`,
    `planned_values.root_module.resources`, `resource_drift`), so policies written for
    Terraform plans (OPA/conftest) read it unchanged."""
    changes = [_resource_change(change) for change in plan.changes]
    changes += [_paylist_change(decision) for decision in plan.to_pay]
    return {
        "format_version": FORMAT_VERSION,
        "terraform_version": __version__,
        "reconciler_version": __version__,
        "planned_values": {"root_module": {"resources": _planned(plan, changes)}},
        "resource_changes": changes,
        "resource_drift": [_drift(drift) for drift in plan.drift],
        "conflicts": [_conflict(conflict) for conflict in plan.conflicts],
        "unmanaged": [_unmanaged(item) for item in plan.unmanaged],
        "history": [_history(past) for past in plan.history],
        "warnings": list(plan.warnings),
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
    }


def _paylist_change(decision: PayrunDecision) -> dict[str, Any]:
    after = {
        "idempotence_key": decision.key,
        "description": decision.description,
        "payments": [
            {"email": p.email, "amount": two_places(p.amount), "description": p.description}
            for p in decision.payments
        ],
        "total": two_places(decision.total),
    }
    return {
        **_identity(decision.address, decision.payrun_id, "paylist"),
        "change": _change_block(["create"], None, after),
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


def _planned(plan: Plan, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every managed resource as an apply would leave it, those it leaves alone included (as
    Terraform's `planned_values`): the changes' `after`, the kept workers, the kept webhook."""
    entries = [
        (entry, entry["change"]["after"], entry["change"]["after_sensitive"])
        for entry in changes
        if entry["change"]["after"] is not None
    ]
    for kept in plan.kept:
        values = kept.planned
        identity = _identity(kept.address, kept.external_id)
        entries.append((identity, jsonable(values), sensitive_mask(values)))
    if plan.kept_webhook is not None:
        after = webhook_resource(plan.kept_webhook)
        entries.append((_identity(WEBHOOK_ADDRESS, None), jsonable(after), sensitive_mask(after)))
    resources = []
    for entry, values, mask in sorted(entries, key=lambda item: _planned_order(item[0])):
        resource = {key: entry[key] for key in ("address", "mode", "type", "name", "provider_name")}
        if "index" in entry:
            resource["index"] = entry["index"]
        resource |= {
            "schema_version": 0,
            "values": values,
            "sensitive_values": mask if isinstance(mask, dict) else {},
        }
        resources.append(resource)
    return resources


def _planned_order(entry: dict[str, Any]) -> tuple[int, str]:
    """Workers in address order, then the webhook, then the paylists (the plan's order)."""
    rank = {"worker": 0, WEBHOOK_ADDRESS: 1}.get(entry["type"], 2)
    return rank, entry["address"]


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


def _history(past: PastAgreement) -> dict[str, Any]:
    return {"address": past.address, **live_worker_resource(past.agreement)}
