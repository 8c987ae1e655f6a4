"""The GitLab pipeline's own commands, run as a user does: `reconciler gitlab child-pipeline`
writes one job per account of reconciler.yaml (and refuses what GitLab would not run), and
`reconciler gitlab outcome-note` refuses an outcome file no apply job wrote, each with a clear
message, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli import reconciler
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab

TOKEN = "glpat-commands"


def _accounts(folder: Path, names: list[str]) -> Path:
    entries = "".join(
        f"  - name: {name}\n    path: accounts/{name}\n    baseUrl: https://{name}.example.com\n"
        f"    tokenEnv: RECONCILER_TOKEN_{name.upper().replace('-', '_')}\n"
        for name in names
    )
    (folder / "reconciler.yaml").write_text(f"version: 1\naccounts:\n{entries}")
    for name in names:
        (folder / "accounts" / name).mkdir(parents=True)
    return folder / "reconciler.yaml"


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    with FakeGitLab(TOKEN) as fake:
        yield fake


def test_the_child_pipeline_has_a_job_per_account_of_reconciler_yaml(tmp_path: Path) -> None:
    _accounts(tmp_path, ["eu", "us", "uk-south"])

    done = reconciler("gitlab", "child-pipeline", "--out", "child.yml", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child.yml: 3 accounts: eu us uk-south"
    child = yaml.safe_load((tmp_path / "child.yml").read_text())
    assert child[".every-account"]["parallel"]["matrix"] == [{"ACCOUNT": ["eu", "us", "uk-south"]}]
    assert child["apply"]["allow_failure"] == {"exit_codes": [3]}  # superseded: no success


def test_the_child_pipeline_refuses_more_accounts_than_gitlab_runs(tmp_path: Path) -> None:
    _accounts(tmp_path, [f"a{number}" for number in range(201)])

    done = reconciler("gitlab", "child-pipeline", "--out", "child.yml", cwd=tmp_path)

    assert done.returncode == 1
    assert "reconciler.yaml has 201 accounts: GitLab runs at most 200 jobs" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "child.yml").exists()


def test_an_outcome_no_apply_job_wrote_is_refused(tmp_path: Path, gitlab: FakeGitLab) -> None:
    _accounts(tmp_path, ["eu"])
    (tmp_path / "outcomes").mkdir()
    (tmp_path / "outcomes" / "eu.json").write_text(json.dumps({"account": "eu"}))

    done = reconciler(
        "gitlab", "outcome-note", "--sha", "a" * 40, "--pipeline-url", "https://gitlab/p/1",
        cwd=tmp_path, CI_API_V4_URL=gitlab.api_url, CI_PROJECT_ID=str(PROJECT_ID),
        GITLAB_TOKEN=TOKEN,
    )  # fmt: skip

    assert done.returncode == 1
    assert "outcomes/eu.json: not an apply job's outcome" in done.stderr
    assert "Traceback" not in done.stderr and gitlab.state.notes == {}
