"""One comment for fourteen accounts with thousands of changes: within GitHub's 65,536
characters, every account named, every inactivation shown, the invitations cut."""

from __future__ import annotations

import re
from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.accounts.support import Account, run, seed_live, write_accounts, write_state
from tests.sandbox.support import Controls

ACCOUNTS = 14
INVITES = 300
INACTIVATIONS = 4


def test_fourteen_accounts_fit_one_comment_naming_every_account_and_inactivation(
    tmp_path: Path, sandbox: SandboxServer, controls: Controls
) -> None:
    accounts = [
        Account(f"entity-{n:02d}", sandbox, controls, controls.create_client(name=f"E{n}"))
        for n in range(ACCOUNTS)
    ]
    write_accounts(tmp_path, accounts)
    doomed: dict[str, list[str]] = {}
    for n, account in enumerate(accounts):
        live = [10_000 + 100 * n + k for k in range(INACTIVATIONS)]
        seed_live(account, live)
        doomed[account.name] = [f'worker["W-{number}"]' for number in live]
        write_state(tmp_path / "accounts" / account.name, account.name, range(INVITES))

    result = run(tmp_path, accounts, "comment", "--all", "--full", "full.md")
    assert result.returncode == 0, result.stderr
    body = result.stdout
    assert len(body) <= 65_536
    for account in accounts:
        assert f"| `{account.name}` | 0 | {INACTIVATIONS} |" in body
        section = re.search(
            rf"<summary>{account.name}: Inactivations and replacements \({INACTIVATIONS}\)"
            r"</summary>(.*?)</details>",
            body,
            re.S,
        )
        assert section is not None, account.name
        for address in doomed[account.name]:
            assert address in section[1]
    # Every inactivation comes before the first invitation; the invitations were cut.
    assert body.rindex("Inactivations and replacements") < body.index(": Invitations")
    assert "Not shown here, to fit GitHub's comment limit" in body
    full = (tmp_path / "full.md").read_text()
    assert full.count("will be invited") == ACCOUNTS * INVITES
