"""The pull-request comment of a large plan, through the CLI against the sandbox: risk first.

A reviewer must see every inactivation, the webhook change and who is paid how much, whatever
the number of invitations; only the low-risk tail is cut, and the comment says what it left
out and where the full plan is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.render.comment_body import GITHUB_BODY_LIMIT
from reconciler.sandbox import SandboxServer
from tests.gitops.support import reconciler

INACTIVATED = [f"REV-9{n:03d}" for n in range(1, 5)]
PAYEES = [("payee-1@example.com", "1200.00"), ("payee-2@example.com", "87.50"),
          ("payee-3@example.com", "4000.10")]  # fmt: skip


def _seed_worker(external_id: str | None, email: str) -> str:
    head = f"  - externalId: {external_id}\n" if external_id else "  - firstName: X\n"
    rest = "" if not external_id else "    firstName: X\n"
    return (
        head + rest + f"    lastName: Y\n    email: {email}\n    country: GB\n    status: ACTIVE\n"
    )


def _desired_worker(n: int) -> str:
    return (
        f"  - externalId: REV-{n:05d}\n    typeOfWorker: Worker\n    workerName: Ada\n"
        f"    workerSurname: Lovelace\n    workerEmail: new-{n:05d}@example.com\n"
        "    countryIso: GB\n"
    )


def _payrun(payments: list[tuple[str, str]]) -> str:
    lines = ["payruns:", "  - id: 2026-12-contractors", "    description: December contractors",
             "    payments:"]  # fmt: skip
    lines += [f'      - {{email: {e}, amount: "{a}", description: December}}' for e, a in payments]
    return "\n".join(lines) + "\n"


def _account(tmp_path: Path, payees: list[str]) -> Path:
    seed = tmp_path / "seed.yaml"
    workers = [_seed_worker(external_id, f"{external_id.lower()}@example.com")
               for external_id in INACTIVATED]  # fmt: skip
    workers += [_seed_worker(f"PAY-{n:05d}", email) for n, email in enumerate(payees)]
    seed.write_text(
        "workers:\n" + "".join(workers)
        + "webhook:\n  url: https://hooks.example.com/old\n  event_types: [KYC]\n"
    )  # fmt: skip
    return seed


def _file(tmp_path: Path, invitations: int, payments: list[tuple[str, str]]) -> Path:
    path = tmp_path / "desired.yaml"
    path.write_text(
        'version: 1\nscope:\n  externalIdPrefix: "REV-"\npolicy:\n  prune: true\n'
        "  maxInactivations: 10\n"
        "webhook:\n  url: https://hooks.example.com/new\n  event_types: [KYC, PAYMENT]\n"
        + ("workers:\n" if invitations else "workers: []\n")
        + "".join(_desired_worker(n) for n in range(invitations))
        + _payrun(payments)
    )
    return path


@pytest.fixture
def big_account(tmp_path: Path) -> Iterator[SandboxServer]:
    seed = _account(tmp_path, [email for email, _ in PAYEES])
    with SandboxServer(seed=seed, process_delay_ms=0) as server:
        yield server


def test_3000_invitations_leave_every_risky_line_in_the_comment(
    big_account: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path, 3000, PAYEES)
    result = reconciler("comment", str(path), server=big_account)
    body = result.stdout

    assert result.returncode == 0, result.stderr
    assert len(body) <= GITHUB_BODY_LIMIT
    for external_id in INACTIVATED:
        assert f'worker["{external_id}"] will be inactivated' in body
    assert "webhook will be updated in place" in body
    # The old URL's path may be a credential the file no longer writes: host and fingerprint.
    masked = '"https://hooks.example.com/\u2026 (fingerprint b6115823)"'
    assert f'url: {masked} -> "https://hooks.example.com/new"' in body
    assert "hooks.example.com/old" not in body
    for email, amount in PAYEES:
        assert re.search(rf"\+\s+{float(amount):,.2f}  \"{re.escape(email)}\"", body), email
    # Risk first: inactivations, the webhook and the payrun come before any invitation.
    order = [body.index(s) for s in ("Inactivations and", "<summary>Webhook", "Payruns to pay",
                                      "<summary>Invitations")]  # fmt: skip
    assert order == sorted(order)
    shown = body.count("will be invited")
    note = re.search(
        r"Not shown here, to fit GitHub's comment limit: ([\d,]+) of 3,000 invit", body
    )
    assert note is not None and int(note[1].replace(",", "")) == 3000 - shown
    assert "job summary" in body


def test_a_payrun_of_3000_payments_names_its_largest_payments(tmp_path: Path) -> None:
    payees = [f"p{n:05d}@example.com" for n in range(3000)]
    amounts = [f"{10 + n % 997}.{n % 100:02d}" for n in range(3000)]
    payments = list(zip(payees, amounts, strict=True))
    with SandboxServer(seed=_account(tmp_path, payees), process_delay_ms=0) as server:
        result = reconciler("comment", str(_file(tmp_path, 0, payments)), server=server)
    body = result.stdout

    assert result.returncode == 0, result.stderr
    assert len(body) <= GITHUB_BODY_LIMIT
    # Paid as three paylists of 1,000 (the service's limit): each with its count and total.
    for part in range(3):
        chunk = amounts[part * 1000 : (part + 1) * 1000]
        total = sum(float(a) for a in chunk)
        assert (
            f'paylist["2026-12-contractors"][{part + 1}] (part {part + 1} of 3) will be paid: '
            f"1,000 payments, total {total:,.2f}" in body
        )
    assert "Payruns to pay (1, in 3 paylists)" in body  # one payrun of three parts
    assert body.count("the 10 largest of 1,000 payments") == 3
    largest = sorted(payments, key=lambda p: (-float(p[1]), p[0]))[:10]
    for email, amount in largest:
        assert re.search(rf"\+\s+{float(amount):,.2f}  \"{email}\"", body), (email, amount)
    assert body.count('"December"\n') < 100  # not every payment: the largest of each part
    # Every payee is new to this account (nothing was ever paid): 50 a part are named.
    assert body.count("1,000 payees new to this account") == 3
    assert body.count("and 950 more new payees") == 3


def _refused_payruns(runs: int, payments: int) -> str:
    """Payruns to payees the account does not have: each is refused with a reason a payment."""
    lines = []
    for run in range(runs):
        lines += [f"  - id: refused-{run:03d}", "    description: Never paid", "    payments:"]
        lines += [
            f'      - {{email: nobody-{run}-{n}@example.com, amount: "1.00", description: "{n}"}}'
            for n in range(payments)
        ]
    return "\n".join(lines) + "\n"


def test_many_refused_payruns_cannot_push_the_inactivations_out_of_the_comment(
    big_account: SandboxServer, tmp_path: Path
) -> None:
    """Refused payruns pay nothing and cost a pull-request author nothing to write; their
    reasons once filled the comment (the payruns table alone ran past GitHub's limit), so the
    inactivations and the webhook change were cut away with no word of it."""
    path = _file(tmp_path, 0, PAYEES)
    path.write_text(path.read_text() + _refused_payruns(60, 100))
    result = reconciler("comment", str(path), server=big_account)
    body = result.stdout

    assert result.returncode == 0, result.stderr
    assert len(body) <= GITHUB_BODY_LIMIT
    for external_id in INACTIVATED:
        assert f'worker["{external_id}"] will be inactivated' in body
    assert "webhook will be updated in place" in body
    assert "Even the risky changes do not fit in a comment" in body
    assert re.search(r"Not shown here, to fit GitHub's comment limit: \d+ of 60 conflicts", body)
    assert "and 97 more reasons, listed below |" in body  # the table's cells are bounded too
    assert "| 11 more paylists | | 1,100.00 |" in body  # 61 payruns: 50 rows, then a count
