"""The landing's side of dual control (issue 46), over the fake GitHub and the fake GitLab: what
`apply` is told (the requests merged, the policy's commit, the run, where the records go), what
its exit 4 does (the merge stays pending, refused, naming the policy change), and after a paying
apply, the approvers and the payruns waiting said on the outcome and the records kept on the
branch `reconciler/records` through each forge.

The reconciler's own commands are given by a recorder that answers each with the status the
case says and writes what `apply --records-out` writes (tests/gitops/test_landing_forges.py).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.accounts.records import RECORDS_BRANCH
from reconciler.accounts.targets import targets
from reconciler.gitops.forge import ApplyJob, Forge, Reviewed
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.gitlab.forge import GitLabForge
from reconciler.gitops.landing import land_fleet
from reconciler.gitops.outcome import APPLIED, REFUSED
from reconciler.secrets import Secret
from tests.gitops.action_runner import History
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab
from tests.gitops.test_landing_forges import FILE, TOKEN

RECORD = {"account": "default", "payrun": "2026-11-retainer", "approvals": [{"login": "alice"}]}


def verdict(payrun: str, logins: list[str], missing: str | None, needs_has: str) -> dict[str, Any]:
    """A payrun's verdict as `apply` writes it in approvals.json (`Verdict.as_dict()`)."""
    return {
        "payrun": payrun, "total": "100.00",
        "rule": {"over": "0.00", "count": 2, "from": ["alice", "bob", "dave"]},
        "approvals": [{"login": login, "id": 11, "commit": "c" * 40,
                       "submitted_at": "2026-11-26T09:00:00Z", "request": 31}
                      for login in logins],
        "not_counted": [], "missing": missing, "needs_has": needs_has,
    }  # fmt: skip


class Apply:
    """Records each command; `apply` exits `status` and writes the records and verdicts."""

    def __init__(self, status: int, verdicts: list[dict[str, Any]], paid: bool = True) -> None:
        self.status, self.verdicts, self.paid = status, verdicts, paid
        self.ran: list[list[str]] = []

    def __call__(self, args: list[str], stdout: Path | None) -> int:
        self.ran.append(args)
        if args[0] != "apply":
            return 0
        records = Path(args[args.index("--records-out") + 1])
        records.mkdir(parents=True, exist_ok=True)
        (records / "approvals.json").write_text(json.dumps({"verdicts": self.verdicts}))
        if self.paid:
            (records / "default").mkdir(exist_ok=True)
            (records / "default" / "2026-11-retainer.json").write_text(json.dumps(RECORD))
        return self.status


@dataclass
class Forged:
    """One forge: its adapter, how a merge is told to it, its records branch's files, how its
    records branch is refused, and how its record of the apply says the outcome."""

    forge: Forge
    merged: Callable[[str, int], None]
    files: Callable[[], dict[str, str]]
    refuse: Callable[[], None]
    recorded: Callable[[str], str]


def _github(history: History, tmp_path: Path) -> Iterator[Forged]:
    with FakeGitHub(TOKEN) as fake, GitHubForge(OWNER_REPO, Secret(TOKEN),
                                                api_url=fake.api_url) as forge:  # fmt: skip
        fake.state.remote = history.remote

        def merged(sha: str, number: int) -> None:
            fake.state.commit_pulls[sha] = [{"number": number, "merge_commit_sha": sha,
                                             "merged_at": "2026-11-30T10:00:00Z"}]  # fmt: skip

        def refuse() -> None:
            fake.faults[f"/repos/{OWNER_REPO}/git/blobs"] = 403

        def recorded(sha: str) -> str:
            ((landing, _),) = forge.landings(["default"], sha, "production")
            return landing.kind

        yield Forged(forge, merged, lambda: fake.branch_files(RECORDS_BRANCH), refuse, recorded)


def _gitlab(history: History, tmp_path: Path) -> Iterator[Forged]:
    with FakeGitLab(TOKEN) as fake, GitLabForge(fake.api_url, str(PROJECT_ID),
                                                Secret(TOKEN)) as forge:  # fmt: skip
        forge.outcomes = tmp_path / "outcomes"

        def merged(sha: str, number: int) -> None:
            fake.state.commit_merge_requests[sha] = [
                {"iid": number, "state": "merged", "merge_commit_sha": sha}
            ]

        def refuse() -> None:
            fake.faults[f"/api/v4/projects/{PROJECT_ID}/repository/commits"] = 403

        def recorded(sha: str) -> str:
            kept = json.loads((forge.outcomes / "default.json").read_text())
            assert kept["sha"] == sha
            return str(kept["kind"])

        files = lambda: fake.state.branches[RECORDS_BRANCH][1]  # noqa: E731
        yield Forged(forge, merged, files, refuse, recorded)


