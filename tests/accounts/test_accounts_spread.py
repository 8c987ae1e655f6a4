"""Accounts spread over processes (`reconciler.accounts.spread`): the same output as one
process, an account whose process dies fails alone, and the secrets a process learns reach
the output's guard."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.accounts.support import Account, environment, run, seed_live, write_accounts, write_state
from tests.cli import user_environment
from tests.sandbox.support import service_client

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or (os.cpu_count() or 1) == 1,
    reason="accounts are spread over forked processes only on Linux, on 2+ cores",
)


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts)
    for account in accounts:
        seed_live(account, range(0, 30))
        write_state(root / "accounts" / account.name, account.name, range(5, 40))


def test_spread_over_processes_the_output_is_one_process_output(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    for fmt in ("text", "json", "markdown"):
        spread = run(tmp_path, three, "plan", "--all", "--format", fmt)
        alone = run(
            tmp_path, three, "plan", "--all", "--format", fmt, "--accounts-parallelism", "1"
        )
        assert spread.returncode == alone.returncode == 0, spread.stderr + alone.stderr
        assert spread.stdout == alone.stdout
    assert (
        "3 accounts: 3 planned; with changes: eu, us, apac."
        in run(tmp_path, three, "plan", "--all").stdout
    )


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text()
        found += [int(child) for child in text.split()]
    return found


def _connected_to(pid: int, port: int) -> bool:
    """Whether process `pid` holds a TCP connection to the local `port`."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            if int(fields[2].rsplit(":", 1)[1], 16) == port and fields[9] in inodes:
                return True
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_an_account_whose_process_is_killed_fails_alone_named(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    apac = three[2]
    apac.controls.set_faults(latency_ms=4000)  # apac's server answers slowly: it is in flight
    port = int(apac.server.base_url.rsplit(":", 1)[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", "plan", "--all", "--accounts-parallelism", "2"],
        cwd=tmp_path,
        env=user_environment(None, None, **environment(three)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        holder = None
        deadline = time.monotonic() + 60
        while holder is None and time.monotonic() < deadline:
            time.sleep(0.05)
            holder = next((c for c in _children(process.pid) if _connected_to(c, port)), None)
        assert holder is not None, "no process of plan --all connected to apac's server"
        time.sleep(0.5)  # eu and us, at no latency, are done by now
        os.kill(holder, signal.SIGKILL)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, err
    assert "=== account apac ===\nError: its process ended (killed by signal 9) before" in out
    assert out.count("Plan: 10 to invite, 5 to inactivate") == 2  # eu and us were planned
    assert "3 accounts: 2 planned, 1 failed (apac); with changes: eu, us." in out
    assert "Traceback" not in err


def test_a_secret_a_process_learns_is_masked_in_what_this_one_prints(
    tmp_path: Path, three: list[Account]
) -> None:
    """eu's process reads ${HOOK_HOST} from eu's file; eu's live webhook is at that host, which
    the plan shows (a URL with a path is shown as its host): only the output's guard knows the
    value is a secret, and the guard that writes it is this process's, not eu's."""
    _setup(tmp_path, three)
    eu = three[0]
    hook = "hooks-4f9c2e7a1b.example.com"
    with service_client(eu.server.base_url, eu.client.token) as api:
        live = {"url": f"https://{hook}/old", "headers": [], "event_types": ["KYC"]}
        assert api.post("/webhooks/clients", json=live).status_code == 201
    state = tmp_path / "accounts" / "eu" / "workforce.yaml"
    state.write_text(
        state.read_text() + "webhook:\n  url: https://${HOOK_HOST}/in\n  event_types: [KYC]\n"
    )
    write_accounts(tmp_path, three, eu={"env": "[HOOK_HOST]"})
    for fmt in ("text", "json", "markdown"):
        planned = run(tmp_path, three, "plan", "--all", "--format", fmt, HOOK_HOST=hook)
        assert planned.returncode == 0, planned.stderr
        assert "webhook" in planned.stdout
        assert hook not in planned.stdout and hook not in planned.stderr
        assert "[redacted]" in planned.stdout


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_a_process_killed_after_writing_its_plan_leaves_no_plan(
    tmp_path: Path, three: list[Account]
) -> None:
    """eu's process writes eu's plan, then blocks sending its large output to this command,
    which is stopped meanwhile; it is killed there. eu is reported failed, and DIR holds a
    plan of each account reported planned, and of no other (issue 39, item 6)."""
    write_accounts(tmp_path, three)
    write_state(tmp_path / "accounts" / "eu", "eu", range(1000))  # output beyond a pipe's 64 KiB
    for account in three[1:]:
        write_state(tmp_path / "accounts" / account.name, account.name, [1])
    plans = tmp_path / "plans"
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", "plan", "--all", "--out", str(plans)],
        cwd=tmp_path,
        env=user_environment(None, None, **environment(three)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stopped = False
    try:
        deadline = time.monotonic() + 60
        while len(_children(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        children = _children(process.pid)
        assert len(children) >= 2, "plan --all spread over no processes"
        os.kill(process.pid, signal.SIGSTOP)  # reads nothing its processes send
        stopped = True
        while time.monotonic() < deadline and not (
            plans.is_dir() and any("eu" in entry.name for entry in plans.iterdir())
        ):
            time.sleep(0.01)
        time.sleep(1.0)  # eu's process renders its plan and blocks sending it
        written = sorted(entry.name for entry in plans.iterdir())
        assert any("eu" in name for name in written), written
        for child in children:
            os.kill(child, signal.SIGKILL)
        os.kill(process.pid, signal.SIGCONT)
        stopped = False
        out, err = process.communicate(timeout=60)
    finally:
        if stopped:
            os.kill(process.pid, signal.SIGCONT)
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, err
    assert "=== account eu ===\nError: its process ended (killed by signal 9) before" in out
    assert "Traceback" not in err
    for account in three:
        planned = f"=== account {account.name} ===\nError:" not in out
        assert (plans / f"{account.name}.json").exists() == planned, (account.name, out)
    assert sorted(entry.name for entry in plans.iterdir()) == sorted(
        f"{account.name}.json" for account in three if f"{account.name} ===\nError:" not in out
    )
