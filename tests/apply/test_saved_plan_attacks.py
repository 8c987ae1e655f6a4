"""An edited saved plan is never applied: the attacker's moves, through `reconciler apply PLAN`.

Each case edits `plan.json` the way a pull-request author or a reader of CI artifacts could,
then applies it against the demo sandbox and checks, through the sandbox's request log, that
nothing but reads was sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.signing import PlanKey, sign
from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, SEED, cli
from tests.sandbox.support import Controls

PLAN_KEY = "attacks-test-plan-key-7f3a9c-0123456789"
KEY = PlanKey(PLAN_KEY.encode(), "RECONCILER_PLAN_KEY")


@pytest.fixture(scope="module")
def demo() -> Iterator[SandboxServer]:
    """One demo account for the module: no case may change it."""
    with SandboxServer(seed=SEED) as server:
        yield server


@pytest.fixture(scope="module")
def controls(demo: SandboxServer) -> Iterator[Controls]:
    controls = Controls(demo.base_url)
    yield controls
    controls.close()


@pytest.fixture(scope="module")
def planned(demo: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("plan") / "plan.json"
    made = cli(
        "plan", str(QUICKSTART), "--out", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY
    )
    assert made.returncode == 0, made.stderr
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def _unmanaged_agreement(controls: Controls, demo: SandboxServer) -> int:
    """The id of the demo account's open agreement without an externalId."""
    answer = httpx.get(
        f"{demo.base_url}/contract/workers/list",
        params={"size": 100},  # the first page, however the service numbers its pages
        headers={"Authorization": f"Bearer {demo.token}"},
    )
    workers = answer.json()["content"]
    return next(w["agreementId"] for w in workers if not w.get("externalId"))


def _change(document: dict[str, Any], action: str) -> dict[str, Any]:
    return next(c for c in document["changes"] if c["action"] == action)


def _add_invitation(document: dict[str, Any]) -> None:
    invite = json.loads(json.dumps(_change(document, "invite")))
    invite["worker"].update(externalId="ENG-666", workerEmail="mallory@example.com")
    invite["address"] = 'worker["ENG-666"]'
    document["changes"].insert(0, invite)


Edit = Callable[[dict[str, Any], int], None]

EDITS: list[tuple[str, Edit]] = [
    ("an added invitation", lambda d, _: _add_invitation(d)),
    (
        "an inactivation pointed at an unmanaged worker",
        lambda d, unmanaged: _change(d, "inactivate").update(agreementId=unmanaged),
    ),
    (
        "a safety block that lets anything through",
        lambda d, _: d["safety"].update(
            owned_open_agreements=1000, max_inactivations={"value": "100", "is_share": True}
        ),
    ),
    ("a plan from 2099", lambda d, _: d.update(created_at="2099-01-01T00:00:00Z")),
    (
        "a webhook URL pointed at another host",
        lambda d, _: _change(d, "webhook_update")["webhook"].update(
            url={"value": "https://attacker.example/hook"}
        ),
    ),
    ("an agreement id of true", lambda d, _: _change(d, "inactivate").update(agreementId=True)),
    ("the signature removed", lambda d, _: d.pop("mac")),
    (
        "the key check copied from another plan",
        lambda d, _: d["key"].update(check="hmac-sha256:0123456789abcdef"),
    ),
    ("a change dropped", lambda d, _: d["changes"].pop()),
]


@pytest.mark.parametrize(("name", "edit"), EDITS, ids=[name for name, _ in EDITS])
def test_an_edited_saved_plan_sends_nothing(
    demo: SandboxServer,
    controls: Controls,
    planned: dict[str, Any],
    tmp_path: Path,
    name: str,
    edit: Edit,
) -> None:
    applied, writes = _apply_edited(demo, controls, planned, tmp_path, edit, resign=False)

    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert "nothing was applied" in applied.stderr or "damaged" in applied.stderr
    assert "Traceback" not in applied.stderr and "internal error" not in applied.stderr
    assert writes == []


def _apply_edited(
    demo: SandboxServer,
    controls: Controls,
    planned: dict[str, Any],
    tmp_path: Path,
    edit: Edit,
    *,
    resign: bool,
) -> tuple[Any, list[str]]:
    """Apply the edited plan; the result, and every request other than a read it sent."""
    document = json.loads(json.dumps(planned))
    edit(document, _unmanaged_agreement(controls, demo))
    if resign:
        document["mac"] = sign(document, KEY)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    since = controls.last_seq()
    applied = cli("apply", str(path), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    sent = [f"{e['method']} {e['path']}" for e in controls.requests(since)]
    return applied, [line for line in sent if not line.startswith("GET ")]


RESIGNED: list[tuple[str, Edit, str]] = [
    (
        "an inactivation pointed at an unmanaged worker",
        lambda d, unmanaged: _change(d, "inactivate").update(agreementId=unmanaged),
        "belongs to",
    ),
    ("a plan from 2099", lambda d, _: d.update(created_at="2099-01-01T00:00:00Z"), "future"),
    (
        "an inactivation recorded twice",
        lambda d, _: d["changes"].insert(0, _change(d, "inactivate")),
        "is there twice",
    ),
]


@pytest.mark.parametrize(("name", "edit", "message"), RESIGNED, ids=[r[0] for r in RESIGNED])
def test_a_plan_signed_again_by_a_key_holder_is_still_checked_against_the_account(
    demo: SandboxServer,
    controls: Controls,
    planned: dict[str, Any],
    tmp_path: Path,
    name: str,
    edit: Edit,
    message: str,
) -> None:
    applied, writes = _apply_edited(demo, controls, planned, tmp_path, edit, resign=True)

    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert message in applied.stderr
    assert writes == []


def test_a_plan_applied_with_another_key_names_the_setting(
    demo: SandboxServer, controls: Controls, planned: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(planned))
    since = controls.last_seq()

    applied = cli("apply", str(path), server=demo)  # keyed by the token this time

    assert applied.returncode == 1
    assert "different plan key (RECONCILER_PLAN_KEY)" in applied.stderr
    assert "the token from" in applied.stderr
    assert [e for e in controls.requests(since) if e["method"] != "GET"] == []


@pytest.mark.parametrize(
    ("name", "damage", "said"),
    [
        ("truncated", lambda text: text[: len(text) // 2], "not a readable saved plan"),
        ("a NaN", lambda text: text.replace('"format_version": 5', '"format_version": NaN'), "NaN"),
        ("not UTF-8", lambda text: text + "\udcff", "not a readable saved plan"),
        ("a trailing comma", lambda text: text.rstrip().rstrip("}") + ",}", "not a readable"),
    ],
    ids=["truncated", "nan", "not-utf-8", "trailing-comma"],
)
def test_a_damaged_saved_plan_is_named_as_one_and_sends_nothing(
    demo: SandboxServer,
    controls: Controls,
    planned: dict[str, Any],
    tmp_path: Path,
    name: str,
    damage: Callable[[str], str],
    said: str,
) -> None:
    """A plan cut short in upload, or damaged otherwise, is not read as a desired-state file
    (JSON is YAML): the error says it is a saved plan that cannot be read."""
    path = tmp_path / "plan.json"
    path.write_bytes(damage(json.dumps(planned, indent=2)).encode("utf-8", "surrogateescape"))
    since = controls.last_seq()

    for command in ("apply", "comment"):
        ran = cli(command, str(path), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert f"{path}: " in ran.stderr and said in ran.stderr, ran.stderr
        assert "desired state" not in ran.stderr + ran.stdout, ran.stderr
        assert "Traceback" not in ran.stderr
    assert [e for e in controls.requests(since) if e["method"] != "GET"] == []
