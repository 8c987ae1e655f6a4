"""Benchmark: `reconciler apply` converging under faults, at full size.

    PYTHONPATH=. python benchmarks/apply_faults.py [--invitations 500] [--inactivations 100]

The sandbox runs in this process with 200 ms latency on every service request, 20% of them
answered 503, a rate limit answering 429 with Retry-After, and 10% of connections dropped after
the work is done. `reconciler apply FILE --auto-approve --force --format json` runs as a child
process, as a user runs it, at most three times. After each run the ledger is checked against
the sandbox's state (read without faults); at the end the account must match the file, every
invited email must have landed exactly once (one agreement each, and no invitation request ever
refused, which the service would do for an email sent again after it landed), and no ledger
entry may have failed as "already open". The small version of this is
`tests/apply/test_apply_faults.py`.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.apply_support import control, run_apply, seed, start, workers, write_desired  # noqa: E402
from reconciler.sandbox import SandboxServer  # noqa: E402

FAULTS = {
    "latency_ms": 200,
    "error_rate": 0.2,
    "error_status": 503,
    "rate_limit_per_s": 15,
    "drop_rate": 0.1,
    "seed": 2026,
}
INVITE_PATH = "/contract/workers/inviteWorkersBulkLocked"
MAX_RUNS = 3


def mismatches(ledger: dict[str, Any], live: list[dict[str, Any]]) -> list[str]:
    """Entries whose outcome the sandbox's state contradicts."""
    open_statuses = ("ACTIVE", "INVITATION_SENT", "VERIFICATION_PENDING")
    open_ids = {w["externalId"] for w in live if w["status"] in open_statuses}
    status = {w["agreementId"]: w["status"] for w in live}
    wrong = []
    for entry in ledger["changes"]:
        external_id = entry["address"][len('worker["') : -2]
        applied = entry["outcome"] == "applied"
        if entry["action"] == "invite" and applied != (external_id in open_ids):
            wrong.append(f"{entry['address']}: {entry['outcome']} but open={not applied}")
        if entry["action"] == "inactivate":
            inactive = status.get(entry["agreement_id"]) == "INACTIVATED"
            if applied != inactive:
                wrong.append(f"{entry['address']}: {entry['outcome']} but inactive={inactive}")
    return wrong


def main() -> int:
    args = start(__doc__ or "", invitations=500, inactivations=100)
    print(f"faults: {FAULTS}")
    removed = list(range(1, args.inactivations + 1))
    new = range(100_001, 100_001 + args.invitations)
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder, SandboxServer() as server:
        url, token = server.base_url, server.token
        desired = write_desired(Path(folder) / "workers.yaml", new)
        seed(url, token, removed)
        since = control(url, "requests?since=0", method="GET")[-1]["seq"]
        converged = False
        for run in range(1, MAX_RUNS + 1):
            control(url, "faults", FAULTS)
            seconds, status, ledger = run_apply(url, token, desired)
            control(url, "faults", {})
            live = workers(url, token)
            wrong = mismatches(ledger, live)
            problems += [f"run {run}: {line}" for line in wrong]
            failed = [c for c in ledger["changes"] if c["outcome"] != "applied"]
            problems += [
                f"run {run}: {c['address']} failed as already open: {c['detail']}"
                for c in failed
                if "already" in (c["detail"] or "")
            ]
            print(f"run {run}: exit {status} in {seconds:.1f} s, {ledger['summary']}, "
                  f"ledger matches the sandbox: {not wrong}")  # fmt: skip
            if status == 0:
                converged = True
                break
        live = workers(url, token)
        emails = Counter(w["email"] for w in live)
        twice = [n for n in new if emails[f"w{n:06d}@example.com"] != 1]
        log = [e for e in control(url, f"requests?since={since}", method="GET")]
        invites = [e for e in log if e["path"] == INVITE_PATH]
        answers = Counter(f"{e['status']}{' dropped' if e['dropped'] else ''}" for e in invites)
        statuses = Counter(f"{e['status']}{' dropped' if e['dropped'] else ''}" for e in log)
    print(f"invitation requests: {dict(answers)}")
    print(f"all service requests: {dict(statuses)}")
    if not converged:
        problems.append(f"not converged within {MAX_RUNS} applies")
    if twice:
        problems.append(f"{len(twice)} emails did not land exactly once, e.g. {twice[:5]}")
    if any(key.startswith("400") for key in answers):
        problems.append("an invitation request was refused: something was sent twice")
    for problem in problems:
        print(f"problem: {problem}")
    print("PASS" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
