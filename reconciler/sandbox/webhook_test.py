"""`POST /webhooks/clients/test`: one test event, sent now, once, and what came of it.

The event goes to the configured URL with the configured headers, marked `"test": true` beside
`event_type` and `data` (sample data of the documented shape, with the client's real id). It is
not an event of the account: never retried, never listed by `/_sandbox/events`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.sandbox import events, webhooks
from reconciler.sandbox.bodies import read_json
from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.jsontext import dumps
from reconciler.sandbox.problems import FieldError, Problem, validation_problem

SCHEMA: tuple[str, ...] = ()


def sample(event_type: str, client_id: int) -> dict[str, Any]:
    """Sample data of the documented shape for each event type."""
    if event_type == events.KYC:
        return {
            "status": "ACTIVE",
            "worker_id": 0,
            "client_id": client_id,
            "external_id": "TEST-0",
            "worker_email": "test@example.com",
        }
    if event_type == events.PAYMENT:
        return {
            "payment_id": 0,
            "client_id": client_id,
            "worker_id": 0,
            "paylist_id": 0,
            "idempotency_key": "0" * 32,
            "email": "test@example.com",
            "transaction_status": "SUCCESS",
            "transaction_amount": Decimal("1.00"),
            "transaction_date_time": 0,
        }
    return {
        "transaction_id": 0,
        "transaction_type": "TRANSFER",
        "amount": Decimal("1.00"),
        "reference_id": "test",
    }


async def send_test_event(request: Request) -> Response:
    client_id = authenticate(request)
    body = await read_json(request, optional=True)
    if not isinstance(body, dict):
        raise Problem(400, "the body must be a JSON object: {event_type?}")
    with sandbox_of(request).store.read() as conn:
        config = webhooks.find(conn, client_id)
    if config is None:
        raise Problem(404, "no webhook is configured")
    if not config["enabled"]:
        raise Problem(400, "the webhook is disabled: enable it to send a test event")
    event_type = body.get("event_type", config["event_types"][0])
    if event_type not in config["event_types"]:
        message = f"must be one the webhook subscribes: {', '.join(config['event_types'])}"
        raise validation_problem([FieldError(message, field="event_type")])
    payload = {"event_type": event_type, "data": sample(event_type, client_id), "test": True}
    answer: dict[str, Any] = {"event_type": event_type}
    answer.update(await _send(config, dumps(payload)))
    return JSONResponse(answer)


async def _send(config: dict[str, Any], text: str) -> dict[str, Any]:
    if not webhooks.is_loopback(urlsplit(config["url"]).hostname or ""):
        return {"delivered": False, "status_code": None, "error": events.NOT_LOOPBACK}
    headers = {item["name"]: item["value"] for item in config["headers"]}
    headers["Content-Type"] = "application/json"
    try:
        async with httpx.AsyncClient(timeout=events.TIMEOUT_S) as http:
            reply = await http.post(config["url"], content=text.encode("utf-8"), headers=headers)
    except httpx.TimeoutException:
        error = f"no answer within {events.TIMEOUT_S:g} s"
        return {"delivered": False, "status_code": None, "error": error}
    except httpx.HTTPError as failure:
        error = f"{type(failure).__name__}: {failure}"
        return {"delivered": False, "status_code": None, "error": error}
    delivered = 200 <= reply.status_code < 300
    return {"delivered": delivered, "status_code": reply.status_code, "error": None}


ROUTES = [Route("/webhooks/clients/test", send_test_event, methods=["POST"])]
