"""Benchmark: `reconciler plan --all` of 50 accounts against a shell loop of single plans.

    PYTHONPATH=. python benchmarks/accounts_50.py [--accounts 50] [--workers 2000]
        [--latency-ms 50] [--pairs 1] [--accounts-parallelism N]

Sets up one sandbox (its own process, `reconciler sandbox serve --empty`) with one client per
account, each holding `--workers` agreements (invited through the API before any latency is
set), and a repository of `--accounts` accounts: `reconciler.yaml` (each account with its own
token variable) and `accounts/<name>/workforce.yaml`, of which 0.5% are new (invite) and 0.5%
of the account's agreements are no longer in the file (inactivate). Then every request is made
to wait `--latency-ms` (the sandbox's latency fault), and, side by side in the same run:

1. `reconciler plan --all` as a user runs it: wall-clock, peak memory (the proportional set
   size of it and the processes it forks, sampled), every account's summary line checked;
2. the shell loop a user would write without it: `for name in ...; do RECONCILER_TOKEN=...
   reconciler plan accounts/$name; done`, one process per account, one after the other, each
   summary line checked.

The reconciler's bytecode is compiled first into a cache of the run's own
(`PYTHONPYCACHEPREFIX`), as an install compiles it. `--pairs N` runs both N times, alternately,
and judges the median ratio. Targets: (1) at least
8x faster than (2), and its peak memory under 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
INVITE = "/contract/workers/inviteWorkersBulkLocked"


def _name(n: int) -> str:
    return f"acct-{n:03d}"


def _variable(n: int) -> str:
    return f"RECONCILER_TOKEN_ACCT_{n:03d}"


def start_sandbox(folder: Path, env: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    command = [sys.executable, "-m", "reconciler", "sandbox", "serve", "--port", "0", "--empty"]
    command += ["--db", str(folder / "sandbox.db")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    first = process.stdout.readline() if process.stdout else ""
    if not first:
        process.kill()
        raise SystemExit("the sandbox did not start")
    return process, json.loads(first)


def set_up(folder: Path, base_url: str, accounts: int, workers: int) -> tuple[dict[str, str], int]:
    """The repository and the accounts; returns the token variables and the invitations (and
    inactivations) each account's plan must show."""
    share = max(1, workers // 200)
    tokens: dict[str, str] = {}
    lines = ["version: 1", "accounts:"]
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for n in range(accounts):
            answer = http.post("/_sandbox/clients", json={"name": f"Entity {n}"})
            answer.raise_for_status()
            token = answer.json()["token"]
            tokens[_variable(n)] = token
            lines += [
                f"  - name: {_name(n)}",
                f"    path: accounts/{_name(n)}",
                f"    baseUrl: {base_url}",
                f"    tokenEnv: {_variable(n)}",
            ]
            live = [_invitation(n, i) for i in range(share, workers + share)]
            headers = {"Authorization": f"Bearer {token}"}
            for start in range(0, len(live), 100):
                sent = http.post(INVITE, json=live[start : start + 100], headers=headers)
                sent.raise_for_status()
            _write_state(folder / "accounts" / _name(n), n, workers)
    (folder / "reconciler.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tokens, share


def _invitation(n: int, i: int) -> dict[str, str]:
    return {
        "workerName": f"Given{i}",
        "workerSurname": f"Family{i}",
        "typeOfWorker": "Worker",
        "workerEmail": f"a{n}-w{i}@example.com",
        "countryIso": "GB",
        "externalId": f"ENG-{i:06d}",
    }


def _write_state(folder: Path, n: int, workers: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "workforce.yaml").open("w", encoding="utf-8") as out:
        out.write('version: 1\nscope:\n  externalIdPrefix: "ENG-"\nworkers:\n')
        for i in range(workers):
            out.write(
                f"  - externalId: ENG-{i:06d}\n    typeOfWorker: Worker\n"
                f"    workerName: Given{i}\n    workerSurname: Family{i}\n"
                f"    workerEmail: a{n}-w{i}@example.com\n    countryIso: GB\n"
            )


def _timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str, str]:
    """Wall seconds, peak memory in bytes (the largest sum, sampled every 20 ms, of the
    proportional set sizes of the command and every process under it: `plan --all` forks one
    process per core, which `wait4`'s peak of the largest one would leave out), stdout, stderr."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
        peak = [0]
        done = threading.Event()
        sampler = threading.Thread(target=_sample, args=(process.pid, peak, done), daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        done.set()
        sampler.join()
        code = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read().decode(), stderr.read().decode()
        if code != 0:
            raise SystemExit(f"{' '.join(command[:6])} failed ({code}): {err[-2000:]}")
        return elapsed, max(peak[0], usage.ru_maxrss * 1024), out, err


def _sample(pid: int, peak: list[int], done: threading.Event) -> None:
    while not done.wait(0.02):
        peak[0] = max(peak[0], _tree_pss(pid))


def _tree_pss(pid: int) -> int:
    """The proportional set size (shared pages counted once over the processes sharing them)
    of `pid` and its descendants, in bytes; 0 once it is gone."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue  # it ended meanwhile
    return total


def _check(output: str, accounts: int, share: int) -> None:
    expected = f"Plan: {share} to invite, {share} to inactivate, 0 to update"
    found = len(re.findall(re.escape(expected), output))
    if found != accounts:
        raise SystemExit(f"expected {accounts} summary lines {expected!r}, found {found}")


def plan_all(
    folder: Path, env: dict[str, str], accounts: int, share: int, side_by_side: int | None = None
) -> tuple[float, int]:
    command = [sys.executable, "-m", "reconciler", "plan", "--all"]
    if side_by_side is not None:
        command += ["--accounts-parallelism", str(side_by_side)]
    elapsed, peak, out, _ = _timed(command, env, folder)
    _check(out, accounts, share)
    if f"{accounts} accounts: {accounts} planned" not in out:  # then ".", or "; with changes: …"
        raise SystemExit("plan --all did not plan every account")
    return elapsed, peak


def shell_loop(folder: Path, env: dict[str, str], accounts: int, share: int) -> float:
    """`reconciler plan accounts/<name>` per account, one after the other, as a loop would."""
    script = ["set -e"]
    for n in range(accounts):
        script.append(
            f'RECONCILER_TOKEN="${_variable(n)}" {sys.executable} -m reconciler plan '
            f"accounts/{_name(n)}"
        )
    elapsed, _, out, _ = _timed(["bash", "-c", "\n".join(script)], env, folder)
    _check(out, accounts, share)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--accounts", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2000)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument(
        "--accounts-parallelism", type=int, help="passed to plan --all (default: its own, 4)"
    )
    options = parser.parse_args()
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILER_")}
    base_env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        # Compiled first, as an install compiles it: where PYTHONDONTWRITEBYTECODE is set (this
        # machine), every process would compile the reconciler again, 50 times in the loop.
        base_env["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
        compiled = [sys.executable, "-m", "compileall", "-q", str(ROOT / "reconciler")]
        subprocess.run(compiled, env=base_env, check=True, stdout=subprocess.DEVNULL)
        server, first = start_sandbox(folder, base_env)
        try:
            base_url = first["base_url"]
            print(f"setting up {options.accounts} accounts of {options.workers:,} workers...")
            tokens, share = set_up(folder, base_url, options.accounts, options.workers)
            with httpx.Client(base_url=base_url) as http:
                http.post("/_sandbox/faults", json={"latency_ms": options.latency_ms})
            env = {**base_env, **tokens}
            ratios, all_times, loop_times, peaks = [], [], [], []
            for _ in range(options.pairs):
                together, peak = plan_all(
                    folder, env, options.accounts, share, options.accounts_parallelism
                )
                loop_env = {**env, "RECONCILER_BASE_URL": base_url}
                loop = shell_loop(folder, loop_env, options.accounts, share)
                all_times.append(together)
                loop_times.append(loop)
                peaks.append(peak)
                ratios.append(loop / together)
                print(
                    f"plan --all {together:6.2f} s (peak {peak / 1e6:5.0f} MB)   "
                    f"shell loop {loop:6.2f} s   {loop / together:5.1f}x"
                )
        finally:
            server.terminate()
            server.wait(timeout=30)
    ratio = statistics.median(ratios)
    peak_mb = max(peaks) / 1e6
    print(
        f"\n{options.accounts} accounts x {options.workers:,} workers at {options.latency_ms} ms: "
        f"plan --all median {statistics.median(all_times):.2f} s, shell loop median "
        f"{statistics.median(loop_times):.2f} s: {ratio:.1f}x (target >= 8x); peak "
        f"{peak_mb:.0f} MB (target < 500 MB)"
    )
    if ratio < 8 or peak_mb >= 500:
        sys.exit(1)


if __name__ == "__main__":
    main()
