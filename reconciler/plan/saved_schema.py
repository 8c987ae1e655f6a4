"""The exact shape of a saved plan, checked before anything in it is believed.

The signature says a plan was not edited; this says it is the shape this version writes, so
that no `true` stands where an agreement id belongs, no key is missing or added, and nothing
later has to guess. It is JSON Schema, checked by `jsonschema_rs` like the desired state.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema_rs

from reconciler import worker_fields
from reconciler.worker_fields import WorkerFields


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": sorted(required),
        "additionalProperties": False,
    }


_TEXT = {"type": "string", "maxLength": 100_000}
_COUNT = {"type": "integer", "minimum": 0}
_AGREEMENT = {"type": "integer", "minimum": 0}
_DIGEST = {"type": "string", "pattern": "^(absent|hmac-sha256:[0-9a-f]{64})$"}
_SECRET = {
    "oneOf": [
        _object({"value": _TEXT}),
        _object({"template": _TEXT, "hmac": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}),
    ]
}


def worker_schema(table: WorkerFields) -> dict[str, Any]:
    """A worker as a saved plan holds it (`DesiredWorker.as_fields`): the table's fields."""
    properties = {item.key: dict(item.saved or _TEXT) for item in table}
    return _object({key: properties[key] for key in table.required}, properties)


_TABLE = worker_fields.WORKER_FIELDS
_WORKER = worker_schema(_TABLE)
_WEBHOOK = _object(
    {
        "url": _SECRET,
        "enabled": {"type": "boolean"},
        "event_types": {"type": "array", "items": _TEXT},
        "headers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": _TEXT},
                "oneOf": [
                    {"required": ["value"], "not": {"required": ["template"]}},
                    {"required": ["template", "hmac"], "not": {"required": ["value"]}},
                ],
                "additionalProperties": _TEXT,
                "propertyNames": {"enum": ["name", "value", "template", "hmac"]},
            },
        },
    }
)


_ACTIONS: dict[str, dict[str, Any]] = {
    "invite": {"worker": _WORKER},
    "inactivate": {"externalId": _TEXT, "agreementId": _AGREEMENT},
    "replace": {"agreementId": _AGREEMENT, "worker": _WORKER},
    "webhook_create": {"webhook": _WEBHOOK},
    "webhook_update": {"webhook": _WEBHOOK},
}
# Told apart by `action` first, so an error names the field that is wrong, not "no match".
_CHANGE = {
    "type": "object",
    "required": ["action"],
    "properties": {"action": {"enum": sorted(_ACTIONS)}},
    "allOf": [
        {
            "if": {"properties": {"action": {"const": action}}},
            "then": _object(
                {"action": {"const": action}, "address": _TEXT, "fingerprint": _DIGEST, **fields}
            ),
        }
        for action, fields in _ACTIONS.items()
    ],
}

_MONEY = r"^[0-9]{1,13}\.[0-9]{2}$"
_SHOWN = {"type": ["string", "null"], "maxLength": 100_000}
_DRIFT = _object(
    {
        "address": _TEXT,
        "agreementId": _AGREEMENT,
        "fields": {
            "type": "array",
            "items": _object({"name": _TEXT, "before": _SHOWN, "after": _SHOWN}),
        },
    }
)
_PAID = {"type": "string", "pattern": _MONEY}
#: What changed since the payrun paid before, as reviewed (`variance.variance_record`).
_VARIANCE = _object(
    {
        "before": _TEXT,
        "added": {"type": "array", "items": _object({"email": _TEXT, "amount": _PAID})},
        "removed": {"type": "array", "items": _object({"email": _TEXT, "amount": _PAID})},
        "changed": {
            "type": "array",
            "items": _object({"email": _TEXT, "before": _PAID, "after": _PAID}),
        },
        "before_total": _PAID,
        "after_total": _PAID,
    }
)
_PAYRUN = _object(
    {
        "address": _TEXT,
        "action": {"const": "pay"},
        "id": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
        "part": {"type": ["integer", "null"], "minimum": 1},
        "idempotence_key": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
        "description": _TEXT,
        "payments": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1000,
            "items": _object(
                {
                    "email": _TEXT,
                    "agreementId": _AGREEMENT,
                    "amount": _PAID,
                    "description": _TEXT,
                },
                {"worker": _TEXT},  # optional: plans saved before it name the payee by email
            ),
        },
    },
    {
        "period": {"type": "string", "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])$"},
        # Optional: plans saved before it read what changed again from the account.
        "variance": {"oneOf": [{"type": "null"}, _VARIANCE]},
    },
)

