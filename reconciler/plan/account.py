"""The account a saved plan belongs to, and the one refusal when it is applied to another.

A plan is made against one service (its base URL) and one client of it (its client id, and the
login email where there is one); it records them inside what is signed, so `apply PLAN`,
`plan-compare` and `comment PLAN` can refuse another account before anything is written. A
shared plan key (one `RECONCILER_PLAN_KEY` for staging and production) no longer lets a plan
cross: the key says who may apply, the account says where.

Base URLs compare in a normalised form (scheme and host in lower case, the host in IDNA, the
default port and a trailing slash dropped), emails as worker emails do (`email_key`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from reconciler.identity import email_key
from reconciler.plan.signing import UntrustedPlan

_DEFAULT_PORTS = {"http": 80, "https": 443}


class OtherAccount(UntrustedPlan):
    """The saved plan was made for another account (service or client): nothing was applied."""


def normalise_base_url(url: str) -> str:
    """`HTTPS://API.Example.com:443/v1/` and `https://api.example.com/v1` are one service."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        host = host.lower()
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    while "//" in path:
        path = path.replace("//", "/")
    return f"{scheme}://{netloc}{path}"


@dataclass(frozen=True, slots=True)
class Account:
    """One client of one service: what a saved plan is made for."""

    base_url: str  # normalised
    client_id: int | None  # None: neither the settings nor the account said it
    email: str | None = None  # the login email, when the reconciler signs in with one

    @classmethod
    def of(cls, base_url: str, client_id: int | None, email: str | None) -> Account:
        return cls(normalise_base_url(base_url), client_id, email)

    def as_record(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "client_id": self.client_id, "email": self.email}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Account:
        return cls(normalise_base_url(record["base_url"]), record["client_id"], record["email"])

    def describe(self) -> str:
        """'https://api.example.com, client 7, login ops@example.com'."""
        client = "client unknown" if self.client_id is None else f"client {self.client_id}"
        login = f", login {self.email}" if self.email is not None else ""
        return f"{self.base_url}, {client}{login}"

    def differences(self, other: Account) -> list[str]:
        """What tells this account from `other`: the service, the client, the login email."""
        found = []
        if self.base_url != other.base_url:
            found.append("base URL")
        if self.client_id != other.client_id:
            found.append("client id")
        if (
            self.email is not None
            and other.email is not None
            and email_key(self.email) != email_key(other.email)
        ):
            found.append("login email")
        return found


#: Where one account's connection is set: what a plan made for another is to be applied with.
SETTINGS = "RECONCILER_BASE_URL, the token or login, --client-id"


def check_account(
    recorded: Account,
    current: Account,
    *,
    name: str,
    doing: str,
    settings: str = SETTINGS,
    hint: str | None = None,
) -> None:
    """Refuse a plan made for `recorded` when this run talks to `current`, naming both;
    `settings`, where this run's connection is set; `hint`, what to do instead of the usual.

    A client id known on one side only is a difference too: the plan cannot show it is the
    same client, and money is not sent on a guess.
    """
    differences = recorded.differences(current)
    if not differences:
        return
    raise OtherAccount(
        f"{name} was made for another account ({' and '.join(differences)} differ): "
        f"the plan is for {recorded.describe()}; this run {doing} {current.describe()}; "
        "nothing was applied",
        hint=hint
        or f"apply a saved plan with the settings it was planned with ({settings}); for "
        "another account, run `reconciler plan --out` against it",
    )
