"""What a payrun apply says: a split payrun is one payrun of N parts everywhere, and the apply's
progress follows the payments rather than staying on the step before them.

Through the command line against the demo sandbox, over real HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, cli

PLAN_KEY = "payrun-summary-test-key-0123456789abcdef"


def _split(tmp_path: Path) -> Path:
    lines = [
        f'      - {{worker: ENG-001, amount: "0.01", description: "item {n}"}}' for n in range(1001)
    ]
    payruns = "payruns:\n  - id: big\n    description: Many\n    payments:\n" + "\n".join(lines)
    path = tmp_path / "desired.yaml"
    path.write_text(QUICKSTART.read_text() + payruns + "\n")
    return path


def test_a_split_payrun_is_one_payrun_of_two_parts_everywhere(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = _split(tmp_path)
    text = cli("plan", str(path), server=demo)
    assert text.returncode == 0, text.stderr
    assert "1 payrun of 2 parts to pay (10.01)" in text.stdout
    assert 'paylist["big"][2] will be paid (key' in text.stdout
    assert "part 2 of 2 of one payrun" in text.stdout
    document = json.loads(cli("plan", str(path), "--format", "json", server=demo).stdout)
    assert [(p["part"], p["parts"]) for p in document["payruns"]] == [(1, 2), (2, 2)]
    markdown = cli("plan", str(path), "--format", "markdown", server=demo).stdout
    assert '`paylist["big"][1]` (part 1 of 2)' in markdown

    saved = tmp_path / "plan.json"
    made = cli("plan", str(path), "--out", str(saved), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert made.returncode == 0, made.stderr
    applied = cli("apply", str(saved), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert applied.returncode == 0, applied.stdout[-2000:] + applied.stderr[-2000:]
    assert "1 payrun of 2 parts to pay (10.01)." in applied.stderr


def test_the_progress_names_the_payments_after_the_webhook(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(
        QUICKSTART.read_text()
        + "payruns:\n  - id: one\n    description: One\n    payments:\n"
        + '      - {worker: ENG-001, amount: "1.00", description: one}\n'
    )
    applied = cli("apply", str(path), "--auto-approve", server=demo)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    events = [json.loads(line) for line in applied.stderr.splitlines() if line.startswith("{")]
    phases = [event["phase"] for event in events if event.get("event") == "apply phase"]
    assert phases[-3:] == ["webhook", "paying", "settling"], phases
    progress = [event for event in events if event.get("event") == "apply progress"]
    assert progress[-1]["done"] == progress[-1]["total"]  # every step counted, the payment too
