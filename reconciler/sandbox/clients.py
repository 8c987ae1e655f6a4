"""Clients (companies), their tokens and wallets, the demo client, and bearer authentication."""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass

from starlette.requests import Request
from starlette.routing import Route

from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.login import client_of_jwt, ensure_secret, looks_like_jwt, set_credentials
from reconciler.sandbox.problems import Problem
from reconciler.sandbox.store import empty_tables, get_meta, meta_once, set_meta
from reconciler.sandbox.timestamps import now_ns

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS clients (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        token TEXT NOT NULL UNIQUE,
        created_ns INTEGER NOT NULL
    )
    """,
    # Amounts are integer cents: exact, and summed exactly by SQLite.
    """
    CREATE TABLE IF NOT EXISTS wallets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        client_id INTEGER NOT NULL UNIQUE REFERENCES clients (id),
        wallet_version INTEGER NOT NULL DEFAULT 0,
        enabled INTEGER NOT NULL,
        balance_cents INTEGER NOT NULL,
        over_draft_limit_cents INTEGER NOT NULL,
        created_ns INTEGER NOT NULL
    )
    """,
)

#: Clients are made through the sandbox controls (`POST /_sandbox/clients`), not the service.
ROUTES: list[Route] = []

DEMO_NAME = "Demo client"
DEMO_BALANCE_CENTS = 1_000_000  # 10000.00

_DEMO_ID_KEY = "demo_client_id"
_DEMO_TOKEN_KEY = "demo_token"


DEMO_EMAIL = "demo@sandbox.example"
_DEMO_PASSWORD_KEY = "demo_password"


@dataclass(frozen=True, slots=True)
class NewClient:
    client_id: int
    token: str
    wallet_id: int
    email: str = ""
    password: str = ""


def create_client(
    conn: sqlite3.Connection,
    *,
    name: str,
    balance_cents: int = 0,
    over_draft_limit_cents: int = 0,
    enabled: bool = True,
    client_id: int | None = None,
    token: str | None = None,
    email: str | None = None,
    password: str | None = None,
) -> NewClient:
    """A client with its wallet and login; a new random token (and login) unless given."""
    now = now_ns()
    token = token or secrets.token_urlsafe(32)
    cursor = conn.execute(
        "INSERT INTO clients (id, name, token, created_ns) VALUES (?, ?, ?, ?)",
        (client_id, name, token, now),
    )
    new_id = int(cursor.lastrowid or 0)
    wallet = conn.execute(
        "INSERT INTO wallets (client_id, enabled, balance_cents, over_draft_limit_cents,"
        " created_ns) VALUES (?, ?, ?, ?, ?)",
        (new_id, int(enabled), balance_cents, over_draft_limit_cents, now),
    )
    credentials = set_credentials(conn, new_id, email, password)
    return NewClient(
        client_id=new_id,
        token=token,
        wallet_id=int(wallet.lastrowid or 0),
        email=credentials.email,
        password=credentials.password,
    )


def ensure_demo_client(conn: sqlite3.Connection) -> tuple[NewClient, bool]:
    """The demo client, created on the database's first start; True when created just now."""
    ensure_secret(conn)
    client_id = get_meta(conn, _DEMO_ID_KEY)
    token = get_meta(conn, _DEMO_TOKEN_KEY)
    password = _demo_password(conn)
    if client_id is not None and token is not None:
        row = conn.execute("SELECT id FROM wallets WHERE client_id = ?", (client_id,)).fetchone()
        # A database from before logins gets the demo login now.
        set_credentials(conn, int(client_id), DEMO_EMAIL, password)
        demo = NewClient(int(client_id), token, int(row["id"]), DEMO_EMAIL, password)
        return demo, False
    demo = create_client(
        conn,
        name=DEMO_NAME,
        balance_cents=DEMO_BALANCE_CENTS,
        email=DEMO_EMAIL,
        password=password,
    )
    set_meta(conn, _DEMO_ID_KEY, str(demo.client_id))
    set_meta(conn, _DEMO_TOKEN_KEY, demo.token)
    return demo, True


def _demo_password(conn: sqlite3.Connection) -> str:
    """The demo client's password: made once per database, kept across restarts and resets."""
    return meta_once(conn, _DEMO_PASSWORD_KEY, lambda: secrets.token_urlsafe(12))


def reset(conn: sqlite3.Connection) -> NewClient:
    """Empty every table and recreate the demo client with its id and token."""
    client_id = get_meta(conn, _DEMO_ID_KEY)
    token = get_meta(conn, _DEMO_TOKEN_KEY)
    empty_tables(conn)
    if client_id is None or token is None:
        return ensure_demo_client(conn)[0]
    return create_client(
        conn,
        name=DEMO_NAME,
        balance_cents=DEMO_BALANCE_CENTS,
        client_id=int(client_id),
        token=token,
        email=DEMO_EMAIL,
        password=_demo_password(conn),
    )


def authenticate(request: Request) -> int:
    """The id of the client whose bearer token the request carries; 401 otherwise."""
    header = request.headers.get("authorization")
    challenge = {"WWW-Authenticate": "Bearer"}
    if header is None:
        detail = "missing Authorization header: send 'Authorization: Bearer <token>'"
        raise Problem(401, detail, headers=challenge)
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Problem(401, "the Authorization header must be 'Bearer <token>'", headers=challenge)
    with sandbox_of(request).store.read() as conn:
        if looks_like_jwt(token):  # a login token: signed, and it expires
            client_id = client_of_jwt(conn, token)
        else:  # a long-lived API token
            row = conn.execute("SELECT id FROM clients WHERE token = ?", (token,)).fetchone()
            if row is None:
                raise Problem(401, "invalid token", headers=challenge)
            client_id = int(row["id"])
    record = request.scope.get("sandbox.record")
    if record is not None:
        record.client_id = client_id
    return client_id
