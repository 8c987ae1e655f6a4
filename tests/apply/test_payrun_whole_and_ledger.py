"""A payrun is paid whole or not at all, a key is only a claim, and the ledger survives (issue 38).

Through the CLI against the sandbox: its fault controls make the service fail while apply runs,
and the test acts as a second client between apply's attempts (another actor paying under the
payrun's key, a payee's agreement ending), watching the sandbox's request log to know when.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.payruns import paylist_key
from reconciler.sandbox import SandboxServer
from tests.apply.support import NOVEMBER, QUICKSTART, SEED, cli, cli_env, paylist_posts, request_seq
from tests.cli import ROOT
from tests.sandbox.support import Controls

PAYLISTS = "/payment-agent/paylists"
JSON = ("--format", "json")
FEW_RETRIES = {"RECONCILER_RETRY_ATTEMPTS": "4", "RECONCILER_RETRY_SECONDS": "60"}


def _headers(server: SandboxServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def _paylists(server: SandboxServer) -> list[dict[str, Any]]:
    answer = httpx.get(f"{server.base_url}{PAYLISTS}", headers=_headers(server))
    return list(answer.json()["content"])


def _desired(tmp_path: Path, payruns: str) -> Path:
    path = tmp_path / "desired.yaml"
    path.write_text(QUICKSTART.read_text(encoding="utf-8") + payruns, encoding="utf-8")
    return path


def _converged(server: SandboxServer, tmp_path: Path) -> None:
    """The quickstart's worker changes made first, so apply's only POSTs are paylists."""
    workers = tmp_path / "workers.yaml"
    workers.write_text(QUICKSTART.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli("apply", str(workers), "--auto-approve", server=server).returncode == 0


def _apply_while(
    server: SandboxServer, path: Path, marker: str, act: Callable[[], None], **env: str
) -> subprocess.CompletedProcess[str]:
    """`apply PATH --auto-approve --format json`, calling `act` once, as soon as apply writes a
    line holding `marker` on stderr (a second client acting between apply's steps)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", "apply", str(path), "--auto-approve", *JSON],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(server, **env),
        cwd=ROOT,
    )
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if marker in line:
            act()
            break
    stdout, stderr = process.communicate(timeout=180)
    Controls(server.base_url).set_faults()
    assert any(marker in line for line in seen), "".join(seen) + stderr
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


#: The progress line apply writes just before it sends the first paylist.
PAYING = '"phase": "paying"'


def _pay_rows(ledger_json: str) -> dict[str, dict[str, Any]]:
    ledger = json.loads(ledger_json)
    return {row["address"]: row for row in ledger["changes"] if row["action"] == "pay"}


BONUS = """\
payruns:
  - id: bonus-2026-11
    description: November bonus
    payments:
      - {worker: ENG-001, amount: "500.00", description: November bonus}
"""


