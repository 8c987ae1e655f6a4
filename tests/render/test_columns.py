"""A payroll of 300 contractors at 80 columns: `COLUMNS`, when set, is the width (terminal or
not), and the text plan, the apply's ledger and its summary fit it without cutting a value;
with no terminal and no `COLUMNS` (a CI log) each item stays one line.

The ledger names each payment's payee (the externalId it was written with), amount and paylist.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

COUNT = 300
NAMES = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Margaret")


def _email(n: int) -> str:
    return f"{NAMES[n % 8].lower()}.contractor-{n:04}@northwind-consulting.example"


@pytest.fixture
def payroll(tmp_path: Path) -> Iterator[tuple[SandboxServer, Path]]:
    folder = tmp_path
    seed, state = ["workers:"], ['version: 1\nscope:\n  externalIdPrefix: "CW-"\nworkers:']
    payments = []
    for n in range(1, COUNT + 1):
        person = f"firstName: {NAMES[n % 8]}, lastName: Contractor{n}, email: {_email(n)}"
        seed.append(f"  - {{externalId: CW-{n:04}, {person}, country: GB, status: ACTIVE}}")
        state.append(
            f"  - {{externalId: CW-{n:04}, typeOfWorker: Worker, workerName: {NAMES[n % 8]},"
            f" workerSurname: Contractor{n}, workerEmail: {_email(n)}, countryIso: GB}}"
        )
        payments.append(
            f'      - {{worker: CW-{n:04}, amount: "{7400 + (n % 7) * 125}.00",'
            f' description: "December 2026 retainer, invoice INV-2026-12-{n:04}"}}'
        )
    (folder / "seed.yaml").write_text("\n".join(seed) + "\n")
    payrun = "payruns:\n  - id: 2026-12-contractors\n    description: December 2026\n"
    path = folder / "payroll.yaml"
    path.write_text("\n".join(state) + "\n" + payrun + "    payments:\n" + "\n".join(payments))
    with SandboxServer(seed=folder / "seed.yaml", process_delay_ms=0) as server:
        top_up = httpx.post(
            f"{server.base_url}/_sandbox/clients/{server.client_id}/top-up",
            json={"amount": 3_000_000},
        )
        assert top_up.status_code == 201, top_up.text
        yield server, path  # each test its own account: the apply pays the payrun


def _run(server: SandboxServer, *args: str, **env: str) -> list[str]:
    done = reconciler(*args, server=server, RECONCILER_CLIENT_ID=str(server.client_id), **env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout.splitlines()


def test_columns_80_fits_the_plan_of_a_payrun(payroll: tuple[SandboxServer, Path]) -> None:
    server, path = payroll
    lines = _run(server, "plan", str(path), COLUMNS="80")
    assert [line for line in lines if len(line) > 80] == []
    text = "\n".join(lines)
    assert '"ada.contractor-0264@northwind-consulting.example"' in text  # no value cut
    assert "Plan: 0 to invite" in text and "2,332,875.00" in text.replace("\n", " ")
    payment = next(i for i, line in enumerate(lines) if "contractor-0264@" in line)
    description = lines[payment + 1]  # continues under the payee, never ragged
    assert description.strip() == '"December 2026 retainer, invoice INV-2026-12-0264"'
    assert description.index('"') == lines[payment].index('"')


def test_without_a_terminal_or_columns_each_payment_is_one_line(
    payroll: tuple[SandboxServer, Path],
) -> None:
    server, path = payroll
    lines = _run(server, "plan", str(path))
    payments = [line for line in lines if re.match(r"\s+\+\s+[\d,]+\.\d\d  ", line)]
    assert len(payments) == COUNT
    assert all("INV-2026-12-" in line for line in payments), [
        p for p in payments if "INV" not in p
    ][:3]


def test_the_ledger_names_payee_amount_and_paylist_and_fits_80_columns(
    payroll: tuple[SandboxServer, Path],
) -> None:
    """A saved plan applied at COLUMNS=80: its replay (on stderr) and its ledger fit."""
    server, path = payroll
    saved = path.with_name("plan.json")
    key = {"RECONCILER_PLAN_KEY": "columns-test-plan-key-0123456789abcdef"}
    _run(server, "plan", str(path), "--out", str(saved), **key)
    done = reconciler(
        "apply",
        str(saved),
        server=server,
        RECONCILER_CLIENT_ID=str(server.client_id),
        COLUMNS="80",
        **key,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    replay = [line for line in done.stderr.splitlines() if not line.startswith("{")]  # no log
    assert any("will be paid" in line for line in replay), replay
    assert [line for line in lines + replay if len(line) > 80] == []
    row = lines.index('paylist["2026-12-contractors"].payments[264]  pay  applied')
    # A saved plan keeps the externalId each payment was written with: its ledger names the
    # payee as a fresh plan's does (`test_the_ledger_of_a_file_names_the_externalid`).
    assert re.fullmatch(r"    payee CW-0264  amount 8,025\.00  paylist \d+", lines[row + 1])
    assert lines[-1] == f"Apply complete: {COUNT} applied."


def test_the_ledger_of_a_file_names_the_externalid(payroll: tuple[SandboxServer, Path]) -> None:
    server, path = payroll
    lines = _run(server, "apply", str(path), "--auto-approve", COLUMNS="80")
    assert [line for line in lines if len(line) > 80] == []
    row = lines.index('paylist["2026-12-contractors"].payments[264]  pay  applied')
    assert re.fullmatch(r"    payee CW-0264  amount 8,025\.00  paylist \d+", lines[row + 1])
