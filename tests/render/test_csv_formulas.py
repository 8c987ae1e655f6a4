"""Every CSV the reconciler writes keeps a spreadsheet from running a cell as a formula.

A description, a name or a job title comes from whoever wrote it in the service; a cell that
starts with `=`, `+`, `-`, `@`, a tab or a carriage return is run by a spreadsheet opening the
CSV (OWASP's "CSV Injection"). Each such text cell is written with a `'` before it; amounts,
counts and times stay plain, a withdrawal's `-12.50` too. Run as a user runs the commands,
against the sandbox over real HTTP.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import httpx

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler
from tests.sandbox.paying import active_worker, new_key, post_json, process
from tests.sandbox.support import Controls

#: Each description as the service holds it, and as the CSV must write it.
DESCRIPTIONS = {
    '=HYPERLINK("https://evil.example.com","invoice")': (
        '\'=HYPERLINK("https://evil.example.com","invoice")'
    ),
    "+1+1": "'+1+1",
    "-2+3": "'-2+3",
    "@SUM(A1:A9)": "'@SUM(A1:A9)",
    "\t=1+1": "'\t=1+1",
    "A plain one - with a dash inside": "A plain one - with a dash inside",
}


def _csv(sandbox: SandboxServer, *args: str) -> list[dict[str, str]]:
    result = reconciler(*args, "--format", "csv", server=sandbox)
    assert result.returncode == 0, result.stderr
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_no_csv_cell_runs_as_a_formula_and_amounts_stay_numbers(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    active_worker(api, controls, workerEmail="ada@example.com", jobTitle="=cmd|' /C calc'!A0")
    body = {
        "description": "@paylist",
        "idempotence_key": new_key(),
        "payments": [
            {"worker_email": "ada@example.com", "amount": Decimal("12.50"), "description": text}
            for text in DESCRIPTIONS
        ],
    }
    answer = post_json(api, "/payment-agent/paylists", body)
    assert answer.status_code == 200, answer.text
    process(controls)

    payments = _csv(sandbox, "payments", "--since", "2020-01-01")
    assert sorted(row["description"] for row in payments) == sorted(DESCRIPTIONS.values())
    assert {row["amount"] for row in payments} == {"12.50"}
    register = _csv(sandbox, "report")
    assert sorted(row["description"] for row in register) == sorted(DESCRIPTIONS.values())
    assert {row["amount"] for row in register} == {"12.50"}
    assert [row["description"] for row in _csv(sandbox, "paylists")] == ["'@paylist"]
    workers = _csv(sandbox, "workers")
    assert [row["job_title"] for row in workers] == ["'=cmd|' /C calc'!A0"]
    journal = _csv(sandbox, "transactions")
    withdrawals = [row["amount"] for row in journal if row["operation"] == "WITHDRAWAL"]
    assert withdrawals == ["-12.50"] * len(DESCRIPTIONS)  # a number, not text to neutralise
