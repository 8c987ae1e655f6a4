"""Run a job of examples/gitlab/accounts.gitlab-ci.yml locally, as GitLab would.

The job's `default:before_script` and `script` run as written, in one bash with `-eo pipefail`
(what GitLab's shell runner does), in a clone of the test's repository at the pipeline's
commit. GitLab's side is stood in for: the pipeline's variables (`CI_*`), the variables of the
environment the job's `environment:name` names and those only (plus the unscoped ones), the
artifacts of the jobs it `needs` extracted into its workspace, its own `artifacts:paths` kept,
the job's `rules` and the pipeline's `workflow:rules` evaluated (`$A == "x"`, `$A == $B`,
`&&`), a `parallel:matrix` entry given as `matrix`. `pip install` is a no-op: the reconciler is
this worktree's (a shim). With a fake GitLab, a job whose environment deploys (no `action`, or
`start`) is a deployment there whose status follows the job's, as GitLab makes it; a trigger
job's child pipeline is read from the artifact it includes, with the variables it forwards.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests import warm
from tests.gitops.fake_gitlab import FakeGitLab
from tests.gitops.support import ROOT, job_environment

PIPELINE = ROOT / "examples" / "gitlab" / "accounts.gitlab-ci.yml"
_COMPARISON = re.compile(r'^\s*(\$\w+|"[^"]*")\s*(==|!=)\s*(\$\w+|"[^"]*")\s*$')


@dataclass
class GitLabJob:
    """One job (one matrix entry) of a pipeline: whether it ran, what it said and kept."""

    name: str
    matrix: dict[str, str]
    environment: str | None
    ran: bool = True
    returncode: int = 0
    log: str = ""
    #: The job's `artifacts:paths`, kept relative to its workspace (None: nothing kept).
    artifacts: Path | None = None
    url: str = ""


@dataclass(frozen=True)
class ChildPipeline:
    """A trigger job's child pipeline: its file and the variables its jobs are given."""

    file: Path
    variables: dict[str, str]

    def matrix(self, name: str) -> list[dict[str, str]]:
        """The matrix entries of the job `name` (through its `extends`), one per job."""
        spec = yaml.safe_load(self.file.read_text())
        job = spec[name]
        parallel = job.get("parallel") or spec[job["extends"]]["parallel"]
        return [
            {key: value for key, value in zip(entry, values, strict=True)}
            for entry in parallel["matrix"]
            for values in _product([entry[key] for key in entry])
        ]


