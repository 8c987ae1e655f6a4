"""Signing in: `POST /login/login/v2` hands out JWTs that expire, as the real service does.

Each client has an email and a password (the demo client's are printed at start-up; the
controls make others). A login answers `{"token": <JWT>}`: HS256 under a secret the database
keeps, with `sub` (the email), `client_id`, `iat` and `exp` (`--token-ttl-s` later). After `exp`
the token answers 401 `token expired`. Five failed logins for one email within 60 s make every
login for it answer 429 until the oldest of them is 60 s old (the right password included).
Long-lived API tokens (the demo token) keep working beside JWTs.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import sqlite3
import time
from dataclasses import dataclass

import jwt
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.sandbox.bodies import read_json
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.problems import FieldError, Problem, validation_problem
from reconciler.sandbox.store import get_meta, meta_once

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS client_logins (
        client_id INTEGER PRIMARY KEY REFERENCES clients (id),
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        salt TEXT NOT NULL,
        password_hash TEXT NOT NULL
    )
    """,
)

_SECRET_KEY = "jwt_secret"
_ALGORITHM = "HS256"
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


@dataclass(frozen=True, slots=True)
class Credentials:
    email: str
    password: str


def _hash(salt: str, password: str) -> str:
    return hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()


def set_credentials(
    conn: sqlite3.Connection, client_id: int, email: str | None = None, password: str | None = None
) -> Credentials:
    """Give a client its login (a generated email and password unless given)."""
    email = email or f"client-{client_id}-{secrets.token_hex(4)}@sandbox.example"
    password = password or secrets.token_urlsafe(12)
    salt = secrets.token_hex(8)
    conn.execute(
        "INSERT OR REPLACE INTO client_logins (client_id, email, salt, password_hash)"
        " VALUES (?, ?, ?, ?)",
        (client_id, email, salt, _hash(salt, password)),
    )
    return Credentials(email, password)


def email_taken(conn: sqlite3.Connection, email: str) -> bool:
    found = conn.execute("SELECT 1 FROM client_logins WHERE email = ?", (email,)).fetchone()
    return found is not None


def ensure_secret(conn: sqlite3.Connection) -> str:
    """The database's signing secret for login tokens, made on its first start."""
    return meta_once(conn, _SECRET_KEY, lambda: secrets.token_hex(32))


async def login(request: Request) -> Response:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise Problem(400, "the body must be a JSON object with email and password")
    errors = [
        FieldError("is required and must not be blank", field=name)
        for name in ("email", "password")
        if not isinstance(body.get(name), str) or not body[name].strip()
    ]
    if errors:
        raise validation_problem(errors)
    email, password = body["email"].strip(), body["password"]
    sandbox = sandbox_of(request)
    wait = sandbox.failed_logins.retry_after(email)
    if wait is not None:
        raise Problem(
            429, "too many failed logins for this email: try again later",
            headers={"Retry-After": str(wait)},
        )  # fmt: skip
    with sandbox.store.write() as conn:
        row = conn.execute(
            "SELECT client_id, email, salt, password_hash FROM client_logins WHERE email = ?",
            (email,),
        ).fetchone()
        secret = ensure_secret(conn)
    if row is None or not hmac.compare_digest(_hash(row["salt"], password), row["password_hash"]):
        sandbox.failed_logins.failed(email)
        raise Problem(401, "invalid credentials", headers=_CHALLENGE)
    client_id = int(row["client_id"])
    record = request.scope.get("sandbox.record")
    if record is not None:
        record.client_id = client_id
    now = time.time()
    claims = {"sub": row["email"], "client_id": client_id, "iat": int(now)}
    claims["exp"] = math.ceil(now + sandbox.token_ttl_s)  # whole seconds, never short of its life
    return JSONResponse({"token": jwt.encode(claims, secret, algorithm=_ALGORITHM)})


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2


def client_of_jwt(conn: sqlite3.Connection, token: str) -> int:
    """The client a login token names; 401 `token expired` or `invalid token` otherwise."""
    secret = get_meta(conn, _SECRET_KEY)
    if secret is None:
        raise Problem(401, "invalid token", headers=_CHALLENGE)
    try:
        claims = jwt.decode(
            token, secret, algorithms=[_ALGORITHM], options={"require": ["exp", "sub"]}
        )
    except jwt.ExpiredSignatureError:
        raise Problem(401, "token expired", headers=_CHALLENGE) from None
    except jwt.InvalidTokenError:
        raise Problem(401, "invalid token", headers=_CHALLENGE) from None
    client_id = claims.get("client_id")
    if not isinstance(client_id, int) or isinstance(client_id, bool):
        raise Problem(401, "invalid token", headers=_CHALLENGE)
    row = conn.execute(
        "SELECT 1 FROM client_logins WHERE client_id = ? AND email = ?",
        (client_id, claims["sub"]),
    ).fetchone()
    if row is None:
        raise Problem(401, "invalid token", headers=_CHALLENGE)
    return client_id


ROUTES = [Route("/login/login/v2", login, methods=["POST"])]
