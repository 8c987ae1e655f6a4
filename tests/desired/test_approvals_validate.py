"""`policy.approvals` refused by `validate` at its line (issue 46): in the desired state and in
an account's entry of `reconciler.yaml`, and set in both places."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from reconciler.desired import load_desired_state
from reconciler.desired.approvals import Team
from tests.cli import reconciler

BROKEN = """version: 1
policy:
  approvals:
    - over: "0.00"
      count: 1
      form: [alice]
    - over: 10,000
      count: 3
      from: [alice, bob]
    - over: "0.00"
      count: 0
      from: []
    - over: "500.00"
      count: 1
      from: [alice, alice, "dependabot[bot]", {team: finance}]
workers: []
"""


def _lines(output: str, name: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(name)]


def test_a_bad_approvals_block_is_refused_at_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "workforce.yaml"
    path.write_text(BROKEN)
    result = reconciler("validate", str(path))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = "\n".join(_lines(result.stdout + result.stderr, str(path)))
    for where, words in (
        (":4:", "missing required key 'from'"),
        (":6:7:", "unknown key 'form' in an approvals rule; known keys: over, count, from"),
        (":7:13:", 'over must be a plain decimal such as "1500.00"'),
        (":8:14:", "count 3 is more than the 2 logins in from: no payrun could ever be approved"),
        (":10:13:", "rule 3 is over 0.00, as rule 1 is"),
        (":11:14:", "count must be a whole number, 1 or more; got 0"),
        (":12:13:", "from must list at least one login or {team: org/slug}"),
        (":15:21:", "alice is listed twice in from"),
        (":15:28:", "dependabot[bot] is a bot, and a bot's approval never counts"),
        (":15:47:", "each item of from must be a login (alice) or {team: org/slug}"),
    ):
        assert any(where in line and words in line for line in lines.splitlines()), (
            where,
            words,
            lines,
        )


def test_an_empty_block_and_a_valid_one(tmp_path: Path) -> None:
    path = tmp_path / "workforce.yaml"
    path.write_text("version: 1\npolicy:\n  approvals: []\nworkers: []\n")
    result = reconciler("validate", str(path))
    assert result.returncode == 1
    assert f"{path}:3:14: approvals must list at least one rule" in result.stdout
    path.write_text(
        "version: 1\npolicy:\n  approvals:\n"
        '    - {over: "0.00", count: 1, from: [alice, bob]}\n'
        "    - {over: 10000.50, count: 2, from: [alice, {team: acme/finance}]}\n"
        "workers: []\n"
    )
    assert reconciler("validate", str(path)).returncode == 0
    approvals = load_desired_state(path).policy.approvals
    assert approvals is not None
    assert [rule.over for rule in approvals.rules] == [Decimal("0.00"), Decimal("10000.50")]
    assert approvals.rules[1].approvers == ("alice", Team("acme", "finance"))
    assert approvals.rules[1].count == 2  # a team may stand for more than its one item


ACCOUNTS = """version: 1
accounts:
  - name: eu
    path: eu.yaml
    tokenEnv: RECONCILER_TOKEN_EU
    policy:
      approvals:
        - {over: "0.00", count: 2, from: [alice], color: red}
      prune: false
  - name: us
    path: us.yaml
    tokenEnv: RECONCILER_TOKEN_US
    policy:
      approvals:
        - {over: "0.00", count: 1, from: [alice, bob]}
"""


def test_an_accounts_entry_is_checked_the_same_way(tmp_path: Path) -> None:
    (tmp_path / "reconciler.yaml").write_text(ACCOUNTS)
    for name in ("eu", "us"):
        (tmp_path / f"{name}.yaml").write_text("version: 1\nworkers: []\n")
    result = reconciler("validate", "--all", cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for line, words in (
        (8, "count 2 is more than the 1 login in from"),
        (8, "unknown key 'color' in an approvals rule"),
        (9, "unknown key 'prune' in an account's policy; known keys: approvals"),
    ):
        assert any(
            f"reconciler.yaml:{line}:" in row and words in row for row in output.splitlines()
        ), (
            line,
            words,
            output,
        )


def test_both_places_set_is_an_error_at_the_entry(tmp_path: Path) -> None:
    (tmp_path / "reconciler.yaml").write_text(
        ACCOUNTS.replace("count: 2, from: [alice], color: red", "count: 1, from: [alice]").replace(
            "      prune: false\n", ""
        )
    )
    (tmp_path / "eu.yaml").write_text("version: 1\nworkers: []\n")
    (tmp_path / "us.yaml").write_text(
        'version: 1\npolicy:\n  approvals:\n    - {over: "0.00", count: 1, from: [carol]}\n'
        "workers: []\n"
    )
    result = reconciler("validate", "--all", cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "account eu: us.yaml" not in output
    assert "account us: invalid" in output
    assert (
        f"{tmp_path / 'reconciler.yaml'}:13:1: account us sets policy.approvals here and its "
        "desired state (us.yaml) sets policy.approvals too: set it in one place"
    ) in output
    assert "account eu: eu.yaml: valid" in output
