"""Two applies at once pay once: the account lock, and the payments read again before paying.

Two reviewed saved plans each pay Ada 100.00, one described `Nov 2026 retainer`, the other
`Nov 2026  retainer`: the same payment by the reconciler's identity rule, two payments to the
service (its duplicate check compares the bytes). Applied by two processes at once, the first is
held in its paying window by the sandbox's latency on POSTs: the second refuses at once, naming
the first as the lock's holder, or waits for it (`--lock-timeout`) and then finds the payment
paid. Without a common lock (two machines: another lock directory each), or when the payment is
made through the service's API, the payments read again just before the paylist is created
refuse the payrun. Over real HTTP against the sandbox; its paylists say what was paid.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from reconciler.apply.lock import AccountLocked, MachineLock
from reconciler.plan.account import Account
from reconciler.sandbox import SandboxServer
from tests.apply.support import (
    QUICKSTART,
    ROOT,
    answer_on_the_terminal,
    ask_on_a_terminal,
    cli,
    cli_env,
)
from tests.sandbox.support import Controls

PLAN_KEY = "account-lock-test-plan-key-0123456789abcdef"
ONE_SPACE, TWO_SPACES = "Nov 2026 retainer", "Nov 2026  retainer"


def _env(server: SandboxServer, locks: Path) -> dict[str, str]:
    return {
        "RECONCILER_CLIENT_ID": str(server.client_id),
        "RECONCILER_PLAN_KEY": PLAN_KEY,
        "RECONCILER_LOCK_DIR": str(locks),
    }


def _file(folder: Path, payrun_id: str, description: str) -> Path:
    path = folder / f"{payrun_id}.yaml"
    payrun = (
        f"payruns:\n  - id: {payrun_id}\n    description: {payrun_id}\n    payments:\n"
        f'      - {{email: ada@example.com, amount: "100.00", description: "{description}"}}\n'
    )
    path.write_text(QUICKSTART.read_text() + payrun, encoding="utf-8")
    return path


def _saved_plans(server: SandboxServer, folder: Path, locks: Path) -> tuple[Path, Path]:
    """The quickstart's workers applied, then two reviewed plans that each pay Ada 100.00."""
    env = _env(server, locks)
    applied = cli("apply", str(QUICKSTART), "--auto-approve", server=server, **env)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    plans = []
    for payrun_id, description in (("nov-a", ONE_SPACE), ("nov-b", TWO_SPACES)):
        out = folder / f"{payrun_id}.json"
        planned = cli(
            "plan",
            str(_file(folder, payrun_id, description)),
            "--out",
            str(out),
            server=server,
            **env,
        )
        assert planned.returncode == 0, planned.stderr
        assert "1 payrun to pay (100.00)" in planned.stdout
        plans.append(out)
    return plans[0], plans[1]


def _payments(server: SandboxServer) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {server.token}"}
    base = f"{server.base_url}/payment-agent/paylists"
    found = []
    for paylist in httpx.get(base, headers=headers).json()["content"]:
        url = f"{base}/{paylist['paylistId']}/payments"
        found += httpx.get(url, headers=headers).json()["content"]
    return found


def _balance(server: SandboxServer) -> str:
    headers = {"Authorization": f"Bearer {server.token}"}
    url = f"{server.base_url}/client-wallet/clients/{server.client_id}/wallet"
    return str(httpx.get(url, headers=headers).json()["balance"])


