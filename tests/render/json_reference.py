"""The oracle of the streamed JSON plan: the document as it was made before it streamed (commit
0a09671), whole, then `json.dumps(..., indent=2, ensure_ascii=False)`.

Only the assembly is kept here (the document's keys, `planned_values` made from the changes'
entries and sorted whole): each entry is still made by the renderer's own functions, so a
change to what an entry holds changes both sides, and what is compared is the streaming, the
order and the encoding.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler import __version__
from reconciler.plan.changes import WEBHOOK_ADDRESS, sensitive_mask, webhook_resource
from reconciler.plan.model import Plan
from reconciler.plan.payruns import parts_of
from reconciler.render.base import jsonable
from reconciler.render.json import (
    FORMAT_VERSION,
    _closed,
    _conflict,
    _drift,
    _history,
    _identity,
    _paylist_change,
    _payrun,
    _resource_change,
    _unmanaged,
    _wallet,
)
from reconciler.render.money import money_json


def reference_bytes(plan: Plan) -> bytes:
    """What `plan --format json` printed before it streamed."""
    return (json.dumps(reference_document(plan), indent=2, ensure_ascii=False) + "\n").encode()


def reference_document(plan: Plan) -> dict[str, Any]:
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
        "closed_in_service": [_closed(entry) for entry in plan.closed_entries],
        "warnings": list(plan.warnings),
        "ignored": [
            {
                "address": i.address,
                "reason": i.rule.reason,
                "owner": i.rule.owner,
                "until": str(i.rule.until),
            }
            for i in plan.ignored
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
    }


def _planned(plan: Plan, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
    rank = {"worker": 0, WEBHOOK_ADDRESS: 1}.get(entry["type"], 2)
    return rank, entry["address"]
