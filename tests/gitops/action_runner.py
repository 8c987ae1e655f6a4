"""Run the composite action's `run:` steps locally, as a GitHub runner would run them.

The action's scripts take every input from environment variables, so they run here unchanged;
this runner only evaluates the small `${{ }}` expressions of `env:` and `if:`, gives each step
its own GITHUB_OUTPUT file, and stands in for the steps that are GitHub's own actions
(setup-python is skipped; upload/download-artifact copy to and from a local store). The
reconciler is the worktree's, through a `reconciler` shim on PATH instead of `pip install`.
The apply mode reads git history: `History` is a repository's default branch, and
`History.checkout` what the workflow's `actions/checkout` with `fetch-depth: 0` gives the job
(the commit run at, and the default branch's head as `origin/main` when the job starts).
A step that adds more than GitHub's 1 MiB to the job summary fails the run, as GitHub drops it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests import warm
from tests.gitops.support import ROOT, job_environment

ACTION = ROOT / ".github" / "actions" / "reconciler" / "action.yml"
SUMMARY_LIMIT = 1024 * 1024  # GitHub's limit on one step's job summary, in bytes
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_KEYED_NAME = re.compile(r"inputs\.key && format\('-\{0\}', inputs\.key\) \|\| ''")
_CONDITION = re.compile(r"(steps\.\w+\.outputs\.[\w-]+|inputs\.[\w-]+) (==|!=) '([^']*)'")


_GIT = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
}  # fmt: skip


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **_GIT})  # fmt: skip
    return done.stdout.strip()


@dataclass
class History:
    """A repository on GitHub (a bare remote) and a clone its pull requests are made in."""

    folder: Path

    def __post_init__(self) -> None:
        self.remote, self.work = self.folder / "remote.git", self.folder / "work"
        self.folder.mkdir(parents=True)
        git(self.folder, "init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        git(self.folder, "clone", "--quiet", str(self.remote), str(self.work))
        git(self.work, "symbolic-ref", "HEAD", "refs/heads/main")

    def commit(self, files: dict[str, str], message: str, branch: str = "main") -> str:
        """Commit `files` on `branch` (made from main if new), pushed; its SHA."""
        known = git(self.work, "branch", "--list", "--format=%(refname:short)").split()
        if branch not in known and branch != "main":
            git(self.work, "checkout", "--quiet", "-b", branch, "main")
        elif branch in known:
            git(self.work, "checkout", "--quiet", branch)
        for name, text in files.items():
            (self.work / name).parent.mkdir(parents=True, exist_ok=True)
            (self.work / name).write_text(text)
        git(self.work, "add", "-A")
        git(self.work, "commit", "--quiet", "--allow-empty", "-m", message)
        git(self.work, "push", "--quiet", "origin", branch)
        if "main" in git(self.work, "branch", "--list", "--format=%(refname:short)").split():
            git(self.work, "checkout", "--quiet", "main")
        return git(self.work, "rev-parse", branch)

    def merge(self, branch: str, pr: int) -> str:
        """Merge `branch` into main (a merge commit), pushed; its SHA."""
        git(self.work, "checkout", "--quiet", "main")
        git(self.work, "merge", "--quiet", "--no-ff", branch, "-m", f"Merge pull request #{pr}")
        git(self.work, "push", "--quiet", "origin", "main")
        return git(self.work, "rev-parse", "main")

    def checkout(self, sha: str, dest: Path, *, pushed: bool = True) -> Path:
        """`actions/checkout` at `sha` with its history (fetch-depth: 0), as the job starts.

        As actions/checkout does for a run of a push to main (`pushed`): when main has moved
        since (a re-run, a late approval, a queued run), it fetches again
        `+<sha>:refs/remotes/origin/main`, so the checkout's `origin/main` is the run's commit,
        never main's head now."""
        git(self.folder, "clone", "--quiet", "--no-checkout", str(self.remote), str(dest))
        if pushed:
            git(dest, "update-ref", "refs/remotes/origin/main", sha)
        git(dest, "-c", "advice.detachedHead=false", "checkout", "--quiet", sha)
        return dest


@dataclass
class StepRun:
    name: str
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Job:
    """One run of the action: its inputs, and what it left behind."""

    inputs: dict[str, str]
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    context: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, Path] = field(default_factory=dict)  # name -> directory
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    steps: list[StepRun] = field(default_factory=list)
    summary: str = ""
    #: The job's working directory, where `actions/checkout` put the repository (its
    #: GITHUB_WORKSPACE); the reconciler's own tree unless a test checks one out.
    cwd: Path = ROOT

    @property
    def failed(self) -> StepRun | None:
        return next((step for step in self.steps if step.returncode != 0), None)

    def step(self, name: str) -> StepRun:
        return next(step for step in self.steps if step.name == name)


