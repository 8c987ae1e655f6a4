"""A payrun's identity does not depend on its size: through the CLI against the sandbox.

Four payruns are paid once (1,000 payments: one paylist; 1,001: parts 1 and 2; 2,000: parts 1
and 2, both full; 2,001: parts 1 to 3). Each test then edits one of them across the 1,000
boundary, or inside one part, and asserts that the plan says conflict for every paylist of it
and that apply sends nothing (the sandbox's request log has no paylist creation).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, SEED, cli, paylist_posts, request_seq

PAID_SIZES = {"one-paylist": 1000, "two-parts": 1001, "two-full-parts": 2000, "three-parts": 2001}


def _payrun(payrun_id: str, count: int, edited: int | None = None) -> str:
    lines = [
        f'      - {{email: ada@example.com, amount: "{"0.02" if n == edited else "0.01"}", '
        f'description: "{payrun_id} item {n}"}}'
        for n in range(count)
    ]
    return f"  - id: {payrun_id}\n    description: Many\n    payments:\n" + "\n".join(lines) + "\n"


def _file(folder: Path, payruns: str, name: str) -> Path:
    path = folder / name
    path.write_text(QUICKSTART.read_text() + "payruns:\n" + payruns)
    return path


@pytest.fixture(scope="module")
def paid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SandboxServer, Path]]:
    folder = tmp_path_factory.mktemp("payrun-size")
    with SandboxServer(seed=SEED, process_delay_ms=0) as server:
        payruns = "".join(_payrun(name, count) for name, count in PAID_SIZES.items())
        applied = cli(
            "apply", str(_file(folder, payruns, "paid.yaml")), "--auto-approve", server=server
        )
        assert applied.returncode == 0, applied.stdout[-2000:] + applied.stderr[-2000:]
        yield server, folder


@pytest.mark.parametrize(
    ("payrun_id", "count", "edited"),
    [
        ("one-paylist", 1001, None),  # a paid unsplit payrun grows past 1,000
        ("two-parts", 1000, None),  # a split one shrinks to one paylist
        ("two-full-parts", 2001, None),  # a part added after two full parts
        ("three-parts", 2000, None),  # its last part removed
        ("three-parts", 1001, None),  # parts removed and the second changed
        ("two-parts", 1001, 5),  # one payment of part 1 changed: part 2 is in conflict too
        ("three-parts", 2001, 2000),  # the last part changed: parts 1 and 2 too
    ],
    ids=[
        "1000-then-1001",
        "1001-then-1000",
        "2000-then-2001",
        "2001-then-2000",
        "2001-then-1001",
        "part-1-edited",
        "part-3-edited",
    ],
)
def test_a_paid_payrun_edited_across_or_inside_its_parts_is_a_conflict_and_sends_nothing(
    paid: tuple[SandboxServer, Path], payrun_id: str, count: int, edited: int | None
) -> None:
    server, folder = paid
    path = _file(folder, _payrun(payrun_id, count, edited), f"{payrun_id}-{count}-{edited}.yaml")
    since = request_seq(server)

    planned = cli("plan", str(path), "--format", "json", server=server)
    applied = cli("apply", str(path), "--auto-approve", server=server)

    document = json.loads(planned.stdout)
    states = [p["state"] for p in document["payruns"]]
    assert states and set(states) == {"conflict"}, (states, planned.stderr[-1000:])
    assert not [c for c in document["resource_changes"] if c["type"] == "paylist"]
    assert paylist_posts(server, since) == []  # nothing of the payrun is sent
    assert "is in conflict, nothing is paid" in applied.stdout, applied.stdout[-2000:]
    assert "a paid payrun cannot change" in applied.stdout


def test_an_unchanged_paid_payrun_of_any_size_is_paid_not_a_conflict(
    paid: tuple[SandboxServer, Path],
) -> None:
    server, folder = paid
    payruns = "".join(_payrun(name, count) for name, count in PAID_SIZES.items())
    since = request_seq(server)
    planned = cli(
        "plan", str(_file(folder, payruns, "unchanged.yaml")), "--format", "json", server=server
    )
    states = [(p["address"], p["state"]) for p in json.loads(planned.stdout)["payruns"]]
    assert {state for _, state in states} == {"paid"}, states
    assert len(states) == 1 + 2 + 2 + 3
    assert paylist_posts(server, since) == []
