"""Money, when in doubt: refuse, say why, send nothing. Through the CLI against the sandbox.

A look-alike of a paid payment is paid before, and the plan shows its non-ASCII characters
escaped; a payment in flight (PENDING, paid with `--no-wait`) counts as paid, in a fresh plan
and when a saved plan is judged again at apply; drift keeps a FAILED payment until a payrun
pays that same payment, reads a payrun's key as a claim its content must honour, and takes a
paylist into its window by the date its money moved.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.payruns import paylist_key
from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, SEED, cli, paylist_posts, request_seq
from tests.cli import reconciler

PLAN_KEY = "money-in-doubt-test-plan-key-0123456789abcdef"


def _headers(server: SandboxServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def _payments(server: SandboxServer) -> list[dict[str, Any]]:
    base = f"{server.base_url}/payment-agent/paylists"
    found = []
    for paylist in httpx.get(base, headers=_headers(server)).json()["content"]:
        url = f"{base}/{paylist['paylistId']}/payments"
        found += httpx.get(url, headers=_headers(server)).json()["content"]
    return found


def _run(*args: str, server: SandboxServer) -> Any:
    return cli(
        *args,
        server=server,
        RECONCILER_CLIENT_ID=str(server.client_id),
        RECONCILER_PLAN_KEY=PLAN_KEY,
    )


def _payrun(payrun_id: str, *payments: tuple[str, str, str]) -> str:
    rows = "".join(
        f'      - {{email: "{email}", amount: "{amount}", description: "{description}"}}\n'
        for email, amount, description in payments
    )
    return f"  - id: {payrun_id}\n    description: {payrun_id}\n    payments:\n{rows}"


def _file(folder: Path, name: str, *payruns: str) -> Path:
    path = folder / name
    path.write_text(QUICKSTART.read_text() + "payruns:\n" + "".join(payruns), encoding="utf-8")
    return path


@pytest.fixture
def slow() -> Iterator[SandboxServer]:
    """The demo account (ada ACTIVE), whose paylists settle only when told to."""
    with SandboxServer(seed=SEED, process_delay_ms=600_000) as server:
        yield server


def _process(server: SandboxServer) -> None:
    assert httpx.post(f"{server.base_url}/_sandbox/process").status_code == 200


# --- 3. payment identity as people read it -----------------------------------------------


@pytest.mark.parametrize(
    ("paid_as", "written"),
    [
        ("January design review", "January d\u0435sign r\u0435view"),  # Cyrillic е
        ("Good work bonus", "G\u03bf\u03bfd work bonus"),  # Greek ο
        ("January design review\u2065", "January design review"),  # U+2065 on the service
        ("January  design review", "January design review"),
        # A blank glyph for a space on the service: a Hangul filler, a blank Braille pattern.
        ("January\u3164design review", "January design review"),
        ("January design\u2800review", "January design review"),
    ],
    ids=[
        "cyrillic-e",
        "greek-omicron",
        "u2065-on-the-service",
        "two-spaces",
        "hangul-filler-for-a-space",
        "blank-braille-for-a-space",
    ],
)
def test_a_look_alike_of_a_paid_payment_is_paid_before_and_nothing_is_sent(
    slow: SandboxServer, tmp_path: Path, paid_as: str, written: str
) -> None:
    # The service keeps the bytes it is sent: the first payment goes by the service's own API.
    body = {
        "description": "by hand",
        "idempotence_key": "by-hand".ljust(32, "0"),
        "payments": [{"description": paid_as, "amount": 1500, "worker_email": "ada@example.com"}],
    }
    made = httpx.post(f"{slow.base_url}/payment-agent/paylists", json=body, headers=_headers(slow))
    assert made.is_success, made.text
    _process(slow)
    second = _file(
        tmp_path, "second.yaml", _payrun("2026-12-b", ("ada@example.com", "1500.00", written))
    )
    since = request_seq(slow)
    applied = _run("apply", str(second), "--auto-approve", server=slow)
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert "paid already in paylist" in applied.stdout, applied.stdout
    assert paylist_posts(slow, since) == []
    assert len(_payments(slow)) == 1


@pytest.mark.parametrize(
    ("escape", "code"),
    [
        ("\\u2065", "U+2065"),
        ("\\u0378", "U+0378"),
        ("\\uE000", "U+E000"),
        ("\\uFFFC", "U+FFFC"),
        ("\\U00016FE4", "U+16FE4"),
        ("\\U0001D159", "U+1D159"),
    ],
)
def test_unassigned_private_use_or_ignorable_text_is_refused_at_its_line(
    tmp_path: Path, escape: str, code: str
) -> None:
    path = _file(
        tmp_path,
        "hidden.yaml",
        _payrun("2026-12-a", ("ada@example.com", "1500.00", f"January design review{escape}")),
    )
    line = (
        path.read_text()
        .splitlines()
        .index(next(row for row in path.read_text().splitlines() if escape in row))
    )
    validated = reconciler("validate", str(path))
    assert validated.returncode == 1, validated.stdout
    found = [row for row in validated.stdout.splitlines() if f"holds {code}" in row]
    assert len(found) == 1, validated.stdout
    assert found[0].startswith(f"{path}:{line + 1}:"), validated.stdout
    assert "Traceback" not in validated.stderr


def test_the_plan_shows_non_ascii_payment_text_escaped(slow: SandboxServer, tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "bonus.yaml",
        _payrun("2026-12-a", ("ada@example.com", "1500.00", "J\u0430nuary r\u00e9view")),
    )
    for fmt in ("text", "markdown"):
        planned = _run("plan", str(path), "--format", fmt, server=slow)
        assert planned.returncode == 0, planned.stdout + planned.stderr
        assert '"J\\u0430nuary r\\u00e9view"' in planned.stdout, planned.stdout
        assert "\u0430" not in planned.stdout


# --- 4. in flight counts as paid -----------------------------------------------------------


def test_a_pending_payment_is_paid_before_in_a_fresh_plan_and_in_a_saved_one(
    slow: SandboxServer, tmp_path: Path
) -> None:
    """Two pull requests, each paying ada 1,500.00 for January's design review (one written
    with two spaces), both planned and saved; the first applied with --no-wait: the second is
    refused, at plan and at apply of its saved plan, and nothing of it is sent."""
    one = _file(
        tmp_path,
        "one.yaml",
        _payrun("2027-01-pr1", ("ada@example.com", "1500.00", "January  design review")),
    )
    two = _file(
        tmp_path,
        "two.yaml",
        _payrun("2027-01-pr2", ("ada@example.com", "1500.00", "January design review")),
    )
    synced = _run("apply", str(QUICKSTART), "--auto-approve", server=slow)
    assert synced.returncode == 0, synced.stdout + synced.stderr  # only the payruns change now
    plans = {}
    for path in (one, two):
        out = tmp_path / f"{path.stem}.plan.json"
        saved = _run("plan", str(path), "--out", str(out), server=slow)
        assert saved.returncode == 0, saved.stdout + saved.stderr
        plans[path.stem] = out
    first = _run("apply", str(plans["one"]), "--no-wait", server=slow)
    assert first.returncode == 0, first.stdout + first.stderr
    assert [p["status"] for p in _payments(slow)] == ["PENDING"]

    fresh = _run("plan", str(two), "--format", "json", server=slow)
    (decision,) = json.loads(fresh.stdout)["payruns"]
    assert decision["state"] == "refused", decision
    assert "still PENDING" in " ".join(decision["reasons"])

    since = request_seq(slow)
    second = _run("apply", str(plans["two"]), server=slow)
    assert second.returncode == 1, second.stdout + second.stderr
    assert "still PENDING: a payment in flight counts as paid" in second.stdout, second.stdout
    assert paylist_posts(slow, since) == []
    _process(slow)
    assert [p["status"] for p in _payments(slow)] == ["SUCCESS"]  # ada was paid once


# --- 5. drift keeps failures and reads keys as claims --------------------------------------


def _money_account(tmp_path: Path, delay_ms: int) -> SandboxServer:
    """ada and grace ACTIVE (tests/plan/test_money_drift.py's account), a 10,000.00 wallet."""
    from tests.plan.test_money_drift import _activate

    server = SandboxServer(process_delay_ms=delay_ms)
    server.__enter__()
    _activate(server, tmp_path)
    return server


@pytest.fixture
def quick(tmp_path: Path) -> Iterator[SandboxServer]:
    server = _money_account(tmp_path, 0)
    yield server
    server.__exit__(None, None, None)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[SandboxServer]:
    server = _money_account(tmp_path, 600_000)
    yield server
    server.__exit__(None, None, None)


def _money_file(tmp_path: Path, *payruns: str) -> Path:
    from tests.plan.test_money_drift import WORKERS

    path = tmp_path / "desired.yaml"
    path.write_text(WORKERS + ("payruns:\n" + "".join(payruns) if payruns else ""))
    return path


def _money(server: SandboxServer, path: Path, *args: str) -> dict[str, Any]:
    drift = _run("drift", str(path), "--format", "json", *args, server=server)
    assert drift.returncode == 0, drift.stdout + drift.stderr
    money: dict[str, Any] = json.loads(drift.stdout)["money"]
    return money


def test_a_failed_payment_stays_reported_until_a_payrun_pays_that_same_payment(
    quick: SandboxServer, tmp_path: Path
) -> None:
    november = _payrun(
        "2026-11-retainers",
        ("ada@example.com", "5000.00", "November retainer"),
        ("grace@example.com", "6000.00", "November retainer"),
    )
    path = _money_file(tmp_path, november)
    paid = _run("apply", str(path), "--auto-approve", "--force", server=quick)
    assert paid.returncode == 1, paid.stdout + paid.stderr  # grace's 6,000.00 FAILED
    topped = httpx.post(
        f"{quick.base_url}/_sandbox/clients/{quick.client_id}/top-up", json={"amount": 10000}
    )
    assert topped.status_code == 201, topped.text
    december = _payrun("2026-12-grace", ("grace@example.com", "6000.00", "December retainer"))
    path = _money_file(tmp_path, november, december)
    assert _run("apply", str(path), "--auto-approve", server=quick).returncode == 0

    (failed,) = _money(quick, path)["failed"]["payments"]
    assert (failed["email"], failed["amount"]) == ("grace@example.com", "6000.00")
    strict = _run("drift", str(path), "--strict", server=quick)
    assert strict.returncode == 2, strict.stdout + strict.stderr
    assert "1 failed payment (6,000.00)" in strict.stdout

    # The retry: the same payment (two spaces are one) in a new payrun of the files.
    retry = _payrun("2026-12-retry", ("grace@example.com", "6000.00", "November  retainer"))
    path = _money_file(tmp_path, november, december, retry)
    retried = _run("apply", str(path), "--auto-approve", server=quick)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert _money(quick, path)["failed"]["payments"] == []
    assert _run("drift", str(path), "--strict", server=quick).returncode == 0


def test_a_paylist_under_a_payruns_key_with_other_content_is_untraced(
    quick: SandboxServer, tmp_path: Path
) -> None:
    from tests.apply.test_payruns import NOVEMBER

    december = _payrun("2026-12-retainers", ("ada@example.com", "1000.00", "December retainer"))
    path = _money_file(tmp_path)
    path.write_text(path.read_text() + NOVEMBER + december)
    only_november = tmp_path / "november.yaml"
    only_november.write_text(_money_file(tmp_path).read_text() + NOVEMBER)
    path.write_text(only_november.read_text() + december)
    assert _run("apply", str(only_november), "--auto-approve", server=quick).returncode == 0
    body = {
        "description": "2026-12-retainers",
        "idempotence_key": paylist_key("2026-12-retainers"),
        "payments": [
            {"description": "December retainer", "amount": 777, "worker_email": "grace@example.com"}
        ],
    }
    made = httpx.post(
        f"{quick.base_url}/payment-agent/paylists", json=body, headers=_headers(quick)
    )
    assert made.is_success, made.text
    _process(quick)
    claimed = made.json()["id"]

    money = _money(quick, path)
    assert [p["paylist_id"] for p in money["untraced"]["paylists"]] == [claimed]
    assert money["paid"] == {"count": 1, "total": "1750.00"}  # November's alone
    planned = _run("plan", str(path), "--format", "json", server=quick)
    states = {p["id"]: p["state"] for p in json.loads(planned.stdout)["payruns"]}
    assert states["2026-12-retainers"] == "conflict"
    strict = _run("drift", str(path), "--strict", server=quick)
    assert strict.returncode == 2
    assert "untraced 1 paylist (777.00)" in strict.stdout


@pytest.mark.parametrize("payruns", [True, False], ids=["with-payruns", "window-only"])
def test_a_paylist_made_36_days_ago_and_settled_today_is_in_the_window(
    held: SandboxServer, tmp_path: Path, payruns: bool
) -> None:
    from tests.apply.test_payruns import NOVEMBER

    path = _money_file(tmp_path)
    if payruns:
        path.write_text(path.read_text() + NOVEMBER)
        assert _run("apply", str(path), "--auto-approve", "--no-wait", server=held).returncode == 0
    body = {
        "description": "Old bonus",
        "idempotence_key": "old-bonus".ljust(32, "0"),
        "payments": [{"description": "Old bonus", "amount": 40, "worker_email": "ada@example.com"}],
    }
    made = httpx.post(f"{held.base_url}/payment-agent/paylists", json=body, headers=_headers(held))
    assert made.is_success, made.text
    old = made.json()["id"]
    when = (datetime.now(UTC) - timedelta(days=36)).isoformat()
    dated = httpx.post(
        f"{held.base_url}/_sandbox/paylists/{old}/creation-date", json={"creation_date": when}
    )
    assert dated.status_code == 200, dated.text
    _process(held)  # settled today

    window = (
        () if payruns else ("--money-since", f"{datetime.now(UTC) - timedelta(days=35):%Y-%m-%d}")
    )
    money = _money(held, path, *window)
    assert [p["paylist_id"] for p in money["untraced"]["paylists"]] == [old]


def test_two_payruns_of_one_plan_paying_the_same_payment_pay_it_once(
    slow: SandboxServer, tmp_path: Path
) -> None:
    """The same payment (a Greek ο for a Latin o) in two new payruns: the files allow it (a
    retry of a FAILED payment is written so), the plan pays it once, by the first payrun."""
    path = _file(
        tmp_path,
        "twice.yaml",
        _payrun("2027-01-a", ("ada@example.com", "1500.00", "Good work bonus")),
        _payrun("2027-01-b", ("ada@example.com", "1500.00", "G\u03bfod work bonus")),
    )
    planned = _run("plan", str(path), "--format", "json", server=slow)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    states = {p["id"]: (p["state"], p["reasons"]) for p in json.loads(planned.stdout)["payruns"]}
    assert states["2027-01-a"] == ("to_pay", [])
    state, reasons = states["2027-01-b"]
    assert state == "refused"
    assert "payrun '2027-01-a' of this plan pays the same payment" in " ".join(reasons)
    since = request_seq(slow)
    applied = _run("apply", str(path), "--auto-approve", "--no-wait", server=slow)
    assert applied.returncode == 1, applied.stdout + applied.stderr  # the second is refused
    assert len(paylist_posts(slow, since)) == 1
    assert len(_payments(slow)) == 1


def test_the_same_payment_twice_in_one_payrun_is_still_an_error(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "twice.yaml",
        _payrun(
            "2027-01-a",
            ("ada@example.com", "1500.00", "Good work bonus"),
            ("ADA@example.com", "1500.00", "G\u03bfod  work bonus"),
        ),
    )
    validated = reconciler("validate", str(path))
    assert validated.returncode == 1, validated.stdout
    assert "is given twice in one payrun" in validated.stdout
