"""Where the bearer token comes from: a pasted token, or a login that renews itself.

`TokenSource` hands the transport a token for each request. With credentials it signs in at
`POST /login/login/v2` before the first request, reads the expiry from the JWT's `exp` (without
verifying it: the secret is the service's), signs in again shortly before expiry, and once after
a 401 (the transport then resends the refused request: a 401 did nothing). One login at a time:
concurrent requests wait for it. The password, and every token, are secrets.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from reconciler import logs
from reconciler.lean_httpx import httpx
from reconciler.redaction import shown
from reconciler.secrets import Secret
from reconciler.service.errors import RateLimited, ServiceError, Unauthorized
from reconciler.service.reach import reach
from reconciler.service.retries import CONNECT_HINT, retry_after_seconds

LOGIN_PATH = "login/login/v2"
#: Where a real answer may put the token (the shape is not documented).
TOKEN_KEYS = ("token", "access_token", "accessToken", "jwt", "id_token")
#: Renew this long before `exp` (at most a fifth of the token's whole life).
RENEW_MARGIN_S = 60.0
_MAX_LOGIN_WAIT_S = 60.0
#: How often signing in is tried while the service is busy, and the first wait between.
_MAX_LOGIN_ATTEMPTS = 6
_FIRST_LOGIN_WAIT_S = 0.5
#: What a busy service answers: wait and try again.
_BUSY = frozenset({429, 502, 503, 504})

_log = logs.get_logger("reconciler.service")


@dataclass(frozen=True, slots=True)
class Credentials:
    """An email and a password, and where they came from (said in errors; never the password)."""

    email: str
    password: Secret
    source: str

    def __repr__(self) -> str:
        return f"Credentials(email={self.email!r}, source={self.source!r})"


def token_expiry(token: str) -> tuple[float | None, float | None]:
    """(exp, iat) of a JWT read without verifying it, or (None, None) for another token."""
    claims = _claims(token)
    if claims is None:
        return None, None
    return _claim_time(claims.get("exp")), _claim_time(claims.get("iat"))


def _claim_time(value: object) -> float | None:
    """A JWT time claim as seconds, or None for one that is no number (NaN, a string...).

    `-Infinity` and `-1e20` stay numbers (long past), `1e400` is infinity (never)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
    except OverflowError:  # an integer beyond any float: as far in the future or past as can be
        seconds = math.inf if value > 0 else -math.inf
    return None if math.isnan(seconds) else seconds


def _when(seconds: float) -> str:
    """A claim's time for people; one out of the calendar's range said as such."""
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, ValueError, OSError):
        return f"{seconds:g} seconds after 1970 (before the year 1)"


def token_client_id(token: str) -> int | None:
    """The `client_id` claim of a login token (a JWT, read without verifying it), or None."""
    claims = _claims(token)
    value = claims.get("client_id") if claims is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _claims(token: str) -> dict[str, object] | None:
    if token.count(".") != 2:  # not a JWT (header.payload.signature): PyJWT is not loaded
        return None
    import jwt  # with the cryptography it loads, a tenth of a quick command's start-up

    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    return claims if isinstance(claims, dict) else None


#: How a pasted token is renewed instead, for one account.
RENEW_HINT = "set RECONCILER_EMAIL and RECONCILER_PASSWORD (or --password-file)"


