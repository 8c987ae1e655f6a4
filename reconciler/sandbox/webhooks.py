"""The client's single webhook configuration: POST creates or replaces it, GET reads it."""

from __future__ import annotations

import ipaddress
import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.sandbox.bodies import read_json
from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.problems import Problem, validation_problem
from reconciler.sandbox.timestamps import iso_us, now_ns
from reconciler.sandbox.validation import ObjectReader

EVENT_TYPES = ("KYC", "CLIENT_WALLET_TOP_UP", "PAYMENT")
MAX_HEADERS = 20
MAX_URL = 2048
MAX_HEADER_VALUE = 1024
FORBIDDEN_HEADERS = frozenset({"host", "content-length", "content-type", "transfer-encoding"})
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 token

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS webhooks (
        client_id INTEGER PRIMARY KEY REFERENCES clients (id),
        url TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        headers TEXT NOT NULL,
        event_types TEXT NOT NULL,
        created_ns INTEGER NOT NULL,
        updated_ns INTEGER NOT NULL
    )
    """,
)


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """A valid configuration as a body sets it."""

    url: str
    headers: tuple[tuple[str, str], ...]
    event_types: tuple[str, ...]
    enabled: bool


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problem(url: str) -> str | None:
    """Why `url` cannot receive events, or None when it can."""
    if any(char.isspace() for char in url):
        return "must not contain white space"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as error:
        return f"is not a valid URL: {error}"
    if not parts.hostname:
        return "must be an absolute URL with a host"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http":
        if is_loopback(parts.hostname):
            return None
        return "must use https:// (plain http:// only to a loopback host)"
    return f"must be an https:// URL, got scheme {parts.scheme!r}"


def _read_headers(value: list[Any], reader: ObjectReader) -> list[tuple[str, str]]:
    if len(value) > MAX_HEADERS:
        reader.fail("headers", f"at most {MAX_HEADERS} headers, got {len(value)}")
        return []
    headers: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for position, item in enumerate(value):
        header = ObjectReader(item, ("name", "value"), prefix=f"headers[{position}].")
        name = header.string("name")
        text = header.string("value", max_length=MAX_HEADER_VALUE)
        if name is not None:
            if not _TOKEN.fullmatch(name):
                header.fail("name", f"{name[:40]!r} is not a valid HTTP header name")
            elif name.lower() in FORBIDDEN_HEADERS:
                header.fail("name", f"{name} is set by the service and cannot be configured")
            elif (first := seen.setdefault(name.lower(), position)) != position:
                header.fail("name", f"repeats headers[{first}].name (names ignore case)")
        if text is not None and any(char in text for char in "\r\n\0"):
            header.fail("value", "must not contain line breaks or NUL characters")
        reader.errors += header.errors
        if header.ok and name is not None and text is not None:
            headers.append((name, text))
    return headers


def _read_event_types(value: list[Any], reader: ObjectReader) -> list[str]:
    if not value:
        reader.fail("event_types", f"must list at least one of {', '.join(EVENT_TYPES)}")
    types: list[str] = []
    for position, item in enumerate(value):
        field = f"event_types[{position}]"
        if item not in EVENT_TYPES:
            shown = json.dumps(item, default=str)[:40]  # a fraction is a Decimal here
            reader.fail(field, f"must be one of {', '.join(EVENT_TYPES)}, got {shown}")
        elif item in types:
            reader.fail(field, f"repeats {item}")
        else:
            types.append(item)
    return types


def read_config(body: object, client_id: int | None = None) -> WebhookConfig:
    """A valid configuration from a request body, or a 400 (403 for another client_id)."""
    reader = ObjectReader(body, ("url", "headers", "event_types", "enabled", "client_id"))
    if not isinstance(body, dict):
        raise validation_problem(reader.errors)
    url = reader.string("url", max_length=MAX_URL)
    if url is not None and (problem := url_problem(url)) is not None:
        reader.fail("url", problem)
    raw_headers = reader.array("headers")
    headers = _read_headers(raw_headers, reader) if raw_headers is not None else []
    raw_types = reader.array("event_types")
    event_types = _read_event_types(raw_types, reader) if raw_types is not None else []
    enabled = reader.boolean("enabled", default=True)
    named_client = reader.integer("client_id", minimum=1, maximum=2**63 - 1)
    if not reader.ok:
        raise validation_problem(reader.errors)
    if client_id is not None and named_client is not None and named_client != client_id:
        raise Problem(403, "client_id names another client than the token's")
    assert url is not None and enabled is not None
    return WebhookConfig(url, tuple(headers), tuple(event_types), enabled)


def upsert(conn: sqlite3.Connection, client_id: int, config: WebhookConfig) -> bool:
    """Create or replace the client's configuration (keeping created_at); True when created."""
    now = now_ns()
    headers = json.dumps([{"name": name, "value": value} for name, value in config.headers])
    event_types = json.dumps(list(config.event_types))
    created = (
        conn.execute("SELECT 1 FROM webhooks WHERE client_id = ?", (client_id,)).fetchone() is None
    )
    conn.execute(
        """
        INSERT INTO webhooks (client_id, url, enabled, headers, event_types, created_ns,
            updated_ns)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (client_id) DO UPDATE SET url = excluded.url, enabled = excluded.enabled,
            headers = excluded.headers, event_types = excluded.event_types,
            updated_ns = excluded.updated_ns
        """,
        (client_id, config.url, int(config.enabled), headers, event_types, now, now),
    )
    return created


def find(conn: sqlite3.Connection, client_id: int) -> dict[str, Any] | None:
    """The client's configuration as the service answers it (interface §2.7), or None."""
    row = conn.execute("SELECT * FROM webhooks WHERE client_id = ?", (client_id,)).fetchone()
    if row is None:
        return None
    return {
        "client_id": row["client_id"],
        "url": row["url"],
        "enabled": bool(row["enabled"]),
        "headers": json.loads(row["headers"]),
        "event_types": json.loads(row["event_types"]),
        "created_at": iso_us(row["created_ns"]),
        "updated_at": iso_us(row["updated_ns"]),
    }


async def set_webhook(request: Request) -> Response:
    client_id = authenticate(request)
    config = read_config(await read_json(request), client_id)
    with sandbox_of(request).store.write() as conn:
        created = upsert(conn, client_id, config)
        answer = find(conn, client_id)
    return JSONResponse(answer, status_code=201 if created else 200)


async def get_webhook(request: Request) -> Response:
    client_id = authenticate(request)
    with sandbox_of(request).store.read() as conn:
        answer = find(conn, client_id)
    if answer is None:
        raise Problem(404, "no webhook is configured for this client")
    return JSONResponse(answer)


async def webhook_configuration(request: Request) -> Response:
    return await (set_webhook(request) if request.method == "POST" else get_webhook(request))


ROUTES = [Route("/webhooks/clients", webhook_configuration, methods=["GET", "POST"])]
