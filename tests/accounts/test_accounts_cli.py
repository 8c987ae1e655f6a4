"""Several accounts through the CLI, against two sandbox servers: each account's requests carry
only its own token, to its own server (the servers' request logs say which client each
request authenticated as: a token a server did not issue would show as no client, 401)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.accounts.support import (
    Account,
    clients_seen,
    run,
    seed_live,
    write_accounts,
    write_state,
)


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts)
    for number, account in enumerate(accounts):
        # Each account owns W-*: two to keep, one live to inactivate, `number + 1` to invite.
        seed_live(account, [0, 1, 99])
        write_state(root / "accounts" / account.name, account.name, [0, 1, *range(2, number + 3)])


def _assert_isolated(accounts: list[Account], since: dict[str, int]) -> None:
    """Every request on each server authenticated as one of the accounts on that server, and
    every account's client was seen on its own server."""
    by_server: dict[str, list[Account]] = {}
    for account in accounts:
        by_server.setdefault(account.server.base_url, []).append(account)
    for url, on_it in by_server.items():
        seen = clients_seen(on_it[0].controls, since[url])
        expected = {account.client.client_id for account in on_it}
        assert set(seen) == expected, (url, seen, expected)
        assert all(401 not in statuses for statuses in seen.values())


def _marks(accounts: list[Account]) -> dict[str, int]:
    return {account.server.base_url: account.controls.last_seq() for account in accounts}