class TokenSource:
    """The current token, renewed by logging in again when it can."""

    def __init__(
        self,
        base_url: str,
        token: Secret | None,
        credentials: Credentials | None,
        *,
        timeout: float = 30.0,
        user_agent: str = "reconciler",
        connect_hint: str = CONNECT_HINT,
        renew_hint: str = RENEW_HINT,
    ) -> None:
        self._base_url = base_url.rstrip("/") + "/"
        self._connect_hint = connect_hint  # where the address is set, for this run's messages
        self._renew_hint = renew_hint
        self._credentials = credentials
        self._lock = threading.Lock()
        self._token = token
        #: Why signing in failed, once it has: every request waiting on it fails the same way,
        #: rather than each thread waiting out a busy service again.
        self._failed: ServiceError | None = None
        self._renew_at: float | None = None
        self._timeout = timeout
        self._user_agent = user_agent
        self.logins = 0
        if token is not None:
            logs.register_secret(token.reveal())
            self._renew_at = self._renewal_time(token.reveal())

    @property
    def can_renew(self) -> bool:
        return self._credentials is not None

    def current(self) -> Secret:
        """The token to send now: logging in first when there is none yet or it is due."""
        token = self._token
        if token is not None and (self._renew_at is None or time.time() < self._renew_at):
            return token
        return self.renew(stale=token)

    def renew(self, stale: Secret | None) -> Secret:
        """A fresh token, unless another thread already replaced `stale` (one login at once)."""
        with self._lock:
            if self._token is not None and self._token is not stale:
                return self._token
            if self._credentials is None:
                assert stale is not None
                return stale  # nothing to renew with: the 401 (or expiry) stands
            if self._failed is not None:
                raise self._failed
            try:
                self._token = self._login(self._credentials)
            except ServiceError as error:
                self._failed = error
                raise
            self._renew_at = self._renewal_time(self._token.reveal())
            return self._token

    def check_not_expired(self) -> None:
        """Stop before the first request when a pasted JWT is past its `exp` and nothing can
        renew it."""
        if self._token is None or self._credentials is not None:
            return
        exp, _ = token_expiry(self._token.reveal())
        if exp is not None and exp <= time.time():
            raise Unauthorized(
                f"the token expired at {_when(exp)}",
                status=401,
                hint=f"paste a new token, or {self._renew_hint} so the reconciler signs in and "
                "renews it",
            )

    def _renewal_time(self, token: str) -> float | None:
        exp, iat = token_expiry(token)
        if exp is None:
            return None  # not a JWT, or no `exp`: used until a 401
        life = exp - iat if iat is not None else RENEW_MARGIN_S * 5
        return exp - min(RENEW_MARGIN_S, max(life, 0.0) / 5)

    def _login(self, credentials: Credentials) -> Secret:
        body = {"email": credentials.email, "password": credentials.password.reveal()}
        deadline = time.monotonic() + _MAX_LOGIN_WAIT_S
        with httpx.Client(
            base_url=self._base_url,
            timeout=self._timeout,
            headers={"User-Agent": self._user_agent, "Accept": "application/json"},
            follow_redirects=False,
            **reach(self._base_url),
        ) as http:
            for attempt in range(1, _MAX_LOGIN_ATTEMPTS + 1):
                try:
                    answer = http.post(LOGIN_PATH, json=body)
                except httpx.TransportError as error:
                    raise ServiceError(
                        f"could not sign in at {self._base_url}{LOGIN_PATH}: "
                        f"{shown(str(error)) or type(error).__name__}",
                        hint=self._connect_hint if isinstance(error, httpx.ConnectError) else None,
                    ) from None
                if answer.status_code not in _BUSY:
                    break
                # Busy (429, 502-504): wait as asked (Retry-After), else exponentially.
                wait = retry_after_seconds(answer.headers.get("retry-after"))
                if wait is None:
                    wait = min(_FIRST_LOGIN_WAIT_S * 2 ** (attempt - 1), _MAX_LOGIN_WAIT_S / 4)
                if time.monotonic() + wait > deadline or attempt == _MAX_LOGIN_ATTEMPTS:
                    raise self._busy(credentials, answer, wait, attempt)
                time.sleep(wait)
        self.logins += 1
        if answer.status_code in _BUSY:  # not reached: the last busy answer raised above
            raise self._busy(credentials, answer, 0.0, _MAX_LOGIN_ATTEMPTS)
        if not answer.is_success:
            raise Unauthorized(
                f"signing in as {credentials.email} (from {credentials.source}) failed: "
                f"{answer.status_code} {_reason(answer)}",
                status=answer.status_code,
                hint="check the email and password; the password is never shown",
            )
        token = _token_in(_json(answer))
        if token is None:
            raise ServiceError(
                f"the login answer for {credentials.email} holds no token (looked for "
                f"{', '.join(TOKEN_KEYS)}, at the top and under `data`)"
            )
        logs.register_secret(token)
        _log.info("signed in", email=credentials.email, expires=token_expiry(token)[0])
        return Secret(token)

    def _busy(
        self, credentials: Credentials, answer: httpx.Response, wait: float, attempts: int
    ) -> ServiceError:
        """Why signing in gave up while the service was busy: its status, never the password
        (it was not refused: the email and password were not judged)."""
        status = f"{answer.status_code} {_reason(answer)}"
        if answer.status_code == 429:
            return RateLimited(
                f"signing in as {credentials.email} is refused for {wait:.0f} s "
                f"(too many failed logins, or too many requests): {status}",
                status=429,
                retry_after=wait,
            )
        return ServiceError(
            f"signing in as {credentials.email} at {self._base_url}{LOGIN_PATH} failed: "
            f"{status}, after {attempts} attempts",
            status=answer.status_code,
            retry_after=wait,
            hint="the service is busy or down (the email and password were not judged): try "
            "again later",
        )


def _json(answer: httpx.Response) -> Any:
    try:
        return answer.json()
    except (ValueError, RecursionError):
        return None


def _token_in(body: Any) -> str | None:
    for place in (body, body.get("data") if isinstance(body, dict) else None):
        if isinstance(place, dict):
            for key in TOKEN_KEYS:
                value = place.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
    return None


def _reason(answer: httpx.Response) -> str:
    body = _json(answer)
    if isinstance(body, dict):
        for key in ("detail", "message", "error"):
            if isinstance(body.get(key), str) and body[key].strip():
                return shown(body[key].strip())
    text = answer.text.strip().splitlines()
    return shown(text[0]) if text else answer.reason_phrase
