"""An account's variables in one secret, RECONCILER_SECRETS (issue 37: adding an account edits
reconciler.yaml only): each account reads from it the names its entry gives, as if they were
set one by one; a bundle that cannot be read as that is refused, saying what is wrong and
never what a value is, and nothing is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.accounts.support import PLAN_KEY, Account, write_accounts, write_state
from tests.cli import reconciler

HOOK = "eu-hook-value-7f3a9c2e"


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts, eu={"env": "[WEBHOOK_TOKEN_EU]"})
    for account in accounts:
        write_state(root / "accounts" / account.name, account.name, [1])
    state = root / "accounts" / "eu" / "workforce.yaml"
    state.write_text(
        state.read_text()
        + "webhook:\n  url: https://hooks.example.com/in\n  event_types: [KYC]\n"
        + "  headers:\n    - name: X-Key\n      value: ${WEBHOOK_TOKEN_EU}\n"
    )


def _plan(root: Path, bundle: str, **more: str) -> tuple[int, str]:
    done = reconciler("plan", "--all", cwd=root, RECONCILER_SECRETS=bundle,
                      RECONCILER_PLAN_KEY=PLAN_KEY, **more)  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_each_account_reads_its_names_from_the_bundle(tmp_path: Path, three: list[Account]) -> None:
    """The tokens and eu's header variable in one secret, nothing else set: every account is
    planned with its own client, and no value is printed."""
    _setup(tmp_path, three)
    variables = {account.variable: account.client.token for account in three}
    bundle = json.dumps({**variables, "WEBHOOK_TOKEN_EU": HOOK})
    since = {account.name: account.controls.last_seq() for account in three}

    status, said = _plan(tmp_path, bundle)

    assert status == 0, said
    assert "3 accounts: 3 planned; with changes: eu, us, apac." in said
    for account in three:
        seen = {e["client_id"] for e in account.controls.requests(since[account.name])}
        assert account.client.client_id in seen
    assert HOOK not in said and all(token not in said for token in variables.values())


BAD = [
    ("not JSON", '{"TOKEN_EU": "x",', "RECONCILER_SECRETS is not valid JSON"),
    ("an array", '["TOKEN_EU"]', "RECONCILER_SECRETS is a JSON array, not an object"),
    ("a number value", '{"TOKEN_EU": 7}', "the value of TOKEN_EU is a JSON number"),
    ("a name twice", '{"TOKEN_EU": "a-secret-1", "TOKEN_EU": "a-secret-2"}',
     "holds TOKEN_EU twice"),
    ("not a name", '{"TOKEN EU": "a-secret-1"}',
     "RECONCILER_SECRETS's key 1 is not a variable name"),
    ("itself inside", '{"RECONCILER_SECRETS": "{\\"TOKEN_EU\\": \\"a-secret-1\\"}"}',
     "RECONCILER_SECRETS holds RECONCILER_SECRETS itself"),
    ("nested too deep", "[" * 100_000, "RECONCILER_SECRETS is not valid JSON: nested too deep"),
    ("a lone surrogate", '{"TOKEN_EU": "a-secret-\\ud800"}',
     "the value of TOKEN_EU is not text (a lone surrogate"),
    ("a name no entry gives", '{"TOKEN_FR": "a-secret-1"}',
     "RECONCILER_SECRETS holds 1 key (key 1 of its object) that no entry of reconciler.yaml "
     "names (their text is not shown: it may be a value)"),
    ("the wrong way round, a value twice",
     '{"A_SECRET_WINTER": "TOKEN_EU", "A_SECRET_WINTER": "RECONCILER_PLAN_KEY"}',
     "RECONCILER_SECRETS holds its key 2 (not shown: it may be a value) twice"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "bundle", "expected"), BAD, ids=[c[0] for c in BAD])
def test_a_bundle_that_cannot_be_read_is_refused_and_nothing_is_sent(
    tmp_path: Path, three: list[Account], case: str, bundle: str, expected: str
) -> None:
    _setup(tmp_path, three)
    since = {account.name: account.controls.last_seq() for account in three}

    status, said = _plan(tmp_path, bundle)

    assert status == 1, said
    assert expected in said, said
    assert "Traceback" not in said and "a-secret-" not in said
    for account in three:
        assert account.controls.requests(since[account.name]) == []


@pytest.mark.parametrize(
    "command",
    [("plan", "--all"), ("drift", "--all"), ("plan", "--all", "--format", "json")],
    ids=["plan", "drift", "json"],
)
def test_a_bundle_written_the_wrong_way_round_never_prints_its_keys(
    tmp_path: Path, three: list[Account], command: tuple[str, ...]
) -> None:
    """`{"<the password>": "RECONCILER_PASSWORD_EU"}`: the keys are the secrets, and this one
    reads as a variable's name; the keys no entry names are told by count and position."""
    _setup(tmp_path, three)
    bundle = json.dumps({"WINTERISCOMING2026": "RECONCILER_PASSWORD_EU", "hunter2_pw": "TOKEN_EU"})

    done = reconciler(*command, cwd=tmp_path, RECONCILER_SECRETS=bundle,
                      RECONCILER_PLAN_KEY=PLAN_KEY)  # fmt: skip
    said = done.stdout + done.stderr

    assert done.returncode == 1, said
    assert "RECONCILER_SECRETS holds 2 keys (keys 1, 2 of its object) that no entry" in said, said
    assert "WINTERISCOMING2026" not in said and "hunter2_pw" not in said
    assert "Traceback" not in said


