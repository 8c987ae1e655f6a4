"""The file is loaded while the account is read, and the plan is the same as when they ran one
after the other; a problem in the file still wins over one of the connection, and nothing is
written before both are done."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.desired import load_desired_state
from reconciler.plan import PlanOptions, diff
from reconciler.plan.refresh import refresh
from reconciler.render import renderer_for
from reconciler.sandbox import SandboxServer
from reconciler.service.client import ServiceClient
from reconciler.service.config import resolve_config
from reconciler.session.listed import files_listed
from reconciler.session.planning import money_window
from tests.cli import reconciler as run
from tests.plan.test_plan_cli import QUICKSTART, ROOT, requests_since

ACCOUNT = 1000  # five pages of 200
COUNTRIES = ("GB", "US", "FR", "DE", "NL")


def _seed_worker(i: int) -> str:
    status = "ACTIVE"
    if i % 97 == 0:
        status = "ENDED"
    elif i % 31 == 0:
        status = "INVITATION_SENT"
    title = "Senior Engineer" if i % 50 == 0 else "Engineer"  # drift
    identity = "" if i % 199 == 0 else f"  - externalId: ENG-{i:06d}\n"  # unmanaged
    if i % 211 == 0:
        identity = f"  - externalId: OPS-{i:06d}\n"  # outside the scope
    return (
        f"{identity or '  -'}    firstName: Given{i}\n    lastName: Family{i}\n"
        f"    email: w{i}@example.com\n    country: {COUNTRIES[i % 5]}\n"
        f"    jobTitle: {title}\n    status: {status}\n"
    ).replace("  -    ", "  - ")


def _desired_worker(i: int) -> str:
    return (
        f"  - {{externalId: ENG-{i:06d}, typeOfWorker: Worker, workerName: Given{i}, "
        f"workerSurname: Family{i}, workerEmail: w{i}@example.com, countryIso: {COUNTRIES[i % 5]},"
        f" jobTitle: Engineer}}\n"
    )


def desired_text(numbers: range, *, payrun: bool = False) -> str:
    text = 'version: 1\nscope:\n  externalIdPrefix: "ENG-"\nworkers:\n'
    text += "".join(_desired_worker(i) for i in numbers)
    text += "webhook:\n  url: https://hooks.example.com/other\n  event_types: [KYC, PAYMENT]\n"
    if payrun:
        text += (
            "payruns:\n  - id: 2026-11-contractors\n    description: November\n    payments:\n"
            '      - {worker: ENG-000004, amount: "10.00", description: Paid before}\n'
            '      - {worker: ENG-000005, amount: "20.50", description: November retainer}\n'
        )
    return text


@pytest.fixture(scope="module")
def account(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """1,000 agreements (drift, ended, unanswered, unmanaged, out of scope), a webhook, and a
    paylist already paid to ENG-000004."""
    folder = tmp_path_factory.mktemp("overlap")
    seed = folder / "seed.yaml"
    seed.write_text(
        "workers:\n"
        + "".join(_seed_worker(i) for i in range(ACCOUNT))
        + "webhook:\n  url: https://hooks.example.com\n  event_types: [KYC]\n"
    )
    with SandboxServer(seed=seed) as server:
        body = {
            "description": "October",
            "idempotence_key": "0" * 32,
            "payments": [
                {"description": "Paid before", "amount": 10, "worker_email": "w4@example.com"}
            ],
        }
        headers = {"Authorization": f"Bearer {server.token}"}
        httpx.post(f"{server.base_url}/payment-agent/paylists", json=body, headers=headers)
        httpx.post(f"{server.base_url}/_sandbox/process").raise_for_status()
        yield server


@pytest.fixture(scope="module")
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def sequential_plan(path: Path, server: SandboxServer, fmt: str) -> str:
    """The plan made the plain way: the file (and what its git history listed), then the
    refresh, then the diff."""
    desired = replace(load_desired_state(path), listed=files_listed(path))
    environ = {"RECONCILER_BASE_URL": server.base_url, "RECONCILER_TOKEN": server.token}
    with ServiceClient(resolve_config(environ=environ), read_only=True) as client:
        live = refresh(
            client,
            payruns=bool(desired.payruns),
            money=money_window(desired, None),
            parallelism=client.config.parallelism,
        )
    result = diff(desired, live, PlanOptions())
    return renderer_for(fmt, color=False, show_unmanaged=True).render(result)


CASES = {
    "quickstart": (None, False),
    "1,000 agreements": (range(3, 1020), False),
    "1,000 agreements and a payrun": (range(3, 1020), True),
}


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_plan_is_the_one_made_step_after_step(
    case: str,
    fmt: str,
    account: SandboxServer,
    demo: SandboxServer,
    tmp_path: Path,
) -> None:
    numbers, payrun = CASES[case]
    if numbers is None:
        path, server = QUICKSTART, demo
    else:
        path, server = tmp_path / "desired.yaml", account
        path.write_text(desired_text(numbers, payrun=payrun))
    result = run("plan", str(path), "--format", fmt, "--show-unmanaged", server=server)
    assert result.returncode == 0, result.stderr
    assert _same_window(result.stdout) == _same_window(sequential_plan(path, server, fmt))
    if payrun and fmt == "text":  # the payruns' part of the refresh ran, after the file
        assert 'paylist["2026-11-contractors"] is refused' in result.stdout
        assert "DUPLICATE_PAYMENT" in result.stdout  # it read the paylist paid before


def _same_window(plan: str) -> str:
    """The plan without the money window's start, which is `now` less the window."""
    return re.sub(r'"since": "[^"]*"', '"since": "…"', plan)