@dataclass
class GitLabRunner:
    """One project: its git remote, its environments' variables and its unscoped ones."""

    workdir: Path
    remote: Path
    environments: dict[str, dict[str, str]]
    variables: dict[str, str] = field(default_factory=dict)  # unscoped: every job has them
    runs: list[GitLabJob] = field(default_factory=list)
    gitlab: FakeGitLab | None = None  # where deployments are made

    def run(
        self,
        name: str,
        pipeline: dict[str, str],
        *,
        matrix: dict[str, str] | None = None,
        needs: tuple[GitLabJob, ...] = (),
        file: Path = PIPELINE,
        cancelled: bool = False,
    ) -> GitLabJob:
        """The job `name` of the pipeline (`file`) whose predefined variables are `pipeline`
        (with CI_COMMIT_SHA, the commit it runs at); `cancelled`: cancelled before it ran."""
        spec = yaml.safe_load(file.read_text())
        job = spec[name]
        matrix = matrix or {}
        job_id = 9000 + len(self.runs)
        url = f"https://gitlab.example.com/platform/workforce/-/jobs/{job_id}"
        pipeline_url = "https://gitlab.example.com/platform/workforce/-/pipelines/" + (
            pipeline.get("CI_PIPELINE_ID") or "1"
        )
        scope = {"CI_JOB_ID": str(job_id), "CI_JOB_URL": url, "CI_PIPELINE_URL": pipeline_url,
                 **pipeline, **matrix}  # fmt: skip
        environment = _environment(job, scope)
        run = GitLabJob(name, matrix, environment, url=url)
        self.runs.append(run)
        workflow = spec.get("workflow", {}).get("rules", [])
        if not _any_rule(workflow, scope) or not _any_rule(job.get("rules", []), scope):
            run.ran = False
            return run
        deploys = (
            environment is not None
            and self.gitlab is not None
            and (job["environment"].get("action", "start") == "start")
        )
        deployment = (
            self.gitlab.deploy(environment, pipeline["CI_COMMIT_SHA"], url, "running")
            if deploys and self.gitlab is not None and environment is not None
            else None
        )
        if cancelled:
            run.ran, run.returncode = False, -1
            if deployment is not None:
                deployment["status"] = "canceled"
            return run
        where = self.workdir / f"{name}-{len(self.runs)}"
        workspace, shim = where / "workspace", where / "bin"
        shim.mkdir(parents=True)
        _shims(shim)
        git = ["git", "-c", "advice.detachedHead=false"]
        subprocess.run([*git, "clone", "--quiet", str(self.remote), str(workspace)], check=True)
        subprocess.run(
            [*git, "-C", str(workspace), "checkout", "--quiet", pipeline["CI_COMMIT_SHA"]],
            check=True,
        )
        for needed in needs:  # the artifacts of the jobs it needs, in its workspace
            if needed.artifacts is not None:
                shutil.copytree(needed.artifacts, workspace, dirs_exist_ok=True)
        # GitLab gives a job its environment's variables, and those only, with the unscoped.
        secrets = self.environments.get(environment, {}) if environment else {}
        env = {
            **job_environment(),
            "PATH": f"{shim}:{job_environment()['PATH']}",
            **{key: str(value) for key, value in (spec.get("variables") or {}).items()},
            **self.variables,
            **secrets,
            **scope,
        }
        script = _flat([*spec["default"].get("before_script", []), *job["script"]])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", "\n".join(script)],
            capture_output=True, text=True, env=env, cwd=workspace, timeout=300,
        )  # fmt: skip
        run.returncode, run.log = done.returncode, done.stdout + done.stderr
        if deployment is not None:  # an allowed failure is a failed job all the same
            deployment["status"] = "success" if done.returncode == 0 else "failed"
        kept = job.get("artifacts")
        if kept and (done.returncode == 0 or kept.get("when") == "always"):
            run.artifacts = where / "artifacts"
            run.artifacts.mkdir()
            for path in kept["paths"]:
                source = workspace / path
                if source.is_dir():
                    shutil.copytree(source, run.artifacts / path)
                elif source.is_file():
                    shutil.copy2(source, run.artifacts / path)
        return run

    def trigger(
        self, name: str, pipeline: dict[str, str], *, needs: tuple[GitLabJob, ...]
    ) -> ChildPipeline:
        """The child pipeline of the trigger job `name`: `trigger:include:artifact` of the job
        it names (among `needs`), run with the variables the trigger job and the file forward
        (expanded in the parent's), as GitLab's `parent_pipeline` source."""
        spec = yaml.safe_load(PIPELINE.read_text())
        job = spec[name]
        workflow = spec.get("workflow", {}).get("rules", [])
        assert _any_rule(workflow, pipeline) and _any_rule(job.get("rules", []), pipeline)
        (include,) = job["trigger"]["include"]
        (source,) = [n for n in needs if n.name == include["job"]]
        assert source.returncode == 0 and source.artifacts is not None, source.log
        forwarded = {**(spec.get("variables") or {}), **(job.get("variables") or {})}
        expanded = {
            key: re.sub(r"\$(\w+)", lambda m: pipeline.get(m[1], ""), str(value))
            for key, value in forwarded.items()
        }
        inherited = {
            key: value for key, value in pipeline.items()
            if not key.startswith("CI_MERGE_REQUEST_") and key != "CI_PIPELINE_SOURCE"
        }  # fmt: skip
        variables = {**inherited, **expanded, "CI_PIPELINE_SOURCE": "parent_pipeline"}
        return ChildPipeline(source.artifacts / include["artifact"], variables)


def _product(lists: list[Any]) -> list[tuple[str, ...]]:
    import itertools

    return list(itertools.product(*[v if isinstance(v, list) else [v] for v in lists]))


def _environment(job: dict[str, Any], scope: dict[str, str]) -> str | None:
    name = (job.get("environment") or {}).get("name")
    if name is None:
        return None
    return re.sub(r"\$(\w+)", lambda m: scope.get(m[1], ""), name)


def _any_rule(rules: list[dict[str, Any]], scope: dict[str, str]) -> bool:
    """GitLab's `rules:` with `if:` only: the first that matches runs the job; none, no job."""
    return not rules or any(_holds(rule["if"], scope) for rule in rules)


def _holds(condition: str, scope: dict[str, str]) -> bool:
    def value(term: str) -> str:
        return scope.get(term[1:], "") if term.startswith("$") else term[1:-1]

    for part in condition.split("&&"):
        match = _COMPARISON.match(part)
        assert match, f"the runner cannot read the rule {condition!r}"
        left, operator, right = match.groups()
        if (value(left) == value(right)) != (operator == "=="):
            return False
    return True


def _flat(lines: list[Any]) -> list[str]:
    return [str(x) for line in lines for x in (_flat(line) if isinstance(line, list) else [line])]


def _shims(shim: Path) -> None:
    warm.shim(shim / "reconciler", this_checkout=True)
    (shim / "pip").write_text("#!/bin/sh\nexit 0\n")  # the reconciler is this worktree's
    (shim / "python").symlink_to(sys.executable)
    for tool in ("reconciler", "pip"):
        (shim / tool).chmod(0o755)
