"""`reconciler report`, run as a user runs it against the sandbox over real HTTP.

The account: two payruns of the files paid in October and November 2026 (one of November's
payments FAILED for want of funds), and a paylist made by hand that no payrun of the files made;
the files' third payrun, December's, is not paid yet.
"""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.payruns import paylist_key
from reconciler.sandbox import SandboxServer
from tests.cli import reconciler
from tests.sandbox.paying import active_worker, new_key, post_json, process
from tests.sandbox.support import Controls

FILES = """\
version: 1
workers: []
payruns:
  - id: 2026-10-contractors
    description: October 2026 contractors
    payments:
      - {email: ada@example.com, amount: "1500.00", description: October 2026 retainer}
      - {email: grace@example.com, amount: 250, description: October 2026 review}
  - id: 2026-11-contractors
    description: November 2026 contractors
    payments:
      - {email: ada@example.com, amount: "1500.00", description: November 2026 retainer}
      - {email: grace@example.com, amount: "20000.00", description: November 2026 bonus}
  - id: 2026-12-contractors
    description: December 2026 contractors
    payments:
      - {email: ada@example.com, amount: "1500.00", description: December 2026 retainer}
"""
PAYRUNS = {
    "2026-10-contractors": (
        "October 2026 contractors",
        "2026-10-15",
        [
            ("ada@example.com", "1500.00", "October 2026 retainer"),
            ("grace@example.com", "250.00", "October 2026 review"),
        ],
    ),
    "2026-11-contractors": (
        "November 2026 contractors",
        "2026-11-20",
        [
            ("ada@example.com", "1500.00", "November 2026 retainer"),
            ("grace@example.com", "20000.00", "November 2026 bonus"),  # the wallet holds 10,000
        ],
    ),
}


def _paylist(api: httpx.Client, key: str, description: str, items: list[Any]) -> int:
    body = {
        "description": description,
        "idempotence_key": key,
        "payments": [
            {"worker_email": email, "amount": Decimal(amount), "description": text}
            for email, amount, text in items
        ],
    }
    answer = post_json(api, "/payment-agent/paylists", body)
    assert answer.status_code == 200, answer.text
    paylist_id: int = answer.json()["id"]
    return paylist_id


@pytest.fixture
def payroll(sandbox: SandboxServer, api: httpx.Client, controls: Controls, tmp_path: Path) -> Path:
    """The account paid as above, each paylist settled, then dated in its month; the files."""
    for email in ("ada@example.com", "grace@example.com"):
        active_worker(api, controls, workerEmail=email)
    dated = []
    for payrun_id, (description, day, items) in PAYRUNS.items():
        dated.append((_paylist(api, paylist_key(payrun_id), description, items), day))
        process(controls)  # in order: October's is paid before November's asks
    by_hand = [("ada@example.com", "10.00", "Paid by hand")]
    dated.append((_paylist(api, new_key(), "By hand", by_hand), "2026-11-05"))
    process(controls)
    for paylist_id, day in dated:
        answer = controls.http.post(
            f"/_sandbox/paylists/{paylist_id}/creation-date", json={"creation_date": day}
        )
        assert answer.status_code == 200, answer.text
    files = tmp_path / "payroll"
    files.mkdir()
    (files / "payruns.yaml").write_text(FILES)
    return files


def _report(sandbox: SandboxServer, *args: str) -> str:
    result = reconciler("report", *args, server=sandbox)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_register_gives_paid_failed_with_cause_and_the_payrun(
    sandbox: SandboxServer, controls: Controls, payroll: Path
) -> None:
    since = controls.last_seq()
    text = _report(sandbox, str(payroll))
    lines = text.splitlines()
    assert "the service's side alone" in lines[1]
    october = next(line for line in lines if "2026-10-contractors" in line)
    november = next(line for line in lines if "2026-11-contractors" in line)
    assert october.split()[1:7] == [
        "2026-10-contractors",
        "2",
        "1,750.00",
        "1,750.00",
        "0.00",
        "0.00",
    ]
    assert november.split()[1:7] == [
        "2026-11-contractors",
        "2",
        "21,500.00",
        "1,500.00",
        "20,000.00",
        "0.00",
    ]
    assert lines[lines.index(november) + 1].split() == [
        "failed:",
        "INSUFFICIENT_FUNDS",
        "1",
        "(20,000.00)",
    ]
    assert (
        "Not shown: 1 paylist of the account that no payrun of the files paid (paylist 3)" in text
    )
    assert "Paid by hand" not in text and "By hand" not in text
    assert "No paylist of the account holds 1 payrun of the files (2026-12-contractors)" in text
    # Without PATH, the whole account: the paylist made by hand too, with no payrun.
    whole = _report(sandbox, "--since", "2026-11")
    assert '"By hand"' in whole and "2026-10" not in whole and "PAYRUN" not in whole
    assert next(line for line in whole.splitlines() if line.startswith("TOTAL")).split()[1:3] == [
        "3",
        "21,510.00",
    ]
    assert {entry["method"] for entry in controls.requests(since)} == {"GET"}


