"""`reconciler plan-compare`: apply after a merge only what the pull request's review saw.

The pure comparison is a table of change records; the command is run against the sandbox the
way the merge job runs it: plan, change the account (or the file), plan again, compare.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.review import compare_plans
from reconciler.sandbox import SandboxServer
from tests.gitops.support import ROOT, reconciler

INVITE_004 = {
    "address": 'worker["ENG-004"]',
    "action": "invite",
    "worker": {"externalId": "ENG-004", "workerEmail": "katherine@example.com"},
    "fingerprint": "absent",
}
INACTIVATE_006 = {
    "address": 'worker["ENG-006"]',
    "action": "inactivate",
    "externalId": "ENG-006",
    "agreementId": 5,
    "fingerprint": "hmac-sha256:aa",
}
WEBHOOK = {
    "address": "webhook",
    "action": "webhook_update",
    "webhook": {
        "url": "https://hooks.example.com/workforce",
        "enabled": True,
        "event_types": ["KYC", "PAYMENT"],
        "headers": [{"name": "X-Token", "template": "${HOOK}", "hmac": "11"}],
    },
    "fingerprint": "hmac-sha256:bb",
}
ENG_006 = 'worker["ENG-006"] (inactivate)'


def _with(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**record, **changes}


@pytest.mark.parametrize(
    ("case", "reviewed", "new", "only_reviewed", "only_new", "different"),
    [
        ("the same", [INVITE_004, WEBHOOK], [INVITE_004, WEBHOOK], [], [], []),
        ("another order", [INVITE_004, WEBHOOK], [WEBHOOK, INVITE_004], [], [], []),
        ("both empty", [], [], [], [], []),
        (
            "only the live fingerprints moved",
            [INACTIVATE_006, WEBHOOK],
            [_with(INACTIVATE_006, fingerprint="hmac-sha256:cc"), _with(WEBHOOK, fingerprint="x")],
            [],
            [],
            [],
        ),
        ("a change was added", [INVITE_004], [INVITE_004, INACTIVATE_006], [], [ENG_006], []),
        ("a change is gone", [INVITE_004, INACTIVATE_006], [INVITE_004], [ENG_006], [], []),
        (
            "an invitation's values changed",
            [INVITE_004],
            [_with(INVITE_004, worker={"externalId": "ENG-004", "workerEmail": "kj@example.com"})],
            [],
            [],
            ['worker["ENG-004"] (invite)'],
        ),
        (
            "another agreement would be inactivated",
            [INACTIVATE_006],
            [_with(INACTIVATE_006, agreementId=9)],
            [],
            [],
            ['worker["ENG-006"] (inactivate)'],
        ),
        (
            "a header value changed (its keyed HMAC)",
            [WEBHOOK],
            [_with(WEBHOOK, webhook={**WEBHOOK["webhook"], "headers": [
                {"name": "X-Token", "template": "${HOOK}", "hmac": "22"}]})],
            [],
            [],
            ["webhook (webhook update)"],
        ),
        (
            "the same address, another action",
            [_with(INVITE_004, address='worker["ENG-006"]')],
            [INACTIVATE_006],
            ['worker["ENG-006"] (invite)'],
            ['worker["ENG-006"] (inactivate)'],
            [],
        ),
    ],
)  # fmt: skip
def test_comparison_table(
    case: str,
    reviewed: list[dict[str, Any]],
    new: list[dict[str, Any]],
    only_reviewed: list[str],
    only_new: list[str],
    different: list[str],
) -> None:
    comparison = compare_plans(reviewed, new)
    assert list(comparison.only_reviewed) == only_reviewed, case
    assert list(comparison.only_new) == only_new, case
    assert list(comparison.different) == different, case
    assert comparison.equal is not (only_reviewed or only_new or different), case


# --- against the sandbox ---------------------------------------------------------------------

QUICKSTART = ROOT / "examples" / "quickstart.yaml"
SECRET_HEADER = """\
  headers:
    - {name: X-Webhook-Token, value: "${HOOK_TOKEN}"}
"""


@pytest.fixture
def demo() -> Iterator[SandboxServer]:
    """The quickstart's demo account, of this test alone (the tests change it)."""
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


PLAN_KEY = "plan-compare-test-key-5d1c0e-0123456789"