def test_after_an_unclear_creation_a_paylist_under_the_key_with_other_content_is_not_paid(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """POSTs meet 503s; between two attempts another actor creates a paylist under the key
    (9.99 to grace@), and later POSTs are dropped: the read-back finds the key, but not the
    payrun's content, so the ledger says the payrun was not paid, and apply exits 1."""
    _converged(demo, tmp_path)
    path = _desired(tmp_path, BONUS)
    controls = Controls(demo.base_url)
    # The first POST is held 6 s before its 503: the other actor acts meanwhile, and every
    # later POST of apply meets that actor's paylist, its answer dropped (a 409 without body).
    controls.set_faults(error_rate=1, latency_ms=6000, methods=["POST"])

    def another_actor() -> None:
        time.sleep(2)  # apply's first POST is on its way, its 503 drawn
        controls.set_faults(drop_rate=1, methods=["POST"])
        body = {
            "description": "November bonus",
            "idempotence_key": paylist_key("bonus-2026-11"),
            "payments": [{"description": "x", "amount": 9.99, "worker_email": "grace@example.com"}],
        }
        with contextlib.suppress(httpx.HTTPError):  # its answer is dropped too; it was made
            httpx.post(f"{demo.base_url}{PAYLISTS}", json=body, headers=_headers(demo))
        assert [p["total"] for p in _paylists(demo)] == [9.99]

    applied = _apply_while(demo, path, PAYING, another_actor, **FEW_RETRIES)

    rows = _pay_rows(applied.stdout)
    assert list(rows) == ['paylist["bonus-2026-11"]'], applied.stdout + applied.stderr
    row = rows['paylist["bonus-2026-11"]']
    assert row["outcome"] == "failed", applied.stdout + applied.stderr
    assert "holds this payrun's key but other content" in row["detail"], row
    assert "untraced money" in row["detail"], row
    assert applied.returncode == 1
    assert [p["total"] for p in _paylists(demo)] == [9.99]  # ada was never paid


def _split(first: str) -> str:
    """A payrun of 1,100 payments (2 parts): the first to `first`, the rest to grace@."""
    lines = [f'      - {{email: {first}, amount: "1.00", description: Bonus 0}}']
    lines += [
        f'      - {{email: grace@example.com, amount: "1.00", description: Bonus {n}}}'
        for n in range(1, 1100)
    ]
    return "payruns:\n  - id: bonus-split\n    description: Split bonus\n    payments:\n" + (
        "\n".join(lines) + "\n"
    )


def test_a_split_payrun_with_a_refused_part_is_refused_whole(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """The first payee (alan@, ENG-003) is not ACTIVE: part 1 is refused, and so is part 2."""
    path = _desired(tmp_path, _split("alan@example.com"))
    planned = cli("plan", str(path), "--format", "json", server=demo)
    payruns = json.loads(planned.stdout)["payruns"]
    assert [p["state"] for p in payruns] == ["refused", "refused"], planned.stdout
    assert "a payrun is paid whole or not at all" in payruns[1]["reasons"][0]
    since = request_seq(demo)

    applied = cli("apply", str(path), "--auto-approve", "--format", "json", server=demo)

    rows = _pay_rows(applied.stdout)
    assert [row["outcome"] for row in rows.values()] == ["failed", "failed"], applied.stdout
    assert applied.returncode == 1
    assert paylist_posts(demo, since) == []


@pytest.fixture
def with_temp(tmp_path: Path) -> Iterator[SandboxServer]:
    """The demo account with one more ACTIVE worker, temp@ (outside the files)."""
    seed = tmp_path / "seed.yaml"
    extra = (
        "  - firstName: Tem\n    lastName: Porary\n    email: temp@example.com\n"
        "    country: DE\n    status: ACTIVE\n"
    )
    seed.write_text(SEED.read_text(encoding="utf-8").replace("webhook:\n", extra + "webhook:\n", 1))
    with SandboxServer(seed=seed, process_delay_ms=0) as server:
        yield server


def test_a_part_the_service_refuses_between_attempts_stops_the_rest_of_the_payrun(
    with_temp: SandboxServer, tmp_path: Path
) -> None:
    """Every pre-flight passes; part 1's POST meets a 503, and before its next attempt a
    second client ends temp@'s agreement, so the service refuses part 1: part 2 is not sent."""
    server = with_temp
    _converged(server, tmp_path)
    path = _desired(tmp_path, _split("temp@example.com"))
    answer = httpx.get(
        f"{server.base_url}/contract/workers",
        params={"email": "temp@example.com"},
        headers=_headers(server),
    )
    temp = int(answer.json()["agreementId"])
    controls = Controls(server.base_url)
    controls.set_faults(error_rate=1, methods=["POST"])

    def end_temp() -> None:
        time.sleep(0.5)  # apply's first POST meets its 503, or will: the faults stay till now
        controls.move_agreement(temp, "ENDED")
        controls.set_faults()

    applied = _apply_while(server, path, PAYING, end_temp, **FEW_RETRIES)

    rows = _pay_rows(applied.stdout)
    assert rows['paylist["bonus-split"][1]']["outcome"] == "failed", applied.stdout
    second = rows['paylist["bonus-split"][2]']
    assert second["outcome"] == "failed", applied.stdout
    assert "an earlier part of this payrun was not paid" in second["detail"]
    assert applied.returncode == 1
    assert _paylists(server) == []


def test_a_payrun_paid_in_part_before_is_shown_as_such_with_what_to_do(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """Part 2 of a split payrun was paid (by an apply before payruns were paid whole), part 1
    never: the plan says it was paid in part, sends nothing, and says what to do."""
    path = _desired(tmp_path, _split("ada@example.com"))
    part_two = [
        {"description": f"Bonus {n}", "amount": 1, "worker_email": "grace@example.com"}
        for n in range(1000, 1100)
    ]
    body = {
        "description": "Split bonus",
        "idempotence_key": paylist_key("bonus-split", 2),
        "payments": part_two,
    }
    made = httpx.post(f"{demo.base_url}{PAYLISTS}", json=body, headers=_headers(demo))
    assert made.is_success, made.text

    planned = cli("plan", str(path), "--format", "json", server=demo)

    payruns = json.loads(planned.stdout)["payruns"]
    assert [p["state"] for p in payruns] == ["conflict", "conflict"], planned.stdout
    reason = payruns[0]["reasons"][0]
    assert "this payrun was paid in part" in reason, reason
    assert "add a new payrun with the payments of the missing part" in reason, reason


def test_a_failed_read_while_settling_keeps_the_ledger(tmp_path: Path) -> None:
    """GETs fail once the first paylist is created: apply still prints the ledger (JSON here)
    of what it sent, the invitation and both paylists, with an unknown row for each paylist
    it could not follow, and exits 1."""
    path = _desired(tmp_path, NOVEMBER + BONUS.removeprefix("payruns:\n"))
    with SandboxServer(seed=SEED, process_delay_ms=5000) as server:
        controls = Controls(server.base_url)

        def reads_fail() -> None:
            time.sleep(0.5)  # the paylists are being sent; they settle 5 s after
            controls.set_faults(error_rate=1, methods=["GET"])

        applied = _apply_while(server, path, PAYING, reads_fail, RECONCILER_RETRY_ATTEMPTS="2")
        held = _paylists(server)

    ledger = json.loads(applied.stdout)
    rows = {row["address"]: row for row in ledger["changes"]}
    assert rows['worker["ENG-004"]']["outcome"] == "applied", applied.stdout
    pays = _pay_rows(applied.stdout)
    assert set(pays) == {'paylist["2026-11-contractors"]', 'paylist["bonus-2026-11"]'}, pays
    for row in pays.values():
        assert row["outcome"] == "skipped" and row["detail"].startswith("unknown:"), row
        assert "run `reconciler plan` to see" in row["detail"], row
    assert applied.returncode == 1
    assert len(held) == 2