def test_csv_has_one_row_a_payment(sandbox: SandboxServer, payroll: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(sandbox, str(payroll), "--format", "csv"))))
    assert [(r["month"], r["payrun_id"], r["amount"], r["status"], r["cause"]) for r in rows] == [
        ("2026-10", "2026-10-contractors", "1500.00", "SUCCESS", ""),
        ("2026-10", "2026-10-contractors", "250.00", "SUCCESS", ""),
        ("2026-11", "2026-11-contractors", "1500.00", "SUCCESS", ""),
        ("2026-11", "2026-11-contractors", "20000.00", "FAILED", "INSUFFICIENT_FUNDS"),
    ]
    assert rows[3]["payee"] == "grace@example.com"
    assert {r["commit"] for r in rows} == {""}  # no record of the merge is read yet
    whole = list(csv.DictReader(io.StringIO(_report(sandbox, "--format", "csv"))))
    assert len(whole) == 5 and whole[-1]["description"] == "Paid by hand"


def test_markdown_has_a_mermaid_chart_of_the_months_beside_the_table(
    sandbox: SandboxServer, payroll: Path
) -> None:
    markdown = _report(sandbox, str(payroll), "--format", "markdown")
    chart = markdown[markdown.index("```mermaid") : markdown.index("```\n", 10) + 3]
    assert "xychart-beta" in chart
    assert 'x-axis ["2026-10", "2026-11"]' in chart
    assert 'y-axis "Amount" 0 --> 21500.00' in chart  # from 0, to the largest month
    assert "bar [1750.00, 21500.00]" in chart  # settled: paid and failed
    assert "bar [1750.00, 1500.00]" in chart  # paid, drawn over it
    table = markdown[markdown.index("| month |") :]
    assert "| `2026-11-contractors` | 2 | 21,500.00 | 1,500.00 | 20,000.00 | 0.00 |" in table
    assert "INSUFFICIENT\\_FUNDS 1 \\(20,000.00\\)" in table
    assert "service's side alone" in markdown


def test_json_amounts_are_two_place_strings(sandbox: SandboxServer, payroll: Path) -> None:
    document = json.loads(_report(sandbox, str(payroll), "--format", "json", "--until", "2026-11"))
    november = document["months"][1]
    assert (november["month"], november["paid"], november["failed"]) == (
        "2026-11",
        "1500.00",
        "20000.00",
    )
    assert november["paylists"][0]["payrun_id"] == "2026-11-contractors"
    assert november["paylists"][0]["failed_causes"] == [
        {"cause": "INSUFFICIENT_FUNDS", "count": 1, "amount": "20000.00"}
    ]
    assert document["totals"]["requested"] == "23250.00"
    assert len(document["payments"]) == 4 and document["merges_read"] is False
    assert document["left_out_paylists"] == [3]
    assert document["unpaid_payruns"] == ["2026-12-contractors"]


@pytest.mark.parametrize(
    "args, said",
    [
        (["--since", "2026-13"], "Invalid value for '--since': '2026-13' is not a month"),
        (["--until", "Nov"], "Invalid value for '--until': 'Nov' is not a month"),
        (["--since", "2026-12", "--until", "2026-11"], "--since: 2026-12 is after --until"),
        (["--format", "pdf"], "Invalid value for '--format'"),
    ],
)
def test_a_bad_option_is_exit_1_naming_it(
    sandbox: SandboxServer, args: list[str], said: str
) -> None:
    result = reconciler("report", *args, server=sandbox)
    assert result.returncode == 1
    assert said in result.stderr and "Traceback" not in result.stderr


def test_a_bad_file_is_exit_1_at_its_line(sandbox: SandboxServer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(FILES.replace('amount: "20000.00"', 'amount: "20,000.00"'))
    result = reconciler("report", str(bad), server=sandbox)
    assert result.returncode == 1
    assert "bad.yaml:" in result.stderr and "amount must be" in result.stderr
    assert result.stdout == ""


def test_the_drift_issue_money_section_has_the_chart_of_the_months(
    sandbox: SandboxServer, payroll: Path
) -> None:
    """`drift --format markdown` (the drift issue's body) charts the window's months as
    `report --format markdown` does, every paylist of the window (the one made by hand too),
    with their table beside it; a pull request's plan comment has no chart."""
    files = str(payroll / "payruns.yaml")
    drift = reconciler(
        "drift", files, "--format", "markdown", "--money-since", "2026-10-01", server=sandbox
    )
    assert drift.returncode == 2, drift.stderr  # failed and untraced money
    money = drift.stdout[drift.stdout.index("| money since 2026-10-01 |") :]
    chart = money[money.index("```mermaid") : money.index("```\n", money.index("```mermaid") + 3)]
    assert "xychart-beta" in chart
    assert 'x-axis ["2026-10", "2026-11"]' in chart
    assert "bar [1750.00, 21510.00]" in chart  # settled: paid and failed, by hand too
    assert "bar [1750.00, 1510.00]" in chart  # paid, drawn over it
    assert "| 2026-11 | 1,510.00 | 20,000.00 | 0.00 |" in money  # the table, where no chart
    assert money.index("```mermaid") < money.index("**Failed payments**")
    plan = reconciler(
        "plan", files, "--format", "markdown", "--money-since", "2026-10-01", server=sandbox
    )
    assert "| money since 2026-10-01 |" in plan.stdout and "```mermaid" not in plan.stdout
