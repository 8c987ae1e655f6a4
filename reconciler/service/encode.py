"""Typed values into the JSON the service takes: the API's own field names, exact amounts."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from reconciler import worker_fields
from reconciler.money import CENT
from reconciler.service.models import Invitation, PaymentItem, WebhookHeader
from reconciler.worker_fields import WorkerFields


def invitation_body(invitation: Invitation) -> dict[str, str]:
    """One item of the bulk invitation (interface §2.2); absent optional fields are left out."""
    fields = ((key, get(invitation)) for key, get in _sent(worker_fields.WORKER_FIELDS))
    return {name: value for name, value in fields if value is not None}


@functools.cache
def _sent(table: WorkerFields) -> tuple[tuple[str, Callable[[Invitation], Any]], ...]:
    """The fields an invitation sends, and what reads each from an `Invitation`."""
    return tuple((item.key, item.getter()) for item in table if item.sent)


def webhook_body(
    url: str, headers: Sequence[WebhookHeader], event_types: Sequence[str], enabled: bool
) -> dict[str, Any]:
    """The webhook configuration (interface §2.7); the one place header values are revealed."""
    return {
        "url": url,
        "headers": [{"name": header.name, "value": header.value.reveal()} for header in headers],
        "event_types": [str(event_type) for event_type in event_types],
        "enabled": enabled,
    }


def paylist_body(
    description: str, key: str, payments: Sequence[PaymentItem], client_id: int | None
) -> dict[str, Any]:
    """A paylist to create (interface §2.3); `client_id` only when the caller names it."""
    body: dict[str, Any] = {
        "description": description,
        "idempotence_key": key,
        "payments": [
            {
                "description": item.description,
                "amount": json_amount(item.amount),
                "worker_email": item.worker_email,
            }
            for item in payments
        ],
    }
    if client_id is not None:
        body["client_id"] = client_id
    return body


def json_amount(amount: Decimal) -> Decimal:
    """The amount as the JSON number the request carries: written from the Decimal's own
    digits (`dumps`), never through a float."""
    if not amount.is_finite():
        raise ValueError(f"the amount {amount} cannot be sent")
    return amount.quantize(CENT)


_TOKEN = "\u0000decimal:"
_TOKEN_RE = re.compile(r'"\\u0000decimal:(-?[0-9]+(?:\.[0-9]+)?)"')


def dumps(body: object) -> str:
    """JSON text in which every Decimal is a number with exactly its digits (`12.50`)."""

    def token(value: object) -> str:
        if isinstance(value, Decimal):
            return f"{_TOKEN}{value}"
        raise TypeError(f"{type(value).__name__} is not JSON")

    return _TOKEN_RE.sub(r"\1", json.dumps(body, default=token))


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a `Z`, as the date-range payments query takes it."""
    if moment.tzinfo is None:
        raise ValueError("a timestamp sent to the service must be timezone-aware")
    utc = moment.astimezone(UTC)
    # isoformat, not strftime: %Y writes the year 1 as "1" here, where ISO 8601 takes "0001".
    return utc.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def date_range(since: datetime | None, until: datetime | None) -> dict[str, str]:
    """`startDate`/`endDate` for the dated lists; left out, the service's defaults hold."""
    params = {}
    if since is not None:
        params["startDate"] = format_timestamp(since)
    if until is not None:
        params["endDate"] = format_timestamp(until)
    return params