def _timestamp(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_the_refresh_starts_before_the_file_is_loaded(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(desired_text(range(3, 20_000)))  # a few tenths of a second to load
    since = int(requests_since(account, 0)[-1]["seq"])
    result = run(
        "plan",
        str(path),
        server=account,
        RECONCILER_LOG_LEVEL="info",
        RECONCILER_LOG_FORMAT="json",
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    loaded = next(_timestamp(e["timestamp"]) for e in events if e["event"] == "loaded")
    pages = [
        entry
        for entry in requests_since(account, since)
        if entry["path"] == "/contract/workers/list"
    ]
    assert len(pages) == ACCOUNT // 200
    assert _timestamp(str(pages[0]["at"])) < loaded, "the refresh waited for the file"


INVALID = "version: 1\nworkers:\n  - externalId: ENG-1\n    countryIso: XX\n"


@pytest.mark.parametrize(
    "connection",
    [
        pytest.param({}, id="a good connection"),
        pytest.param({"token": "not-a-valid-token-at-all"}, id="a refused token"),
        pytest.param({"RECONCILER_BASE_URL": "http://127.0.0.1:9"}, id="no service"),
        pytest.param({"RECONCILER_BASE_URL": "ftp://example.com"}, id="a bad address"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "drift", "apply"])
def test_a_problem_in_the_file_wins_and_nothing_is_written(
    command: str, connection: dict[str, Any], account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "workers.yaml"
    path.write_text(INVALID)
    problems = run("validate", str(path)).stdout.splitlines()
    assert len(problems) == 3  # two located problems and the count
    since = int(requests_since(account, 0)[-1]["seq"])
    extra = ["--auto-approve"] if command == "apply" else []
    result = run(command, str(path), *extra, server=account, **connection)
    assert result.returncode == 1
    assert result.stdout == ""
    # The file's report, whatever the connection met meanwhile.
    assert result.stderr.splitlines() == ["Error: invalid desired state:", *problems]
    assert all(entry["method"] == "GET" for entry in requests_since(account, since))


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_with_a_good_file_the_connection_problem_is_reported(
    command: str, account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "workers.yaml"
    path.write_text(desired_text(range(3, 10)))
    extra = ["--auto-approve"] if command == "apply" else []
    refused = run(command, str(path), *extra, server=account, token="not-a-valid-token-at-all")
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error:") and "Traceback" not in refused.stderr
    assert "401" in refused.stderr or "token" in refused.stderr
    nowhere = run(command, str(path), *extra, server=account, RECONCILER_BASE_URL="ftp://x.org")
    assert nowhere.returncode == 1
    assert nowhere.stderr.startswith("Error:") and "ftp://x.org" in nowhere.stderr


def test_with_a_good_file_the_refresh_log_lines_are_written(
    account: SandboxServer, tmp_path: Path
) -> None:
    """Held while the file loads, the refresh's retry lines are written once it is good."""
    path = tmp_path / "workers.yaml"
    path.write_text(desired_text(range(3, 10)))
    faults = f"{account.base_url}/_sandbox/faults"
    httpx.post(faults, json={"error_rate": 1, "error_status": 503}).raise_for_status()
    try:  # a refused loopback address is not retried: the service fails instead
        result = run("plan", str(path), server=account, RECONCILER_RETRY_ATTEMPTS="2")
    finally:
        httpx.post(faults, json={}).raise_for_status()
    assert result.returncode == 1
    assert "retrying in" in result.stderr and "503" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("Error: GET /")


@pytest.mark.parametrize("good", [True, False], ids=["a good file", "a refused file"])
def test_the_interpreter_turns_come_back_as_they_were(
    good: bool, account: SandboxServer, tmp_path: Path
) -> None:
    """While the file loads beside the refresh, threads take shorter turns
    (`reading.prompt_turns`); afterwards, and after a refused file, the interval is Python's
    again."""
    from reconciler.cli.connection import ConnectionOptions
    from reconciler.desired import InvalidDesiredState
    from reconciler.session.reading import file_and_account

    path = tmp_path / "desired.yaml"
    path.write_text(desired_text(range(3, 50)) if good else INVALID)
    before = sys.getswitchinterval()
    environ = {"RECONCILER_BASE_URL": account.base_url, "RECONCILER_TOKEN": account.token}
    seen = []
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environ.items():
            patch.setenv(name, value)
        try:
            with file_and_account(path, ConnectionOptions(), read_only=True) as ready:
                seen.append(sys.getswitchinterval())
                assert len(ready.live.workers) == ACCOUNT
        except InvalidDesiredState:
            assert not good
    assert sys.getswitchinterval() == before
    assert seen == ([before] if good else [])
