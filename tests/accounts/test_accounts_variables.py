"""Each account reads its own variables only, even with every account's variables in one
shell: its `env:` list names what its files may read, a `baseUrl` takes a variable only whole,
and a variable two accounts name, or a token, password or plan key named for anything else,
is refused by `validate` at its line (issue 39, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.accounts.support import PLAN_KEY, Account, run, write_accounts, write_state

EU_HOOK = "eu-webhook-secret-3b7c9d"


def _setup(root: Path, accounts: list[Account], **extra: dict[str, str]) -> None:
    write_accounts(root, accounts, **extra)
    for account in accounts:
        write_state(root / "accounts" / account.name, account.name, [1])


def _add_webhook(root: Path, account: str, value: str) -> None:
    state = root / "accounts" / account / "workforce.yaml"
    state.write_text(
        state.read_text()
        + "webhook:\n  url: https://hooks.example.com/in\n  event_types: [KYC]\n"
        + f"  headers:\n    - name: X-Key\n      value: {value}\n"
    )


def _posts(account: Account, since: int) -> list[dict[str, object]]:
    return [e for e in account.controls.requests(since) if e["method"] != "GET"]


def test_an_account_s_files_read_only_the_variables_of_its_env_list(
    tmp_path: Path, three: list[Account]
) -> None:
    """Every variable in one shell: us's files name eu's webhook secret; us fails, naming
    why, and nothing of us is sent; eu reads its own."""
    eu, us, _ = three
    _setup(tmp_path, three, eu={"env": "[WEBHOOK_TOKEN_EU]"})
    _add_webhook(tmp_path, "eu", "${WEBHOOK_TOKEN_EU}")
    _add_webhook(tmp_path, "us", "${WEBHOOK_TOKEN_EU}")
    shell = {"WEBHOOK_TOKEN_EU": EU_HOOK}

    checked = run(tmp_path, three, "validate", "--all", **shell)
    assert checked.returncode == 1
    assert "account eu: accounts/eu: valid" in checked.stdout
    assert "${WEBHOOK_TOKEN_EU} is not a variable account us may read" in checked.stdout
    unread = run(tmp_path, three, "validate", "--all", "--no-env")
    assert unread.returncode == 1
    assert "${WEBHOOK_TOKEN_EU} is not a variable account us may read" in unread.stdout

    since = us.controls.last_seq()
    applied = run(tmp_path, three, "apply", "--all", "--auto-approve", **shell)
    assert applied.returncode == 1
    assert "${WEBHOOK_TOKEN_EU} is not a variable account us may read" in applied.stdout
    assert EU_HOOK not in applied.stdout + applied.stderr
    sent = _posts(us, since)
    assert all(entry["client_id"] == eu.client.client_id for entry in sent), sent
    assert any(entry["client_id"] == eu.client.client_id for entry in sent)


@pytest.mark.parametrize(
    ("extra", "marker", "words"),
    [
        ({"us": {"tokenEnv": "RECONCILER_PLAN_KEY"}}, "tokenEnv: RECONCILER_PLAN_KEY",
         "which is the plan key of"),
        ({"eu": {"planKeyEnv": "PLAN_KEY_EU"}, "us": {"tokenEnv": "PLAN_KEY_EU"}},
         "tokenEnv: PLAN_KEY_EU", "which is the plan key of account eu already"),
        ({"eu": {"env": "[HOOK_EU]"}, "us": {"env": "[HOOK_EU]"}}, "env: [HOOK_EU]",
         "which is the variable of its files of account eu already"),
        ({"us": {"env": "[TOKEN_EU]"}}, "env: [TOKEN_EU]",
         "which is the token of account eu already"),
        ({"us": {"env": "[TOKEN_US]"}}, "env: [TOKEN_US]", "which is the token of this account"),
        ({"us": {"env": "[RECONCILER_TOKEN]"}}, "env: [RECONCILER_TOKEN]",
         "are never read by the files"),
    ],
    ids=["token is the plan key", "token is eu's plan key", "env shared", "env is eu's token",
         "env is its own token", "env reserved"],
)  # fmt: skip
def test_a_variable_of_two_accounts_or_two_uses_is_refused_at_its_line(
    tmp_path: Path,
    three: list[Account],
    extra: dict[str, dict[str, str]],
    marker: str,
    words: str,
) -> None:
    tokens = {
        name: fields.pop("tokenEnv") for name, fields in extra.items() if "tokenEnv" in fields
    }
    _setup(tmp_path, three, **extra)
    text = (tmp_path / "reconciler.yaml").read_text()
    for name, variable in tokens.items():
        text = text.replace(f"tokenEnv: TOKEN_{name.upper()}\n", f"tokenEnv: {variable}\n")
    (tmp_path / "reconciler.yaml").write_text(text)
    line = max(n for n, row in enumerate(text.splitlines(), 1) if marker in row)
    since = {account.name: account.controls.last_seq() for account in three}
    for command in (("validate", "--all"), ("plan", "--all")):
        result = run(tmp_path, three, *command, PLAN_KEY_EU=PLAN_KEY, HOOK_EU="x")
        assert result.returncode == 1, result.stdout
        output = result.stdout + result.stderr
        assert any(
            f"reconciler.yaml:{line}:" in row and words in row for row in output.splitlines()
        ), (line, words, output)
        assert PLAN_KEY not in output
    for account in three:
        assert account.controls.requests(since[account.name]) == []


def test_base_url_takes_a_variable_whole_and_only_its_own(
    tmp_path: Path, three: list[Account]
) -> None:
    eu, us, _ = three
    url = us.server.base_url
    _setup(tmp_path, three)
    text = (tmp_path / "reconciler.yaml").read_text()
    us_entry = f"baseUrl: {url}\n    tokenEnv: TOKEN_US"
    inside = text.replace(us_entry, f"baseUrl: {url}/${{TOKEN_EU}}\n    tokenEnv: TOKEN_US")
    assert inside != text
    (tmp_path / "reconciler.yaml").write_text(inside)
    since = eu.controls.last_seq()
    refused = run(tmp_path, three, "plan", "--all")
    assert refused.returncode == 1
    assert "baseUrl takes a variable only whole" in refused.stderr
    assert eu.client.token not in refused.stdout + refused.stderr
    assert eu.controls.requests(since) == []

    whole = text.replace(us_entry, "baseUrl: ${US_URL}\n    tokenEnv: TOKEN_US")
    (tmp_path / "reconciler.yaml").write_text(whole)
    planned = run(tmp_path, three, "plan", "--all", US_URL=url)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    unset = run(tmp_path, three, "plan", "--account", "us")
    assert unset.returncode == 1
    assert "US_URL (baseUrl of account us, its service's address) is not set" in unset.stdout


def test_base_url_never_names_a_credential(tmp_path: Path, three: list[Account]) -> None:
    _setup(tmp_path, three)
    url = three[1].server.base_url
    text = (tmp_path / "reconciler.yaml").read_text()
    us_entry = f"baseUrl: {url}\n    tokenEnv: TOKEN_US"
    for variable in ("RECONCILER_PLAN_KEY", "RECONCILER_TOKEN", "GITHUB_TOKEN"):
        named = text.replace(us_entry, f"baseUrl: ${{{variable}}}\n    tokenEnv: TOKEN_US")
        (tmp_path / "reconciler.yaml").write_text(named)
        result = run(tmp_path, three, "validate", "--all", GITHUB_TOKEN="ghs_" + "x" * 36)
        assert result.returncode == 1
        assert f"baseUrl names {variable}, which holds a credential" in result.stdout, variable
        assert PLAN_KEY not in result.stdout + result.stderr


@pytest.mark.parametrize("command", ["validate", "plan", "apply"])
def test_an_account_s_folder_given_as_path_reads_only_its_own_variables(
    tmp_path: Path, three: list[Account], command: str
) -> None:
    """Every variable in one shell, and us's folder given as PATH (no selection), connected
    as us: its files still read only its `env:` list, so eu's webhook secret is refused at
    its line and nothing of us is sent; a folder outside every account reads the shell."""
    _eu, us, _ = three
    _setup(tmp_path, three, eu={"env": "[WEBHOOK_TOKEN_EU]"})
    _add_webhook(tmp_path, "us", "${WEBHOOK_TOKEN_EU}")
    shell = {
        "WEBHOOK_TOKEN_EU": EU_HOOK,
        "RECONCILER_BASE_URL": us.server.base_url,
        "RECONCILER_TOKEN": us.client.token,
    }
    args = ("--auto-approve",) if command == "apply" else ()
    since = us.controls.last_seq()

    ran = run(tmp_path, three, command, "accounts/us", *args, **shell)

    assert ran.returncode == 1, ran.stdout + ran.stderr
    said = ran.stdout + ran.stderr
    assert "${WEBHOOK_TOKEN_EU} is not a variable account us may read" in said, said
    assert EU_HOOK not in said
    assert _posts(us, since) == []
    outside = tmp_path / "scratch"
    outside.mkdir()
    (outside / "workforce.yaml").write_text(
        (tmp_path / "accounts" / "us" / "workforce.yaml").read_text()
    )
    assert run(tmp_path, three, "validate", "scratch", **shell).returncode == 0


@pytest.mark.parametrize("command", ["validate", "plan", "apply"])
def test_an_account_s_folder_given_as_path_beside_an_unreadable_accounts_file_is_refused(
    tmp_path: Path, three: list[Account], command: str
) -> None:
    """reconciler.yaml cannot be read: whether accounts/us is an account's folder, and what its
    files may read, is unknown, so the command is refused (it gave us's files the whole shell,
    eu's webhook secret too), naming the file, and nothing is sent."""
    _eu, us, _ = three
    _setup(tmp_path, three, eu={"env": "[WEBHOOK_TOKEN_EU]"})
    _add_webhook(tmp_path, "us", "${WEBHOOK_TOKEN_EU}")
    accounts = tmp_path / "reconciler.yaml"
    accounts.write_text(accounts.read_text() + "  - name: [broken\n")
    shell = {
        "WEBHOOK_TOKEN_EU": EU_HOOK,
        "RECONCILER_BASE_URL": us.server.base_url,
        "RECONCILER_TOKEN": us.client.token,
    }
    args = ("--auto-approve",) if command == "apply" else ()
    since = us.controls.last_seq()

    ran = run(tmp_path, three, command, "accounts/us", *args, **shell)

    said = ran.stdout + ran.stderr
    assert ran.returncode == 1, said
    assert "reconciler.yaml cannot be read, so whether" in said, said
    assert EU_HOOK not in said and "Traceback" not in said
    assert _posts(us, since) == []