def test_plan_comment_apply_drift_each_account_on_its_own_token_and_server(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    since = _marks(three)

    planned = run(tmp_path, three, "plan", "--all", "--format", "json", "--out", "plans")
    assert planned.returncode == 0, planned.stderr
    document = json.loads(planned.stdout)
    assert [entry["name"] for entry in document["accounts"]] == ["eu", "us", "apac"]
    for number, entry in enumerate(document["accounts"]):
        actions = [c["change"]["actions"] for c in entry["plan"]["resource_changes"]]
        assert actions.count(["create"]) == number + 1
        assert actions.count(["delete"]) == 1
    assert sorted(p.name for p in (tmp_path / "plans").iterdir()) == [
        "apac.json",
        "eu.json",
        "us.json",
    ]

    comment = run(tmp_path, three, "comment", "plans")
    assert comment.returncode == 0, comment.stderr
    body = comment.stdout
    assert body.startswith("<!-- reconciler:plan -->")
    for account in three:
        assert f"<summary>{account.name}: Inactivations and replacements (1)</summary>" in body
    # The risky sections of every account come before any account's invitations.
    last_risky = max(body.index(f"{a.name}: Inactivations") for a in three)
    assert last_risky < min(body.index(f"{a.name}: Invitations") for a in three)

    applied = run(tmp_path, three, "apply", "plans")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for account in three:
        assert f"=== account {account.name} ===" in applied.stdout

    drift = run(tmp_path, three, "drift", "--all")
    assert drift.returncode == 0, drift.stdout + drift.stderr
    again = run(tmp_path, three, "plan", "--all", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout
    assert again.stdout.count("No changes.") == 3

    _assert_isolated(three, since)
    for output in (planned, comment, applied, drift, again):
        for account in three:
            assert account.client.token not in output.stdout + output.stderr


def test_each_way_an_account_fails_fails_it_alone(tmp_path: Path, three: list[Account]) -> None:
    eu, _us, apac = three
    write_accounts(tmp_path, three)
    lines = (tmp_path / "reconciler.yaml").read_text().splitlines()
    unreachable = [
        "  - name: gone",
        "    path: accounts/gone",
        "    baseUrl: http://127.0.0.1:9",
        "    tokenEnv: TOKEN_GONE",
        "  - name: refused",
        "    path: accounts/refused",
        f"    baseUrl: {eu.server.base_url}",
        "    tokenEnv: TOKEN_REFUSED",
        "  - name: unset",
        "    path: accounts/unset",
        f"    baseUrl: {eu.server.base_url}",
        "    tokenEnv: TOKEN_UNSET",
    ]
    (tmp_path / "reconciler.yaml").write_text("\n".join(lines + unreachable) + "\n")
    for account in three:
        write_state(tmp_path / "accounts" / account.name, account.name, [1])
    for name in ("gone", "refused", "unset"):
        write_state(tmp_path / "accounts" / name, name, [1])
    (tmp_path / "accounts" / "us" / "workforce.yaml").write_text("version: 1\nworkers: 3\n")
    wrong = "not-a-token-of-this-server-0123456789"
    since = _marks(three)

    result = run(
        tmp_path,
        three,
        "plan",
        "--all",
        "--format",
        "json",
        TOKEN_GONE="x" * 20,
        TOKEN_REFUSED=wrong,
    )
    assert result.returncode == 1
    document = json.loads(result.stdout)
    by_name = {entry["name"]: entry for entry in document["accounts"]}
    assert list(by_name) == ["eu", "us", "apac", "gone", "refused", "unset"]
    assert "plan" in by_name["eu"] and "plan" in by_name["apac"]
    assert "workers" in by_name["us"]["error"]["message"]  # the file's problem, at its line
    assert "accounts/us/workforce.yaml:2" in by_name["us"]["error"]["message"]
    assert "127.0.0.1:9" in by_name["gone"]["error"]["message"]
    assert "TOKEN_UNSET" in by_name["unset"]["error"]["message"]
    assert by_name["refused"]["error"]["message"]
    assert document["summary"]["failed"] == ["us", "gone", "refused", "unset"]
    assert wrong not in result.stdout + result.stderr
    # The refused token reached only its own server, and was refused there.
    refused = clients_seen(eu.controls, since[eu.server.base_url])
    assert None in refused and refused[None] == {401}
    # us's own token at its own server: its clientId is confirmed while its file is read.
    assert set(refused) <= {eu.client.client_id, _us.client.client_id, None}
    assert eu.client.client_id in refused
    assert set(clients_seen(apac.controls, since[apac.server.base_url])) == {apac.client.client_id}

    text = run(tmp_path, three, "plan", "--all", TOKEN_GONE="x" * 20, TOKEN_REFUSED=wrong)
    assert text.returncode == 1
    assert "=== account unset ===\nError: TOKEN_UNSET" in text.stdout
    assert text.stdout.index("=== account eu ===") < text.stdout.index("=== account apac ===")

    comment = run(tmp_path, three, "comment", "--all", TOKEN_GONE="x" * 20, TOKEN_REFUSED=wrong)
    assert comment.returncode == 1
    for name in ("eu", "us", "apac", "gone", "refused", "unset"):
        assert f"| `{name}` |" in comment.stdout
    for name in ("us", "gone", "refused", "unset"):
        assert f"<summary>{name}: could not be planned</summary>" in comment.stdout
    assert "accounts/us/workforce.yaml:2" in comment.stdout
    assert wrong not in comment.stdout + comment.stderr


def test_a_plan_renamed_to_another_account_is_refused_before_any_write(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    saved = run(tmp_path, three, "plan", "--all", "--out", "plans")
    assert saved.returncode == 0, saved.stderr
    plans = tmp_path / "plans"
    (plans / "eu.json").unlink()
    shutil.move(plans / "us.json", plans / "eu.json")
    (plans / "apac.json").unlink()
    since = _marks(three)

    applied = run(tmp_path, three, "apply", "plans")
    assert applied.returncode == 1
    assert "plan of account us, not of account eu" in applied.stdout
    # The joined comment says so too, and names the selected accounts without a plan.
    comment = run(tmp_path, three, "comment", "plans", "--all")
    assert comment.returncode == 1
    assert "<summary>eu: could not be planned</summary>" in comment.stdout
    assert "plan of account us, not of account eu" in comment.stdout
    for name in ("us", "apac"):
        assert f"no saved plan plans/{name}.json: its plan failed or did not run" in comment.stdout
    for account in three:
        entries = account.controls.requests(since[account.server.base_url])
        assert [e for e in entries if e["method"] != "GET"] == []


def test_changed_since_in_a_git_repository(tmp_path: Path, three: list[Account]) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    _setup(tmp_path, three)
    git("init", "-q", "-b", "main")
    git(
        "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "x", "--allow-empty"
    )
    git("add", "-A")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "accounts")
    git("checkout", "-qb", "change")

    def changed() -> list[str]:
        result = run(tmp_path, three, "accounts", "--changed-since", "main", "--format", "json")
        assert result.returncode == 0, result.stderr
        return [row["name"] for row in json.loads(result.stdout)]

    assert changed() == []
    write_state(tmp_path / "accounts" / "us", "us", [0, 1, 7])  # modified, not committed
    (tmp_path / "accounts" / "apac" / "README.md").write_text("The APAC entity.\n")
    assert changed() == ["us", "apac"]  # apac: a new, untracked file
    git("add", "-A")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "us")
    assert changed() == ["us", "apac"]
    text = (tmp_path / "reconciler.yaml").read_text()
    (tmp_path / "reconciler.yaml").write_text(text.replace("TOKEN_EU", "TOKEN_EU_NEW"))
    assert changed() == ["eu", "us", "apac"]  # eu's own entry changed
    matrix = run(
        tmp_path, three, "accounts", "--changed-since", "main", "--format", "github-matrix"
    )
    assert json.loads(matrix.stdout) == {
        "include": [{"account": "eu"}, {"account": "us"}, {"account": "apac"}]
    }
    (tmp_path / "reconciler.yaml").write_text(text + "# a comment only\n")
    assert changed() == ["us", "apac"]
    plan = run(tmp_path, three, "plan", "--changed-since", "main")
    assert plan.returncode == 0, plan.stderr
    assert "=== account eu ===" not in plan.stdout and "=== account us ===" in plan.stdout
    bad = run(tmp_path, three, "accounts", "--changed-since", "no-such-branch")
    assert bad.returncode == 1 and "no-such-branch" in bad.stderr


def test_no_variable_of_another_account_is_read_and_no_older_plan_is_left_to_apply(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    saved = run(tmp_path, three, "plan", "--all", "--out", "plans")
    assert saved.returncode == 0, saved.stderr
    # eu's files now name us's token variable in a webhook header: it is not there for eu.
    state = tmp_path / "accounts" / "eu" / "workforce.yaml"
    state.write_text(
        state.read_text()
        + "webhook:\n  url: https://hooks.example.com/in\n  event_types: [KYC]\n"
        + "  headers:\n    - name: X-Key\n      value: ${TOKEN_US}\n"
    )
    again = run(tmp_path, three, "plan", "--all", "--out", "plans", "--format", "json")
    assert again.returncode == 1
    by_name = {entry["name"]: entry for entry in json.loads(again.stdout)["accounts"]}
    assert "${TOKEN_US} is not a variable account eu may read" in by_name["eu"]["error"]["message"]
    assert "plan" in by_name["us"] and "plan" in by_name["apac"]
    # eu failed now: its plan of the first run is gone, so `apply plans` cannot apply it.
    assert sorted(p.name for p in (tmp_path / "plans").iterdir()) == ["apac.json", "us.json"]
    partial = run(tmp_path, three, "plan", "--account", "us", "--out", "plans")
    assert partial.returncode == 1 and "apac.json" in partial.stderr
    missing = run(tmp_path, three, "apply", "plans", "--account", "eu")
    assert missing.returncode == 1 and "holds no plan of eu" in missing.stderr


def test_the_first_ctrl_c_stops_every_account_sending_and_each_ledger_says_so(
    tmp_path: Path, three: list[Account]
) -> None:
    import signal
    import subprocess
    import sys
    import time

    from tests.accounts.support import environment
    from tests.cli import user_environment

    write_accounts(tmp_path, three)
    for account in three:
        write_state(tmp_path / "accounts" / account.name, account.name, range(400))
    saved = run(tmp_path, three, "plan", "--all", "--out", "plans")
    assert saved.returncode == 0, saved.stderr
    for account in three:
        account.controls.set_faults(latency_ms=300)
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", "apply", "plans", "--parallelism", "1"],
        cwd=tmp_path,
        env=user_environment(**environment(three)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60  # until an invitation of some account is being sent
    while time.monotonic() < deadline and not any(
        entry["method"] == "POST" for a in three for entry in a.controls.requests()
    ):
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert "Interrupted: waiting for the requests in flight" in err
    interrupted = out.count("Apply interrupted:")
    before = out.count("interrupted before this account was applied: nothing sent")
    assert interrupted >= 1 and interrupted + before == 3, out
    assert "3 accounts: 0 applied," in out
    assert "Traceback" not in err
    for account in three:
        account.controls.set_faults()
    again = run(tmp_path, three, "apply", "--all", "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    converged = run(tmp_path, three, "plan", "--all", "--detailed-exitcode")
    assert converged.returncode == 0, converged.stdout


def test_an_account_whose_file_fails_does_not_silence_the_others_logs(
    tmp_path: Path, three: list[Account]
) -> None:
    eu, _us, apac = three
    write_accounts(tmp_path, [eu, apac])
    for account in (eu, apac):
        seed_live(account, [0, 1, 99])
        write_state(tmp_path / "accounts" / account.name, account.name, range(3))
    (tmp_path / "accounts" / "eu" / "workforce.yaml").write_text("version: 1\nworkers: 3\n")
    apac.controls.set_faults(latency_ms=200, rate_limit_per_s=1)
    result = run(tmp_path, [eu, apac], "plan", "--all", "--format", "json")
    assert result.returncode == 1
    by_name = {entry["name"]: entry for entry in json.loads(result.stdout)["accounts"]}
    assert "error" in by_name["eu"] and "plan" in by_name["apac"]
    statuses = [e["status"] for e in apac.controls.requests()]
    assert 429 in statuses, statuses
    assert "retrying in" in result.stderr  # apac's retries, logged after eu's file failed
