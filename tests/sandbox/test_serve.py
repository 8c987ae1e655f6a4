"""`reconciler sandbox serve` as a subprocess: the first line, serving, --check, errors."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "sandbox-seed.yaml"


def reconciler(*args: str) -> list[str]:
    return [sys.executable, "-m", "reconciler", *args]


ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        reconciler(*args), env=ENV, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_the_first_line_serves_and_stops_cleanly(stop: signal.Signals) -> None:
    process = subprocess.Popen(
        reconciler("sandbox", "serve", "--port", "0"),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        assert set(first) == {"base_url", "client_id", "token", "email", "password"}
        assert first["base_url"].startswith("http://127.0.0.1:")
        answer = httpx.get(
            f"{first['base_url']}/contract/workers/list",
            headers={"Authorization": f"Bearer {first['token']}"},
        )
        assert answer.status_code == 200
        assert answer.json()["totalElements"] == 8  # the demo account, as --sandbox has it
        process.send_signal(stop)
        assert process.wait(timeout=15) == 0
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in process.stderr.read()  # type: ignore[union-attr]


def test_page_cost_ms_starts_the_sandbox_with_that_fault() -> None:
    command = reconciler("sandbox", "serve", "--port", "0", "--page-cost-ms", "2.5")
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        faults = httpx.get(f"{first['base_url']}/_sandbox/faults").json()
        assert faults["page_cost_ms"] == 2.5 and faults["latency_ms"] == 0
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_check_summarises_the_seeded_demo_account() -> None:
    done = run("sandbox", "serve", "--seed", str(SEED), "--check")
    assert done.returncode == 0, done.stderr
    first, *summary = done.stdout.splitlines()
    assert set(json.loads(first)) == {"base_url", "client_id", "token", "email", "password"}
    text = "\n".join(summary)
    assert "Workers: 8 agreements" in text
    assert [line.split() for line in summary if line.startswith("  ")] == [
        ["ACTIVE", "5"],
        ["ENDED", "1"],
        ["INVITATION_SENT", "1"],
        ["VERIFICATION_PENDING", "1"],
    ]
    assert "Webhook: https://hooks.example.com/workforce (enabled), events KYC" in text


def test_a_file_database_keeps_the_token_across_runs(tmp_path: Path) -> None:
    db = str(tmp_path / "sandbox.db")
    first = run("sandbox", "serve", "--db", db, "--seed", str(SEED), "--check")
    second = run("sandbox", "serve", "--db", db, "--seed", str(SEED), "--check")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    token = json.loads(first.stdout.splitlines()[0])["token"]
    assert json.loads(second.stdout.splitlines()[0])["token"] == token
    assert "Workers: 8 agreements" in second.stdout  # not seeded twice
    assert "--seed was not applied" in second.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--seed", "{bad}"], ["is not a valid seed", "workers[0].country"]),
        (["--db", "/nonexistent-dir/x.db"], ["cannot use the database"]),
        (["--port", "{busy}"], ["cannot listen on", "hint"]),
    ],
)
def test_errors_are_messages_not_tracebacks(
    tmp_path: Path, args: list[str], words: list[str]
) -> None:
    bad_seed = tmp_path / "bad.yaml"
    bad_seed.write_text(
        "workers:\n  - {firstName: A, lastName: B, email: a@example.com, country: XX,"
        " status: ACTIVE}\n"
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        args = [arg.replace("{bad}", str(bad_seed)).replace("{busy}", port) for arg in args]
        done = run("sandbox", "serve", "--check", *args)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ")
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr


def test_a_client_that_leaves_mid_request_prints_no_traceback() -> None:
    process = subprocess.Popen(
        reconciler("sandbox", "serve", "--port", "0"),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        base, token = first["base_url"], first["token"]
        httpx.post(f"{base}/_sandbox/faults", json={"latency_ms": 1500}).raise_for_status()
        for method in ("GET", "POST"):
            with pytest.raises(httpx.TimeoutException):
                httpx.request(
                    method,
                    f"{base}/contract/workers/inviteWorkersBulkLocked"
                    if method == "POST"
                    else f"{base}/contract/workers/list",
                    headers={"Authorization": f"Bearer {token}"},
                    content=b"[" if method == "POST" else None,  # the body never completes
                    timeout=0.3,
                )
        # The server finishes both requests (logging each) and finds no one to answer.
        deadline, log = time.monotonic() + 30, []
        while len(log) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            log = httpx.get(f"{base}/_sandbox/requests").json()
        assert [entry["method"] for entry in log] == ["GET", "POST"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        process.kill()
        process.wait()
    stderr = process.stderr.read()  # type: ignore[union-attr]
    assert "Traceback" not in stderr and "Exception in ASGI application" not in stderr


def test_listening_beyond_this_machine_warns_that_the_controls_take_no_token() -> None:
    result = run("sandbox", "serve", "--host", "0.0.0.0", "--port", "0", "--check")
    assert result.returncode == 0, result.stderr
    assert "warning: listening on 0.0.0.0, beyond this machine" in result.stderr
    quiet = run("sandbox", "serve", "--port", "0", "--check")
    assert "warning" not in quiet.stderr


@pytest.mark.parametrize(("args", "workers"), [([], 8), (["--empty"], 0)])
def test_the_account_is_the_demo_one_unless_empty_and_the_printed_line_reaches_it(
    args: list[str], workers: int
) -> None:
    """`serve` seeds the account as `--sandbox` does; the export line it prints is all that
    `reconciler wallet` needs, the client id included, even for an empty account."""
    process = subprocess.Popen(
        reconciler("sandbox", "serve", "--port", "0", *args),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        first = json.loads(process.stdout.readline())
        assert process.stderr.readline() == "To use it from another shell:\n"
        words = process.stderr.readline().split()
        assert words[0] == "export"
        exported = dict(word.split("=", 1) for word in words[1:])
        assert exported == {
            "RECONCILER_BASE_URL": first["base_url"],
            "RECONCILER_CLIENT_ID": str(first["client_id"]),
            "RECONCILER_TOKEN": first["token"],
        }
        env = {k: v for k, v in ENV.items() if not k.startswith("RECONCILER_")} | exported
        listed = subprocess.run(
            reconciler("workers", "--format", "json"), env=env, capture_output=True, text=True
        )
        wallet = subprocess.run(
            reconciler("wallet", "--format", "json"), env=env, capture_output=True, text=True
        )
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert len(json.loads(listed.stdout)) == workers, listed.stderr
    assert wallet.returncode == 0, wallet.stderr
    assert json.loads(wallet.stdout)["client_id"] == first["client_id"]


def test_empty_and_seed_together_are_refused() -> None:
    done = run("sandbox", "serve", "--empty", "--seed", str(SEED), "--check")
    assert done.returncode == 1 and "--empty starts without a seed" in done.stderr


@pytest.mark.parametrize("numbering", [[], ["--zero-based-pages"]])
def test_check_counts_every_page_once(tmp_path: Path, numbering: list[str]) -> None:
    """300 agreements are two pages of 200: one-indexed (page 0 and 1 both the first) or
    from 0, each is counted once (it said 500 when it asked page 0 then page 1)."""
    seed = tmp_path / "big.yaml"
    seed.write_text(
        "workers:\n"
        + "".join(
            f"  - {{externalId: CW-{n:04}, firstName: A, lastName: B,"
            f" email: w{n}@example.com, country: GB, status: ACTIVE}}\n"
            for n in range(300)
        )
    )
    done = run("sandbox", "serve", "--seed", str(seed), *numbering, "--check")
    assert done.returncode == 0, done.stderr
    assert "Workers: 300 agreements" in done.stdout
    assert [line.split() for line in done.stdout.splitlines() if line.startswith("  ")] == [
        ["ACTIVE", "300"]
    ]
