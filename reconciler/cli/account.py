"""The account this run talks to, as a saved plan records it and checks it (at the edge).

The client id is known, in this order, from `--client-id` / `RECONCILER_CLIENT_ID`, from the
login token's `client_id` claim, or from the account as the wallet's path finds it (the webhook
configuration, then the wallet journal); it may stay unknown for a plan that pays nothing. A
client id from the settings is confirmed by the service before it is believed: the wallet at
that id must be this token's (another client's answers 404).
"""

from __future__ import annotations

from reconciler.cli.connection import ConnectionOptions
from reconciler.plan.account import Account, check_account
from reconciler.plan.saved import SavedPlan
from reconciler.service.client import ServiceClient
from reconciler.service.config import ConfigError
from reconciler.service.errors import NotFound
from reconciler.service.models import Wallet


def current_account(
    client: ServiceClient, connection: ConnectionOptions, *, wallet: Wallet | None = None
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
                f"the client id {configured} (--client-id or RECONCILER_CLIENT_ID) is not the "
                "client of this token: the service has no wallet of it for this token",
                hint="give the client id of the account the token belongs to, or none",
            ) from None
    credentials = client.config.credentials
    email = credentials.email if credentials is not None else None
    service = client.config.base_url
    if connection.sandbox:
        service = "sandbox://" + str(connection.sandbox_db.resolve())
    return Account.of(service, client.known_client_id(), email)


def check_saved_account(
    saved: SavedPlan, client: ServiceClient, connection: ConnectionOptions, doing: str
) -> None:
    """Refuse a saved plan made for another account than the one `client` talks to."""
    assert saved.account is not None, "a saved plan read from a file records its account"
    current = current_account(client, connection)
    check_account(saved.account, current, name=saved.name, doing=doing)
