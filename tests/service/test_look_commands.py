"""The look commands, run as real commands against the sandbox: they only ever send GET."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.secrets import MASK, Secret
from reconciler.service.models import PaymentItem, WebhookHeader
from tests.cli import reconciler as _reconciler
from tests.service.helpers import client_for, control, invitation, last_seq, request_log

ROOT = Path(__file__).resolve().parents[2]
HEADER_VALUE = "hv-Pq9Wm3Zx7Lk2"


@pytest.fixture
def account(sandbox: Any) -> Any:
    """The sandbox with three workers (one ACTIVE) and a webhook with a secret header."""
    with client_for(sandbox) as client:
        results = client.invite_workers([invitation(n) for n in (1, 2, 3)])
        control(sandbox, f"agreements/{results[0].agreement_id}/status", {"status": "ACTIVE"})
        client.set_webhook(
            "https://hooks.example.com/workforce",
            [WebhookHeader("X-Webhook-Token", Secret(HEADER_VALUE))],
            ["KYC", "PAYMENT"],
        )
    return sandbox


def _run(sandbox: Any, *args: str) -> str:
    result = CliRunner().invoke(
        main,
        [*args, "--base-url", sandbox.base_url],
        env={"RECONCILER_TOKEN": sandbox.token, "COLUMNS": "250"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_workers_in_every_format_sends_only_gets(account: Any) -> None:
    since = last_seq(account)
    as_json = json.loads(_run(account, "workers", "--format", "json"))
    active_csv = list(
        csv.DictReader(
            io.StringIO(_run(account, "workers", "--status", "ACTIVE", "--format", "csv"))
        )
    )
    table = _run(account, "workers", "--format", "table")
    assert [row["external_id"] for row in as_json] == ["T-000001", "T-000002", "T-000003"]
    assert as_json[0]["status"] == "ACTIVE" and as_json[0]["country_iso"] == "GB"
    assert as_json[1]["first_name"] is None
    assert [(row["external_id"], row["status"]) for row in active_csv] == [("T-000001", "ACTIVE")]
    assert "Workers (3)" in table and "worker3@example.com" in table
    assert {entry["method"] for entry in request_log(account, since)} == {"GET"}


def test_webhook_show_masks_header_values(account: Any) -> None:
    since = last_seq(account)
    shown = json.loads(_run(account, "webhook", "show", "--format", "json"))
    table = _run(account, "webhook", "show", "--format", "table")
    # No file writes this URL: its path is shown as a fingerprint (it may be the credential).
    assert shown["url"].startswith("https://hooks.example.com/\u2026 (fingerprint ")
    assert "workforce" not in json.dumps(shown) + table
    assert shown["event_types"] == ["KYC", "PAYMENT"]
    assert shown["headers"] == [{"name": "X-Webhook-Token", "value": MASK}]
    assert "X-Webhook-Token" in table
    for output in (json.dumps(shown), table):
        assert HEADER_VALUE not in output
    assert {entry["method"] for entry in request_log(account, since)} == {"GET"}


def test_webhook_show_without_a_webhook(sandbox: Any) -> None:
    assert _run(sandbox, "webhook", "show", "--format", "json").strip() == "null"
    assert "No webhook is configured." in _run(sandbox, "webhook", "show", "--format", "table")
    assert _run(sandbox, "webhook", "show", "--format", "csv").splitlines() == [
        "url,enabled,event_types,headers,client_id,updated_at"
    ]


def test_json_is_the_default_off_a_terminal(account: Any) -> None:
    assert len(json.loads(_run(account, "workers"))) == 3


def test_a_refused_token_is_a_message_not_a_traceback(sandbox: Any) -> None:
    result = CliRunner().invoke(
        main,
        ["workers", "--base-url", sandbox.base_url],
        env={"RECONCILER_TOKEN": "not-the-token-Zk3"},
    )
    assert result.exit_code == 1
    assert "refused the token from the RECONCILER_TOKEN environment variable" in result.output
    assert "Traceback" not in result.output and "not-the-token-Zk3" not in result.output


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["workers", "--sandbox-reset"], "--sandbox-reset only makes sense with --sandbox"),
        (["workers", "--sandbox", "--base-url", "https://x.example.com"], "leave out --base-url"),
        (["workers", "--base-url", "http://example.com"], "refusing plain http://"),
        (["workers", "--status", "SLEEPING"], "Invalid value for '--status'"),
        (["payments", "--since", "last week"], "not an ISO 8601 date or timestamp"),
    ],
)
def test_bad_connection_settings_are_clear(args: list[str], complaint: str) -> None:
    result = CliRunner().invoke(main, args, env={"RECONCILER_TOKEN": "t0ken-abc"})
    assert result.exit_code != 0
    assert complaint in result.output
    assert "Traceback" not in result.output


def test_the_embedded_sandbox_is_seeded_once_kept_and_reset(tmp_path: Path) -> None:
    db = tmp_path / "state" / "sandbox.db"
    first = _reconciler("workers", "--sandbox", "--sandbox-db", str(db), cwd=ROOT)
    assert first.returncode == 0, first.stderr
    seeded = json.loads(first.stdout)
    assert "ENG-001" in {row["external_id"] for row in seeded}
    assert db.exists()
    again = _reconciler("workers", "--sandbox", "--sandbox-db", str(db), cwd=tmp_path)
    assert json.loads(again.stdout) == seeded  # the file keeps the account between runs
    webhook = _reconciler("webhook", "show", "--sandbox", "--sandbox-db", str(db), cwd=ROOT)
    assert json.loads(webhook.stdout)["url"].startswith("https://hooks.example.com/\u2026 (")
    wallet = _reconciler("wallet", "--sandbox", "--sandbox-db", str(db), cwd=ROOT)
    assert json.loads(wallet.stdout)["enabled"] is True  # the client id is the sandbox's own
    reset = _reconciler(
        "workers", "--sandbox", "--sandbox-db", str(db), "--sandbox-reset", "--format", "csv",
        cwd=ROOT,
    )  # fmt: skip
    assert reset.returncode == 0, reset.stderr
    assert len(list(csv.DictReader(io.StringIO(reset.stdout)))) == len(seeded)


@pytest.fixture
def paid_account(account: Any) -> tuple[Any, int]:
    """The account above, topped up, with one processed paylist of two payments."""
    control(account, f"clients/{account.client_id}/top-up", {"amount": 25})
    with client_for(account) as client:
        paylist = client.create_paylist(
            "June",
            [
                PaymentItem("June work", Decimal("12.50"), "worker1@example.com"),
                PaymentItem("June extra", Decimal("0.25"), "worker1@example.com"),
            ],
        )
    control(account, "process")
    return account, paylist.id


def test_money_commands_in_every_format_send_only_gets(paid_account: tuple[Any, int]) -> None:
    account, paylist_id = paid_account
    since = last_seq(account)
    wallet = json.loads(_run(account, "wallet", "--format", "json"))  # client id from the account
    journal = json.loads(_run(account, "transactions", "--format", "json"))
    payments = list(
        csv.DictReader(
            io.StringIO(_run(account, "payments", "--since", "2020-01-01", "--format", "csv"))
        )
    )
    in_paylist = json.loads(_run(account, "paylist", str(paylist_id), "--format", "json"))
    tables = [
        _run(account, "wallet", "--format", "table"),
        _run(account, "transactions", "--format", "table"),
        _run(account, "payments", "--format", "table"),
        _run(account, "paylist", str(paylist_id), "--format", "table"),
    ]
    assert wallet["client_id"] == account.client_id
    # One shape for money: two-place strings in JSON, the same digits in CSV and tables.
    assert wallet["balance"] == "10012.25" and wallet["over_draft_limit"] == "0.00"
    assert [(e["operation"], e["amount"]) for e in journal] == [
        ("DEPOSIT", "25.00"),
        ("WITHDRAWAL", "-12.50"),
        ("WITHDRAWAL", "-0.25"),
    ]
    assert [(p["amount"], p["status"]) for p in payments] == [
        ("12.50", "SUCCESS"),
        ("0.25", "SUCCESS"),
    ]
    assert in_paylist["paylist"]["id"] == paylist_id
    assert in_paylist["paylist"]["description"] == "June"
    assert [p["description"] for p in in_paylist["payments"]] == ["June work", "June extra"]
    assert "Wallet" in tables[0] and "10,012.25" in tables[0]  # grouped as the plan groups it
    assert "-12.50" in tables[1] and "25.00" in tables[1]
    assert [p["amount"] for p in in_paylist["payments"]] == ["12.50", "0.25"]
    assert "Wallet journal (3)" in tables[1] and "Payments (2)" in tables[2]
    assert f"Paylist {paylist_id}" in tables[3]
    assert f"Payments of paylist {paylist_id} (2)" in tables[3]
    assert {entry["method"] for entry in request_log(account, since)} == {"GET"}


def test_a_paylist_that_is_not_there_is_a_clear_error(sandbox: Any) -> None:
    result = CliRunner().invoke(
        main,
        ["paylist", "999", "--base-url", sandbox.base_url],
        env={"RECONCILER_TOKEN": sandbox.token},
    )
    assert result.exit_code == 1
    assert "GET /payment-agent/paylists/999 failed: 404 Not Found" in result.output


def test_the_wallet_asks_for_the_client_id_when_the_account_cannot_tell(sandbox: Any) -> None:
    result = CliRunner().invoke(
        main, ["wallet", "--base-url", sandbox.base_url], env={"RECONCILER_TOKEN": sandbox.token}
    )
    assert result.exit_code == 1
    assert "the wallet needs the client id" in result.output
    assert "--client-id" in result.output
    given = CliRunner().invoke(
        main,
        ["wallet", "--base-url", sandbox.base_url, "--format", "json"],
        env={"RECONCILER_TOKEN": sandbox.token, "RECONCILER_CLIENT_ID": str(sandbox.client_id)},
    )
    assert json.loads(given.output)["client_id"] == sandbox.client_id


def test_a_sandbox_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    db.write_text("this is not SQLite\n" * 100, encoding="utf-8")
    result = CliRunner().invoke(main, ["workers", "--sandbox", "--sandbox-db", str(db)])
    assert result.exit_code == 1
    assert f"{db} is not a sandbox database" in result.output
    assert "give --sandbox-db a new file name" in result.output
    assert db.read_text(encoding="utf-8") == "this is not SQLite\n" * 100  # left as it was
    assert "Traceback" not in result.output


def test_the_further_look_commands_send_only_gets(paid_account: tuple[Any, int]) -> None:
    account, paylist_id = paid_account
    since = last_seq(account)
    worker = json.loads(_run(account, "worker", "WORKER1@example.com", "--format", "json"))
    listed = json.loads(_run(account, "paylists", "--format", "json"))
    payment_id = json.loads(_run(account, "paylist", str(paylist_id)))["payments"][0]["id"]
    payment = json.loads(_run(account, "payment", str(payment_id), "--format", "json"))
    tables = [
        _run(account, "worker", "worker1@example.com", "--format", "table"),
        _run(account, "paylists", "--format", "table"),
        _run(account, "paylists", "--format", "csv"),
    ]
    assert worker["email"] == "worker1@example.com" and worker["status"] == "ACTIVE"
    assert listed == [
        {
            "paylist_id": paylist_id,
            "flow_stage": "COMPLETED",
            "description": "June",
            "total": "12.75",
        }
    ]
    assert payment["paylist_id"] == paylist_id and payment["status"] == "SUCCESS"
    assert payment["amount"] == "12.50"
    assert "Worker worker1@example.com" in tables[0] and "Paylists (1)" in tables[1]
    assert tables[2].splitlines() == [
        "paylist_id,flow_stage,description,total",
        f"{paylist_id},COMPLETED,June,12.75",
    ]
    assert {entry["method"] for entry in request_log(account, since)} == {"GET"}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["worker", "nobody@example.com"], "404 Not Found"),
        (["worker", "worker2@example.com"], "has not started the onboarding process"),
        (["payment", "999"], "payment 999 not found"),
    ],
)
def test_what_the_service_does_not_have_is_exit_1_with_its_reason(
    account: Any, args: list[str], said: str
) -> None:
    result = CliRunner().invoke(
        main, [*args, "--base-url", account.base_url], env={"RECONCILER_TOKEN": account.token}
    )
    assert result.exit_code == 1
    assert said in result.output


def test_webhook_test_exit_status_says_whether_it_was_delivered(account: Any) -> None:
    from tests.sandbox.receiver import Receiver

    with Receiver() as hook:
        with client_for(account) as client:
            client.set_webhook(hook.url, [], ["PAYMENT"])
        delivered = CliRunner().invoke(
            main,
            ["webhook", "test", "--format", "json", "--base-url", account.base_url],
            env={"RECONCILER_TOKEN": account.token},
        )
        assert delivered.exit_code == 0, delivered.output
        assert json.loads(delivered.output)["delivered"] is True
        hook.answers.append(503)
        refused = CliRunner().invoke(
            main,
            ["webhook", "test", "--base-url", account.base_url, "--format", "json"],
            env={"RECONCILER_TOKEN": account.token},
        )
        assert refused.exit_code == 1
        assert json.loads(refused.output)["status_code"] == 503