class _Background:
    """`reconciler ARGS` started in the background; its stderr read line by line meanwhile."""

    def __init__(self, *args: str, server: SandboxServer, **env: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "reconciler", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(server, **env),
            cwd=ROOT,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        assert self.process.stderr is not None
        threading.Thread(target=self._read, args=(self.process.stderr,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)

    def wait_for(self, text: str, seconds: float = 60) -> None:
        """Until a line of its stderr holds `text` (while it runs)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.1)
            except queue.Empty:
                assert self.process.poll() is None, "".join(self.stderr)
                continue
            self.stderr.append(line)
            if text in line:
                return
        raise AssertionError(f"never said {text!r}: {''.join(self.stderr)}")

    def finish(self) -> tuple[int, str, str]:
        assert self.process.stdout is not None
        stdout = self.process.stdout.read()
        status = self.process.wait(timeout=120)
        time.sleep(0.1)
        while not self._lines.empty():
            self.stderr.append(self._lines.get())
        return status, stdout, "".join(self.stderr)


@pytest.mark.parametrize("wait", [False, True], ids=["refused-at-once", "waits-then-paid"])
def test_two_applies_at_once_of_the_same_payment_pay_it_once(
    demo: SandboxServer, tmp_path: Path, wait: bool
) -> None:
    locks = tmp_path / "locks"
    first_plan, second_plan = _saved_plans(demo, tmp_path, locks)
    controls = Controls(demo.base_url)
    # The first apply's paylist takes 10 s to be created: it is inside its paying window
    # while the second starts, reads the account and (without a lock) pays too.
    controls.set_faults(latency_ms=10_000, methods=["POST"])
    try:
        first = _Background("apply", str(first_plan), server=demo, **_env(demo, locks))
        first.wait_for("Applying the saved plan")
        options = ["--lock-timeout", "60s"] if wait else []
        second = cli("apply", str(second_plan), *options, server=demo, **_env(demo, locks))
        status, stdout, stderr = first.finish()
    finally:
        controls.set_faults()

    assert status == 0, stdout + stderr
    assert second.returncode == 1, second.stdout + second.stderr
    if wait:
        assert "waiting up to 60 s for the lock of" in second.stderr, second.stderr
        assert f"pid {first.process.pid} on" in second.stderr
        assert "paid already in paylist" in second.stdout, second.stdout
    else:
        assert "another apply of" in second.stderr and "holds its lock" in second.stderr
        assert f"pid {first.process.pid} on" in second.stderr, second.stderr
        assert f"reconciler apply {first_plan}" in second.stderr
        assert "nothing was changed" in second.stderr and "--lock-timeout" in second.stderr
    paid = _payments(demo)
    assert [(p["worker_email"], p["amount"], p["status"]) for p in paid] == [
        ("ada@example.com", 100.0, "SUCCESS")
    ]
    assert _balance(demo) in ("9900.0", "9900.00", "9900")


def _paid_through_the_api(server: SandboxServer, description: str) -> None:
    body = {
        "description": "paid by hand",
        "idempotence_key": "paid-by-hand".ljust(32, "0"),
        "payments": [
            {"description": description, "amount": 100, "worker_email": "ada@example.com"}
        ],
    }
    headers = {"Authorization": f"Bearer {server.token}"}
    made = httpx.post(f"{server.base_url}/payment-agent/paylists", json=body, headers=headers)
    assert made.is_success, made.text


@pytest.mark.parametrize("by", ["another-machine", "the-service-api"])
def test_a_payment_paid_while_an_apply_waits_refuses_its_payrun(
    demo: SandboxServer, tmp_path: Path, by: str
) -> None:
    """No lock is shared (another machine's apply, or the service's own API): the payments
    read again just before the paylist is created find the payment, and nothing is sent."""
    _, second_plan = _saved_plans(demo, tmp_path, tmp_path / "locks")
    path = _file(tmp_path, "nov-a", ONE_SPACE)
    process, leader, seen = ask_on_a_terminal(path, demo, **_env(demo, tmp_path / "here"))
    if by == "another-machine":
        there = cli("apply", str(second_plan), server=demo, **_env(demo, tmp_path / "there"))
        assert there.returncode == 0, there.stdout + there.stderr
    else:
        _paid_through_the_api(demo, TWO_SPACES)

    status, output = answer_on_the_terminal(process, leader, seen, "yes")

    assert status == 1, output
    assert "read again just before paying" in output, output
    assert "paid already in paylist 1" in output
    assert "nothing of this payrun was paid" in output
    assert len(_payments(demo)) == 1  # Ada was paid once


def test_a_lock_says_who_holds_it_and_dies_with_its_holder(tmp_path: Path) -> None:
    account = Account.of("https://api.example.com", 7, None)
    holding = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from reconciler.apply.lock import MachineLock\n"
        "from reconciler.plan.account import Account\n"
        "with MachineLock(Path(sys.argv[1])).hold(Account.of('https://API.example.com:443/', 7,"
        " None), timeout=0):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(600)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", holding, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        # The same service, written another way: the same lock.
        with pytest.raises(AccountLocked) as locked, MachineLock(tmp_path).hold(account, timeout=0):
            pass
        assert f"pid {holder.pid} on" in str(locked.value)
        assert "client 7" in str(locked.value)
        with MachineLock(tmp_path).hold(Account.of("https://api.example.com", 8, None), timeout=0):
            pass  # another client of the service: another lock
    finally:
        holder.send_signal(signal.SIGKILL)  # dies holding it: no release, its note left behind
        holder.wait()
    started = time.monotonic()
    with MachineLock(tmp_path).hold(account, timeout=0):
        pass
    assert time.monotonic() - started < 1