def test_a_variable_set_in_the_environment_and_in_the_bundle_differently_is_refused(
    tmp_path: Path, three: list[Account]
) -> None:
    """Which one was meant? Neither is used: refused, naming the variable, nothing sent."""
    eu, us, _ = three
    _setup(tmp_path, three)
    variables = {account.variable: account.client.token for account in three}
    bundle = json.dumps({**variables, "WEBHOOK_TOKEN_EU": HOOK})
    since = eu.controls.last_seq()

    status, said = _plan(tmp_path, bundle, TOKEN_EU=us.client.token)

    assert status == 1, said
    assert "TOKEN_EU is set both in the environment and in RECONCILER_SECRETS" in said
    assert us.client.token not in said and eu.client.token not in said
    assert eu.client.client_id not in {e["client_id"] for e in eu.controls.requests(since)}


def test_an_entry_naming_the_bundle_itself_is_refused_at_its_line(
    tmp_path: Path, three: list[Account]
) -> None:
    """`tokenEnv: RECONCILER_SECRETS` would send the whole bundle as a token: refused by
    validate at its line, and by plan before anything is sent."""
    eu, _, _ = three
    write_accounts(tmp_path, [eu])
    write_state(tmp_path / "accounts" / "eu", "eu", [1])
    text = (tmp_path / "reconciler.yaml").read_text()
    (tmp_path / "reconciler.yaml").write_text(text.replace(eu.variable, "RECONCILER_SECRETS"))
    since = eu.controls.last_seq()

    checked = reconciler("validate", "--all", cwd=tmp_path)
    status, said = _plan(tmp_path, json.dumps({"X": "a-secret-1"}))

    assert checked.returncode == 1
    assert "tokenEnv names RECONCILER_SECRETS" in checked.stdout, checked.stdout
    assert "reconciler.yaml:6" in checked.stdout
    assert status == 1 and "tokenEnv names RECONCILER_SECRETS" in said, said
    assert eu.controls.requests(since) == []


def test_a_name_no_entry_gives_refuses_nothing_while_a_rename_is_under_way(
    tmp_path: Path, three: list[Account]
) -> None:
    """eu's token variable is being renamed: the bundle holds it under both names until the
    entry's rename is merged, and every account is planned meanwhile."""
    _setup(tmp_path, three)
    variables = {account.variable: account.client.token for account in three}
    renamed = {**variables, "TOKEN_EU_NEXT": three[0].client.token, "WEBHOOK_TOKEN_EU": HOOK}

    status, said = _plan(tmp_path, json.dumps(renamed))

    assert status == 0, said
    assert "3 accounts: 3 planned" in said


WRONG_WAY = [
    ("a value that is a name", "ghp_" + "Zq7x" * 9),
    ("a value that is no name", "tok-" + "Zq7x" * 9),
    ("a short value", "Pw7x"),
]


@pytest.mark.parametrize(("case", "value"), WRONG_WAY, ids=[c[0] for c in WRONG_WAY])
def test_a_bundle_written_the_wrong_way_round_never_shows_its_keys(
    tmp_path: Path, three: list[Account], case: str, value: str
) -> None:
    """`{"<the token>": "TOKEN_EU"}`, names and values swapped: its keys are the secrets, so
    no message quotes one (a key no entry names, a key that is no variable name, a key
    twice); the message says where and how many, and nothing is sent."""
    _setup(tmp_path, three)
    eu, us, apac = three
    since = eu.controls.last_seq()
    swapped = f'{{"{value}": "{eu.variable}", "{value}": "{eu.variable}"}}'

    for bundle in (json.dumps({value: eu.variable}), swapped):
        status, said = _plan(tmp_path, bundle, **{us.variable: us.client.token,
                                                  apac.variable: apac.client.token})  # fmt: skip

        assert status == 1, said
        assert value not in said and value[:8] not in said, said
        assert "RECONCILER_SECRETS" in said and "Traceback" not in said
    assert eu.client.client_id not in {e["client_id"] for e in eu.controls.requests(since)}


def test_an_account_s_folder_given_as_path_reads_its_variables_from_the_bundle(
    tmp_path: Path, three: list[Account]
) -> None:
    """`plan accounts/eu` reads as eu's run does: its files' `${WEBHOOK_TOKEN_EU}` from the
    bundle too (it was "not set"), and still only the variables of its `env:` list."""
    eu, us, _ = three
    _setup(tmp_path, three)
    bundle = json.dumps({"WEBHOOK_TOKEN_EU": HOOK, us.variable: us.client.token})

    done = reconciler("plan", "accounts/eu", cwd=tmp_path, RECONCILER_SECRETS=bundle,
                      RECONCILER_TOKEN=eu.client.token, RECONCILER_BASE_URL=eu.server.base_url,
                      RECONCILER_CLIENT_ID=str(eu.client.client_id),
                      RECONCILER_PLAN_KEY=PLAN_KEY)  # fmt: skip

    said = done.stdout + done.stderr
    assert done.returncode in (0, 2), said
    assert "not set" not in said and HOOK not in said and us.client.token not in said