def plan(server: SandboxServer, desired: Path, out: Path, **env: str) -> Path:
    env.setdefault("RECONCILER_PLAN_KEY", PLAN_KEY)
    result = reconciler(
        "plan", str(desired), "--out", str(out),
        RECONCILER_BASE_URL=server.base_url, RECONCILER_TOKEN=server.token, **env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def compare(reviewed: Path, new: Path, *args: str, key: str = PLAN_KEY) -> Any:
    return reconciler("plan-compare", str(reviewed), str(new), *args, RECONCILER_PLAN_KEY=key)


def invite(server: SandboxServer, **item: str) -> None:
    answer = httpx.post(
        f"{server.base_url}/contract/workers/inviteWorkersBulkLocked",
        headers={"Authorization": f"Bearer {server.token}"},
        json=[{"typeOfWorker": "Worker", "workerName": "New", "workerSurname": "Person",
               "countryIso": "GB", **item}],
    )  # fmt: skip
    assert answer.is_success, answer.text


def test_plan_change_the_account_plan_again_compare(demo: SandboxServer, tmp_path: Path) -> None:
    reviewed = plan(demo, QUICKSTART, tmp_path / "reviewed.json")

    again = plan(demo, QUICKSTART, tmp_path / "again.json")
    same = compare(reviewed, again)
    assert same.returncode == 0, same.stderr
    assert "exactly the reviewed changes" in same.stdout

    # A worker outside the file's scope: the account changed, the changes did not.
    invite(demo, externalId="OPS-002", workerEmail="ops2@example.com")
    unrelated = plan(demo, QUICKSTART, tmp_path / "unrelated.json")
    assert json.loads(unrelated.read_text())["changes"] != []
    assert compare(reviewed, unrelated).returncode == 0

    # An owned worker the file does not list: the new plan would inactivate it, unreviewed.
    invite(demo, externalId="ENG-008", workerEmail="eng8@example.com")
    grown = plan(demo, QUICKSTART, tmp_path / "grown.json")
    refused = compare(reviewed, grown)
    assert refused.returncode == 2
    assert refused.stdout == (
        "The new plan differs from the reviewed plan:\n"
        '  worker["ENG-008"] (inactivate): planned now, but never reviewed\n'
    )
    markdown = compare(reviewed, grown, "--format", "markdown")
    assert markdown.returncode == 2
    assert markdown.stdout.startswith(":no_entry: **Not applied")
    assert '- `worker["ENG-008"] (inactivate)`: planned now, but never reviewed' in markdown.stdout


def test_a_changed_file_or_header_value_is_not_the_reviewed_plan(
    demo: SandboxServer, tmp_path: Path
) -> None:
    desired = tmp_path / "workforce.yaml"
    desired.write_text(QUICKSTART.read_text() + SECRET_HEADER)
    reviewed = plan(demo, desired, tmp_path / "reviewed.json", HOOK_TOKEN="first-value")

    rotated = plan(demo, desired, tmp_path / "rotated.json", HOOK_TOKEN="second-value")
    result = compare(reviewed, rotated)
    assert result.returncode == 2
    assert "webhook (webhook update): planned differently from the review" in result.stdout

    desired.write_text(
        QUICKSTART.read_text().replace("workerSurname: Johnson", "workerSurname: Goble")
        + SECRET_HEADER
    )
    edited = plan(demo, desired, tmp_path / "edited.json", HOOK_TOKEN="first-value")
    result = compare(reviewed, edited)
    assert result.returncode == 2
    assert result.stdout.splitlines()[1:] == [
        '  worker["ENG-004"] (invite): planned differently from the review'
    ]


def test_what_is_not_a_saved_plan_is_a_clear_error(tmp_path: Path) -> None:
    result = compare(QUICKSTART, QUICKSTART)
    assert result.returncode == 1
    assert "not a readable saved plan" in result.stderr or "not a saved plan" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_reviewed_plan_that_was_edited_or_made_with_another_key_compares_with_nothing(
    demo: SandboxServer, tmp_path: Path
) -> None:
    reviewed = plan(demo, QUICKSTART, tmp_path / "reviewed.json")
    new = plan(demo, QUICKSTART, tmp_path / "new.json")
    other = compare(reviewed, new, key="another-plan-key-of-32-bytes-or-more")
    assert other.returncode == 1
    assert "different plan key (RECONCILER_PLAN_KEY)" in other.stderr
    document = json.loads(reviewed.read_text())
    document["changes"] = document["changes"][:1]
    reviewed.write_text(json.dumps(document))
    edited = compare(reviewed, new)
    assert edited.returncode == 1 and "changed after it was made" in edited.stderr