_AMOUNT = {"type": "string", "pattern": r"^-?[0-9]{1,20}(\.[0-9]{1,20})?$"}
_MOMENT = {"type": ["string", "null"], "maxLength": 64}
_FIGURE = _object({"count": _COUNT, "total": _AMOUNT})
_ALERT = _object(
    {
        "payment_id": _AGREEMENT,
        "paylist_id": _AGREEMENT,
        "email": _TEXT,
        "amount": _AMOUNT,
        "status": _TEXT,
        "cause": _SHOWN,
        "created_at": _MOMENT,
        "action": _TEXT,
    }
)
#: The money of the window the plan reported (`saved.money_record`), null when none was read.
_MONEY_REPORT = {
    "oneOf": [
        {"type": "null"},
        _object(
            {
                "since": {"type": "string", "maxLength": 64},
                "relative": _SHOWN,
                "paid": _FIGURE,
                "untraced": {
                    "type": "array",
                    "items": _object(
                        {
                            "paylist_id": _AGREEMENT,
                            "created_at": _MOMENT,
                            "description": _TEXT,
                            "payments": _COUNT,
                            "total": _AMOUNT,
                        }
                    ),
                },
                "failed": {"type": "array", "items": _ALERT},
                "stuck": {"type": "array", "items": _ALERT},
                "pending": _FIGURE,
                "top_ups": {"oneOf": [{"type": "null"}, _FIGURE]},
                "balance": {"oneOf": [{"type": "null"}, _AMOUNT]},
            }
        ),
    ]
}

#: A live agreement in the file's field names (`changes.live_worker_resource`).
_RESOURCE = {
    "type": "object",
    "required": ["agreementId", "status"],
    "additionalProperties": {"type": ["string", "integer", "null"], "maxLength": 100_000},
}
#: A worker closed in the service (`saved.closed_record`); plans saved before it kept only
#: the address and why.
_CLOSED = _object(
    {"address": _TEXT, "reason": _TEXT},
    {"externalId": _TEXT, "rehire": _SHOWN, "agreements": {"type": "array", "items": _RESOURCE}},
)
_MONEY_TEXT = {"type": "string", "pattern": r"^[0-9]{1,13}\.[0-9]{2}$"}
_RULE = _object(
    {
        "over": _MONEY_TEXT,
        "count": {"type": "integer", "minimum": 1, "maximum": 100},
        "from": {
            "type": "array",
            "minItems": 1,
            "items": {"oneOf": [_TEXT, _object({"team": _TEXT})]},
        },
    }
)
_ID = {"type": ["integer", "null"], "minimum": 0}
#: A commit as the forge names it (a full SHA from every forge so far; kept as text, so that a
#: forge's other spelling never makes the plan unreadable).
_SHA = {"type": "string", "minLength": 1, "maxLength": 200}
_LINES = {"type": "array", "items": _TEXT}
#: The approvals a plan judged (dual control), optional: plans saved before it have none.
_APPROVALS = _object(
    {
        "policy": {"oneOf": [{"type": "null"}, {"type": "array", "items": _RULE}]},
        "note": {"type": ["string", "null"], "maxLength": 100_000},
        "requests": {"type": "array", "items": {"type": "integer", "minimum": 1}},
        "verdicts": {
            "type": "array",
            "items": _object(
                {
                    "payrun": _TEXT,
                    "total": _MONEY_TEXT,
                    "rule": {"oneOf": [{"type": "null"}, _RULE]},
                    "approvals": {
                        "type": "array",
                        "items": _object(
                            {
                                "login": _TEXT,
                                "id": _ID,
                                "commit": _SHA,
                                "submitted_at": _TEXT,
                                "request": {"type": "integer", "minimum": 1},
                            }
                        ),
                    },
                    "not_counted": _LINES,
                    "missing": {"type": ["string", "null"], "maxLength": 100_000},
                    "needs_has": _TEXT,
                }
            ),
        },
        "money_at": {
            "type": "object",
            "propertyNames": _SHA,
            "additionalProperties": {
                "type": "object",
                "additionalProperties": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
            },
        },
    }
)