@pytest.fixture(params=[_github, _gitlab], ids=["github", "gitlab"])
def forged(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Forged, History]]:
    history = History(tmp_path / "history")
    yield from ((made, history) for made in request.param(history, tmp_path))


def _merge(made: Forged, history: History, tmp_path: Path) -> tuple[ApplyJob, Path, Reviewed]:
    history.commit({FILE: "version: 1\n"}, "one")
    merge = history.commit({FILE: "version: 1\nworkers: []\n"}, "the merge")
    made.merged(merge, 31)
    checkout = history.checkout(merge, tmp_path / "checkout")
    folder = tmp_path / "reviewed"
    folder.mkdir()
    (folder / "plan.json").write_text(json.dumps({"payruns": [{"id": "2026-11-retainer"}]}))
    job = ApplyJob(merge, "main", "production", "https://ci.example/run/1", tmp_path / "work")
    return job, checkout / FILE, Reviewed(folder, 31, "c" * 40)


def test_apply_is_told_the_requests_the_policy_s_commit_the_run_and_where_records_go(
    forged: tuple[Forged, History], tmp_path: Path
) -> None:
    made, history = forged
    job, path, reviewed = _merge(made, history, tmp_path)
    commands = Apply(0, [])
    land_fleet(made.forge, targets("production", path=path), lambda _: reviewed, job, commands)
    (apply,) = [args for args in commands.ran if args[0] == "apply"]
    told = dict(itertools.pairwise(apply))
    assert told["--approvals-from"] == "31"
    assert told["--policy-at"] == "none"  # never applied: the first policy needs no approval
    assert told["--run-url"] == "https://ci.example/run/1"
    assert told["--records-out"] == str(tmp_path / "work" / "default" / "records")


def test_a_paying_apply_names_the_approvers_and_what_waits_and_keeps_the_records(
    forged: tuple[Forged, History], tmp_path: Path
) -> None:
    made, history = forged
    job, path, reviewed = _merge(made, history, tmp_path)
    bonus = verdict("2026-11-bonus", ["bob"], "needs 2 of alice, bob, dave: has 1, 1 more needed",
                    "needs 2 of alice, bob, dave: 1 (bob at ccccccc)")  # fmt: skip
    bonus["not_counted"] = ["carol (#31): the author's approval never counts"]
    verdicts = [
        verdict("2026-11-retainer", ["alice", "bob"], None, "needs 2 of alice, bob, dave: 2"),
        bonus,
    ]
    ((landing, status),) = land_fleet(
        made.forge, targets("production", path=path), lambda _: reviewed, job, Apply(0, verdicts)
    )
    assert (landing.kind, status) == (APPLIED, 0)
    assert landing.description == (
        'waiting for approvals: paylist["2026-11-bonus"] needs 2 of alice, bob, dave: 1 '
        '(bob at ccccccc); approved: paylist["2026-11-retainer"] by alice, bob; '
        "the reviewed plan was applied: 1 payrun; "
        "not counted: carol (#31): the author's approval never counts"
    )
    assert made.recorded(job.sha) == APPLIED
    assert json.loads(made.files()["records/default/2026-11-retainer.json"]) == RECORD


def test_apply_exit_4_keeps_the_merge_pending_naming_the_policy_change(
    forged: tuple[Forged, History], tmp_path: Path
) -> None:
    made, history = forged
    job, path, reviewed = _merge(made, history, tmp_path)
    waits = verdict("policy.approvals", ["alice"], "needs 2 of alice, bob, dave: has 1",
                    "needs 2 of alice, bob, dave: 1 (alice at ccccccc)")  # fmt: skip
    commands = Apply(4, [waits], paid=False)
    ((landing, status),) = land_fleet(
        made.forge, targets("production", path=path), lambda _: reviewed, job, commands
    )
    assert (landing.kind, status) == (REFUSED, 4)
    assert "the change of its approvals policy waits for the approvals the policy in force " \
        "asks for (needs 2 of alice, bob, dave: 1 (alice at ccccccc)): nothing was applied " \
        in landing.description  # fmt: skip
    assert [args[0] for args in commands.ran] == ["apply"]  # not planned again
    assert made.recorded(job.sha) == REFUSED


def test_records_the_forge_refuses_are_said_and_fail_the_job(
    forged: tuple[Forged, History], tmp_path: Path
) -> None:
    made, history = forged
    job, path, reviewed = _merge(made, history, tmp_path)
    made.refuse()
    ((landing, status),) = land_fleet(
        made.forge, targets("production", path=path), lambda _: reviewed, job, Apply(0, [])
    )
    assert (landing.kind, status) == (APPLIED, 1)  # paid: the record of the apply says so
    assert f"its records could not be kept on {RECORDS_BRANCH}: " in landing.description
