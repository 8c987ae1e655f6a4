"""Several accounts on two sandbox servers: the files, the environment and the request logs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler
from tests.sandbox.support import ClientAccess, Controls, invitation, service_client

PLAN_KEY = "k" * 40


@dataclass(frozen=True)
class Account:
    """An account of the test: its name, server, client, and the variable of its token."""

    name: str
    server: SandboxServer
    controls: Controls
    client: ClientAccess

    @property
    def variable(self) -> str:
        return "TOKEN_" + self.name.upper().replace("-", "_")


def worker_yaml(external_id: str, email: str) -> str:
    return (
        f"  - externalId: {external_id}\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        f"    workerEmail: {email}\n"
        "    countryIso: GB\n"
    )


def write_state(folder: Path, account: str, ids: Iterable[int], prefix: str = "W-") -> None:
    """The account's desired state: workers `prefix` + id, owned by the prefix."""
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(worker_yaml(f"{prefix}{i}", f"{account}-{i}@example.com") for i in ids)
    text = f'version: 1\nscope:\n  externalIdPrefix: "{prefix}"\nworkers:\n{body}'
    if not body:
        text = f'version: 1\nscope:\n  externalIdPrefix: "{prefix}"\nworkers: []\n'
    (folder / "workforce.yaml").write_text(text, encoding="utf-8")


def write_accounts(root: Path, accounts: list[Account], **extra: dict[str, Any]) -> None:
    lines = ["version: 1", "accounts:"]
    for account in accounts:
        lines += [
            f"  - name: {account.name}",
            f"    path: accounts/{account.name}",
            f"    baseUrl: {account.server.base_url}",
            f"    tokenEnv: {account.variable}",
            # A saved plan names its client (issue 30): the sandbox's tokens carry no claim.
            f"    clientId: {account.client.client_id}",
        ]
        for key, value in extra.get(account.name, {}).items():
            lines.append(f"    {key}: {value}")
    (root / "reconciler.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def environment(accounts: list[Account], **more: str) -> dict[str, str]:
    env = {account.variable: account.client.token for account in accounts}
    return {**env, "RECONCILER_PLAN_KEY": PLAN_KEY, **more}


def run(
    root: Path, accounts: list[Account], *args: str, **more: str
) -> subprocess.CompletedProcess[str]:
    return reconciler(*args, cwd=root, **environment(accounts, **more))


def clients_seen(controls: Controls, since: int = 0) -> dict[int | None, set[int | None]]:
    """Per client id (None: a token the server did not know), the statuses it got."""
    seen: dict[int | None, set[int | None]] = {}
    for entry in controls.requests(since):
        seen.setdefault(entry["client_id"], set()).add(entry["status"])
    return seen


INVITE_PATH = "/contract/workers/inviteWorkersBulkLocked"


def seed_live(account: Account, ids: Iterable[int], prefix: str = "W-") -> None:
    """Workers already invited in the account (100 a request), as its files would own them."""
    pending = [
        invitation(
            externalId=f"{prefix}{i}", workerEmail=f"{account.name}-{i}@example.com", jobTitle=None
        )
        for i in ids
    ]
    with service_client(account.server.base_url, account.client.token) as api:
        for start in range(0, len(pending), 100):
            answer = api.post(INVITE_PATH, json=pending[start : start + 100])
            assert answer.is_success, answer.text
