"""A payrun's `period` (issue 47): it pays every managed worker with `pay` whose agreement is
ACTIVE, once per period whatever its payrun's id, through the command line against the demo
sandbox over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, cli
from tests.cli import reconciler

#: The demo seed's ENG-001 and ENG-002 are ACTIVE, ENG-003 has not answered, ENG-004 is new.
PAY = {
    "ada@example.com": "1500.00",
    "grace@example.com": "250.00",
    "alan@example.com": "100.00",
    "katherine@example.com": "120",
}


def _file(
    tmp_path: Path, period: str = "2026-11", payrun_id: str | None = None, **pay: str
) -> Path:
    text = QUICKSTART.read_text()
    for email, amount in {**PAY, **pay}.items():
        line = f"    workerEmail: {email}\n"
        text = text.replace(line, f"{line}    pay: {amount}\n")
    text += (
        "payruns:\n"
        f"  - id: {payrun_id or period + '-contractors'}\n"
        f"    description: {period} contractors\n"
        f"    period: {period}\n"
    )
    path = tmp_path / "desired.yaml"
    path.write_text(text)
    return path


def _paylists(server: SandboxServer) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {server.token}"}
    base = f"{server.base_url}/payment-agent/paylists"
    listed = httpx.get(base, headers=headers).json()["content"]
    return [
        {
            **paylist,
            "payments": httpx.get(
                f"{base}/{paylist['paylistId']}/payments", headers=headers
            ).json(),
        }
        for paylist in listed
    ]


def test_a_period_pays_exactly_the_active_workers_with_pay(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path)
    planned = cli("plan", str(path), server=demo)
    assert planned.returncode == 0, planned.stderr
    assert "1 payrun to pay (1,750.00)" in planned.stdout
    assert "not paid: ENG-003 (alan@example.com): its agreement is not ACTIVE" in planned.stdout
    assert "not paid: ENG-004 (katherine@example.com): no agreement yet" in planned.stdout
    document = json.loads(cli("plan", str(path), "--format", "json", server=demo).stdout)
    (payrun,) = document["payruns"]
    assert (payrun["period"], payrun["state"], payrun["total"]) == ("2026-11", "to_pay", "1750.00")

    applied = cli("apply", str(path), "--auto-approve", server=demo)

    assert applied.returncode == 0, applied.stdout + applied.stderr
    (paylist,) = _paylists(demo)
    assert paylist["total"] == 1750.0
    paid = sorted((p["worker_email"], p["amount"]) for p in paylist["payments"]["content"])
    assert paid == [("ada@example.com", 1500.0), ("grace@example.com", 250.0)]
    assert "1 payrun to pay" not in cli("plan", str(path), server=demo).stdout
    report = cli("report", str(path), "--format", "csv", server=demo)
    assert report.returncode == 0, report.stderr
    (row, *_) = [line for line in report.stdout.splitlines()[1:] if "ada@example.com" in line]
    assert "2026-11-contractors" in row and ",2026-11," in row


def test_a_paid_period_with_a_rate_changed_since_plans_nothing_and_stays_clean(
    demo: SandboxServer, tmp_path: Path
) -> None:
    applied = cli("apply", str(_file(tmp_path)), "--auto-approve", server=demo)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    (paid,) = _paylists(demo)

    # The rate rose and the payrun was renamed: the period is paid, whatever its id.
    raised = _file(tmp_path, payrun_id="nov-2026", **{"ada@example.com": "1600.00"})
    planned = cli("plan", str(raised), "--format", "json", server=demo)
    assert planned.returncode == 0, planned.stderr
    (payrun,) = json.loads(planned.stdout)["payruns"]
    assert (payrun["state"], payrun["paylist_id"]) == ("paid", paid["paylistId"])
    assert payrun["total"] == "1750.00"  # what was paid, not what the rate says now
    again = cli("apply", str(raised), "--auto-approve", server=demo)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "conflict" not in again.stdout
    assert len(_paylists(demo)) == 1


def test_two_payruns_of_one_period_are_refused_at_their_lines(tmp_path: Path) -> None:
    path = _file(tmp_path)
    path.write_text(
        path.read_text() + "  - id: november-again\n    description: again\n    period: 2026-11\n"
    )
    lines = path.read_text().splitlines()
    first = lines.index("    period: 2026-11") + 1
    second = len(lines)

    checked = reconciler("validate", str(path))

    assert checked.returncode == 1
    assert (
        f"desired.yaml:{second}:13: period 2026-11 is paid by two payruns"
        in checked.stdout + checked.stderr
    )
    assert f"first at line {first}" in checked.stdout + checked.stderr


def test_a_period_far_from_the_plans_date_is_a_risk(demo: SandboxServer, tmp_path: Path) -> None:
    planned = cli("plan", str(_file(tmp_path, period="2031-01")), server=demo)
    assert planned.returncode == 0, planned.stderr
    assert "risk: period 2031-01 is" in planned.stdout


def test_the_next_months_comment_shows_what_changed_first(
    demo: SandboxServer, tmp_path: Path
) -> None:
    applied = cli("apply", str(_file(tmp_path)), "--auto-approve", server=demo)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    (november,) = _paylists(demo)

    # December: Ada's rate rose, Grace left the payroll (no `pay` any more).
    december = _file(tmp_path, period="2026-12", **{"ada@example.com": "1600.00"})
    december.write_text(december.read_text().replace("    pay: 250.00\n", ""))
    markdown = cli("plan", str(december), "--format", "markdown", server=demo)

    assert markdown.returncode == 0, markdown.stderr
    comment = markdown.stdout
    since = f"what changed since period 2026-11 (paylist {november['paylistId']})"
    assert f"{since}: total 1,750.00 -> 1,600.00" in comment
    assert 'changed: "ada@example.com" 1,500.00 -> 1,600.00' in comment
    assert 'no longer paid: "grace@example.com" (was 250.00)' in comment
    # First, before any list of payments.
    assert comment.index(since) < comment.index('1,600.00  "ada@example.com"')
    document = json.loads(cli("plan", str(december), "--format", "json", server=demo).stdout)
    (payrun,) = document["payruns"]
    assert payrun["changed"]["total_before"] == "1750.00"
    assert payrun["changed"]["amount_changed"] == [
        {"email": "ada@example.com", "before": "1500.00", "after": "1600.00"}
    ]
    assert payrun["changed"]["no_longer_paid"] == [
        {"email": "grace@example.com", "amount": "250.00"}
    ]
    text = cli("plan", str(december), server=demo).stdout
    assert f"{since}: total 1,750.00 -> 1,600.00" in text


def test_export_with_pay_writes_the_newest_success_payment_for_review(
    demo: SandboxServer, tmp_path: Path
) -> None:
    first = cli("apply", str(_file(tmp_path)), "--auto-approve", server=demo)
    assert first.returncode == 0, first.stdout + first.stderr
    raised = _file(tmp_path, period="2026-12", **{"ada@example.com": "1600.00"})
    second = cli("apply", str(raised), "--auto-approve", server=demo)
    assert second.returncode == 0, second.stdout + second.stderr
    december = max(paylist["paylistId"] for paylist in _paylists(demo))

    out = tmp_path / "exported.yaml"
    exported = cli("export", "--scope-prefix", "ENG-", "--with-pay", "--out", str(out), server=demo)

    assert exported.returncode in (0, 2), exported.stderr
    text = out.read_text()
    review = "# TODO(export): review: the newest SUCCESS payment to this payee"
    ada = text[text.index("externalId: ENG-001") : text.index("externalId: ENG-002")]
    assert f'    pay: "1600.00"  {review}' in ada and f"paylist {december})" in ada
    grace = text[text.index("externalId: ENG-002") :]
    assert 'pay: "250.00"' in grace.split("  - ")[0]
    assert text.count("    pay: ") == 2  # never paid: no pay
    plain = cli("export", "--scope-prefix", "ENG-", server=demo).stdout
    assert "pay:" not in plain
    # The file it writes reads back, its pay a worker's.
    said = reconciler("validate", str(out)).stdout
    pay_lines = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("    pay:")]
    assert not [n for n in pay_lines if f"exported.yaml:{n}:" in said], said


def test_a_saved_plan_pays_the_period_as_reviewed(demo: SandboxServer, tmp_path: Path) -> None:
    key = "payrun-period-plan-key-0123456789abcdef"
    saved = tmp_path / "plan.json"
    made = cli(
        "plan", str(_file(tmp_path)), "--out", str(saved), server=demo, RECONCILER_PLAN_KEY=key
    )
    assert made.returncode == 0, made.stderr
    (record,) = json.loads(saved.read_text())["payruns"]
    assert record["period"] == "2026-11"
    assert [p["amount"] for p in record["payments"]] == ["1500.00", "250.00"]

    applied = cli("apply", str(saved), "--auto-approve", server=demo, RECONCILER_PLAN_KEY=key)

    assert applied.returncode == 0, applied.stdout + applied.stderr
    (paylist,) = _paylists(demo)
    assert paylist["total"] == 1750.0


def test_a_saved_plan_shows_the_variance_it_was_reviewed_with(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """January's plan is reviewed against November, the last period paid; December is paid
    before January's comment is made again from its saved plan: the comment still shows what
    the reviewer saw (the variance kept in the signed plan), not a comparison with December."""
    november = cli("apply", str(_file(tmp_path)), "--auto-approve", server=demo)
    assert november.returncode == 0, november.stdout + november.stderr
    (paid,) = _paylists(demo)
    for month in ("january", "december"):
        (tmp_path / month).mkdir()
    january = _file(tmp_path / "january", period="2027-01", **{"ada@example.com": "1600.00"})
    saved = tmp_path / "plan.json"
    reviewed = cli("comment", str(january), "--out", str(saved), server=demo)
    assert reviewed.returncode == 0, reviewed.stderr
    since = f"what changed since period 2026-11 (paylist {paid['paylistId']})"
    assert since in reviewed.stdout
    (record,) = json.loads(saved.read_text())["payruns"]
    assert record["variance"]["before"] == f"period 2026-11 (paylist {paid['paylistId']})"

    december = cli(
        "apply", str(_file(tmp_path / "december", period="2026-12")), "--auto-approve", server=demo
    )
    assert december.returncode == 0, december.stdout + december.stderr
    again = cli("comment", str(saved), server=demo)

    assert again.returncode == 0, again.stderr
    shown = [line for line in reviewed.stdout.splitlines() if "what changed since" in line]
    assert len(shown) == 1 and f"{since}: total 1,750.00 -> 1,850.00" in shown[0]
    assert [line for line in again.stdout.splitlines() if "what changed since" in line] == shown
    assert 'changed: "ada@example.com" 1,500.00 -> 1,600.00' in again.stdout
    assert "since period 2026-12" not in again.stdout  # December was paid since the review
