"""Where the flow reads a saved plan or an apply job's outcome, a FIFO (or any non-regular
file) is refused at once with an error naming it, never read forever (issue 49, item 8)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from reconciler.errors import ReconcilerError
from reconciler.gitops.statuses import PlanStatus, describe
from tests.cli import reconciler
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab
from tests.gitops.test_gitlab_commands import _accounts

TOKEN = "glpat-regular"
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def test_a_fifo_where_a_saved_plan_is_is_refused_at_once(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    os.mkfifo(plans / "eu.json")
    said: list[Exception] = []

    def status() -> None:
        try:
            describe(PlanStatus(plan_result="success", names=("eu",), plans=plans), "Plan:")
        except Exception as error:  # what the reader raised, to assert on
            said.append(error)

    reader = threading.Thread(target=status, daemon=True)  # on a hang, left behind
    reader.start()
    reader.join(timeout=10)

    assert not reader.is_alive(), "reading a FIFO as a saved plan hangs"
    (error,) = said
    assert isinstance(error, ReconcilerError)
    assert "eu.json: cannot be read: not a regular file but a FIFO (named pipe)" in str(error)


def test_a_fifo_where_an_apply_job_s_outcome_is_is_refused(tmp_path: Path) -> None:
    _accounts(tmp_path, ["eu"])
    (tmp_path / "outcomes").mkdir()
    os.mkfifo(tmp_path / "outcomes" / "eu.json")

    with FakeGitLab(TOKEN) as gitlab:
        done = reconciler(
            "gitlab", "outcome-note", "--sha", "a" * 40, "--pipeline-url", "https://gitlab/p/1",
            cwd=tmp_path, CI_API_V4_URL=gitlab.api_url, CI_PROJECT_ID=str(PROJECT_ID),
            GITLAB_TOKEN=TOKEN, timeout=60,
        )  # fmt: skip

    assert done.returncode == 1
    assert "outcomes/eu.json: cannot be read: not a regular file but a FIFO" in done.stderr
    assert "Traceback" not in done.stderr and gitlab.state.notes == {}