SCHEMA: dict[str, Any] = _object(
    {
        "format": {"const": "reconciler-plan"},
        "format_version": {"const": 5},
        "tool_version": _TEXT,
        "created_at": _TEXT,
        "sources": {"type": "array", "items": _TEXT},
        "key": _object({"setting": _TEXT, "check": _TEXT}),
        "account": _object(
            {
                "base_url": {"type": "string", "minLength": 1, "maxLength": 2000},
                "client_id": {"type": "integer", "minimum": 0},
                "email": {"type": ["string", "null"], "maxLength": 320},
            }
        ),
        "review": _object(
            {
                "files": {"type": "string", "pattern": "^hmac-sha256:[0-9a-f]{64}$"},
                "pull_request": {"type": ["integer", "null"], "minimum": 1},
                "head_sha": {
                    "type": ["string", "null"],
                    "pattern": "^[0-9a-f]{40}([0-9a-f]{24})?$",
                },
            }
        ),
        "scope": _object({"externalIdPrefix": {"type": ["string", "null"]}}),
        "safety": _object(
            {
                "owned_open_agreements": _COUNT,
                "max_inactivations": _object(
                    {
                        "value": {"type": "string", "pattern": r"^[0-9]{1,20}(\.[0-9]{1,20})?$"},
                        "is_share": {"type": "boolean"},
                    }
                ),
            }
        ),
        "reported": _object(
            {"drifted": _COUNT, "unmanaged": _COUNT, "conflicts": _COUNT},
            {  # optional: plans saved before them
                "drift": {"type": "array", "items": _DRIFT},
                "money": _MONEY_REPORT,
                "closed": {"type": "array", "items": _CLOSED},
                "made_in_service": {"type": "array", "items": _RESOURCE},
                "warnings": {"type": "array", "items": _TEXT},
                #: The ignore rules that hide too much, as the plan warned of them.
                "ignore_risks": {"type": "array", "items": _TEXT},
            },
        ),
        "changes": {"type": "array", "items": _CHANGE},
        "payruns": {"type": "array", "items": _PAYRUN},
        "max_payout": {"type": ["string", "null"], "pattern": _MONEY},
        "mac": {"type": "string", "pattern": "^hmac-sha256:[0-9a-f]{64}$"},
    },
    {"approvals": _APPROVALS},
)


@functools.cache
def _validator(table: WorkerFields) -> Any:
    """The saved plan's validator, its workers those of `table`."""
    if table is _TABLE:
        return jsonschema_rs.validator_for(SCHEMA)
    return jsonschema_rs.validator_for(_with_workers(SCHEMA, worker_schema(table)))


def _with_workers(schema: Any, worker: dict[str, Any]) -> Any:
    if schema is _WORKER:
        return worker
    if isinstance(schema, dict):
        return {key: _with_workers(value, worker) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_with_workers(value, worker) for value in schema]
    return schema


def document_problem(document: Any) -> str | None:
    """The first way `document` differs from a saved plan's shape, or None."""
    for error in _validator(worker_fields.WORKER_FIELDS).iter_errors(document):
        where = "/".join(str(part) for part in error.instance_path) or "the document"
        return f"at {where}: {_short(error.message)}"
    return None


def _short(message: str) -> str:
    return message if len(message) <= 160 else message[:157] + "..."