def action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text())


def run_action(job: Job) -> Job:
    """Run the action's steps for `job.inputs` until one fails, as a runner would."""
    spec = action()
    job.context.setdefault("github.event.repository.default_branch", "main")
    job.env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "7001", **job.env}
    for name, declared in spec["inputs"].items():
        job.inputs.setdefault(name, declared.get("default", ""))
    runner_temp = job.workdir / "runner-temp"
    runner_temp.mkdir(parents=True, exist_ok=True)
    shim = job.workdir / "bin"
    shim.mkdir(exist_ok=True)
    warm.shim(shim / "reconciler")
    summary = job.workdir / "step-summary.md"
    summary.touch()
    failed = False
    for index, step in enumerate(spec["runs"]["steps"]):
        name = step.get("name", step.get("uses", f"step {index}"))
        if failed and not str(step.get("if", "")).startswith("always() && "):
            continue  # after a failure only the steps that say `always()` run
        if "if" in step and not _condition(step["if"], job):
            continue
        if "uses" in step:
            _stand_in(step, job, runner_temp)
            continue
        if name == "Install the reconciler":
            continue  # the shim stands in for pip install
        output = job.workdir / f"output-{index}"
        output.write_text("")
        env = job_environment(
            PATH=f"{shim}:{job_environment()['PATH']}",
            RUNNER_TEMP=str(runner_temp),
            GITHUB_OUTPUT=str(output),
            GITHUB_STEP_SUMMARY=str(summary),
            GITHUB_ACTION_PATH=str(ACTION.parent),
            **job.env,
        )
        env |= {
            key: _evaluate(str(value), job, runner_temp)
            for key, value in step.get("env", {}).items()
        }
        summary_before = summary.stat().st_size
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            capture_output=True,
            text=True,
            env=env,
            cwd=job.cwd,
            timeout=300,
        )
        job.steps.append(StepRun(name, done.returncode, done.stdout, done.stderr))
        added = summary.stat().st_size - summary_before
        assert added <= SUMMARY_LIMIT, f"{name}: {added:,} bytes of job summary; GitHub drops it"
        if "id" in step:
            job.outputs[step["id"]] = dict(
                line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
            )
        failed = failed or done.returncode != 0
    job.summary = summary.read_text()
    return job


def _stand_in(step: dict[str, Any], job: Job, runner_temp: Path) -> None:
    uses = step["uses"]
    settings = {
        key: _evaluate(str(value), job, runner_temp) for key, value in step.get("with", {}).items()
    }
    if uses.startswith("actions/setup-python@"):
        return
    if uses.startswith("actions/upload-artifact@"):
        stored = job.workdir / "artifacts" / settings["name"]
        shutil.copytree(settings["path"], stored, dirs_exist_ok=True)
        job.artifacts[settings["name"]] = stored
        return
    if uses.startswith("actions/download-artifact@"):
        key = f"{settings['run-id']}/{settings['name']}"
        shutil.copytree(job.artifacts[key], settings["path"], dirs_exist_ok=True)
        job.steps.append(StepRun(f"download {key}", 0, "", ""))
        return
    raise AssertionError(f"the runner has no stand-in for {uses}")


def _evaluate(text: str, job: Job, runner_temp: Path) -> str:
    def value(match: re.Match[str]) -> str:
        expression = match.group(1)
        if _KEYED_NAME.fullmatch(expression):
            return f"-{job.inputs['key']}" if job.inputs["key"] else ""
        return _lookup(expression, job, runner_temp)

    return _EXPRESSION.sub(value, text)


def _lookup(expression: str, job: Job, runner_temp: Path) -> str:
    if expression == "runner.temp":
        return str(runner_temp)
    if expression.startswith("inputs."):
        return job.inputs[expression.removeprefix("inputs.")]
    if expression.startswith("steps."):
        _, step_id, _, name = expression.split(".")
        return job.outputs.get(step_id, {}).get(name, "")
    if expression in job.context:
        return job.context[expression]
    raise AssertionError(f"the runner cannot evaluate ${{{{ {expression} }}}}")


def _condition(text: str, job: Job) -> bool:
    verdict = True
    for part in text.removeprefix("always() && ").split(" && "):
        match = _CONDITION.fullmatch(part.strip())
        if match is None:
            raise AssertionError(f"the runner cannot evaluate if: {text}")
        left, operator, right = match.groups()
        found = _lookup(left, job, Path())
        verdict = verdict and ((found == right) if operator == "==" else (found != right))
    return verdict
