"""The account this run talks to, as a saved plan records it and checks it (at the edge).

The client id is known, in this order, from `--client-id` / `RECONCILER_CLIENT_ID`, from the
login token's `client_id` claim, or from the account as the wallet's path finds it (the webhook
configuration, then the wallet journal). A client id from the settings is confirmed by the
service before it is believed: the wallet at that id must be this token's (the service answers
404 for another client's, as for a missing one).

A saved plan always names its client (`plan --out` refuses when it cannot be told), and `apply
PLAN` asks the service whether this token is that client's, at the wallet path that names it,
before anything is written: a plan cannot cross to another client of the same service.
"""

from __future__ import annotations

from dataclasses import replace

from reconciler.plan.account import Account, OtherAccount, check_account
from reconciler.plan.saved import SavedPlan
from reconciler.service.client import ServiceClient
from reconciler.service.config import ConfigError
from reconciler.service.errors import NotFound
from reconciler.service.models import Wallet
from reconciler.session.connection import Connection


def current_account(
    client: ServiceClient, connection: Connection, *, wallet: Wallet | None = None
) -> Account:
    """The base URL, client id and login email of this run (reads only; a login at most).

    `wallet`: one this run read already; the configured client's confirms it, and its wallet
    is not read again. The embedded sandbox (`--sandbox`) is named by its database file: its
    URL is a new port on every run, and the account is the file's."""
    configured = client.config.client_id
    if configured is not None and (wallet is None or wallet.client_id != configured):
        try:
            client.get_wallet(configured)
        except NotFound:
            raise ConfigError(
                f"the client id {configured} ({client.config.names.client_id}) is not the "
                "client of this token: the service has no wallet of it for this token",
                hint="give the client id of the account the token belongs to, or none",
            ) from None
    credentials = client.config.credentials
    email = credentials.email if credentials is not None else None
    service = client.config.base_url
    if connection.sandbox:
        service = "sandbox://" + str(connection.sandbox_db.resolve())
    return Account.of(service, client.known_client_id(), email)


class UnknownClient(ConfigError):
    """A saved plan is to be written, and nothing tells which client the token is."""


def saved_plan_account(
    client: ServiceClient, connection: Connection, *, wallet: Wallet | None = None
) -> Account:
    """`current_account` for a plan to be saved, which must name its client."""
    account = current_account(client, connection, wallet=wallet)
    if account.client_id is None:
        names = client.config.names
        raise UnknownClient(
            "a saved plan must name the client it was made for, and this run cannot tell "
            f"which client the token belongs to (no {names.client_id}, no "
            "client_id claim in the token, and no webhook or wallet journal in the account "
            "shows it): no plan was saved",
            hint=f"{names.set_client_id} to the client's id, the same for the plan and the "
            "apply; the service confirms it belongs to the token",
        )
    return account


def check_saved_account(
    saved: SavedPlan, client: ServiceClient, connection: Connection, doing: str
) -> None:
    """Refuse a saved plan made for another account than the one `client` talks to.

    On the plan's service, the service itself is asked whether the token is the plan's client
    (its wallet path names the client; another client's token gets 404 there), whatever the
    settings or the account say of the client id.
    """
    recorded = saved.account
    assert recorded is not None, "a saved plan read from a file records its account"
    current = current_account(client, connection)
    if recorded.base_url == current.base_url:
        if recorded.client_id is None or not client.confirm_client_id(recorded.client_id):
            raise OtherAccount(
                f"{saved.name} was made for another account (client id differ): the plan is "
                f"for {recorded.describe()}; this run {doing} {current.describe()}, and the "
                f"service has no wallet of client {recorded.client_id} for this token; "
                "nothing was applied",
                hint="apply a saved plan with the token of the client it was planned for; "
                "for another client, run `reconciler plan --out` with its token",
            )
        if current.client_id is None:  # the service has just said which client it is
            current = replace(current, client_id=recorded.client_id)
    names = client.config.names
    settings = f"{names.base_url}, {names.token} or login, {names.client_id}"
    check_account(recorded, current, name=saved.name, doing=doing, settings=settings)
