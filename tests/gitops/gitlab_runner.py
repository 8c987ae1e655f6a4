"""Run a job of examples/gitlab/accounts.gitlab-ci.yml locally, as GitLab would.

The job's `default:before_script` and `script` run as written, in one bash with `-eo pipefail`
(what GitLab's shell runner does), in a clone of the test's repository at the pipeline's
commit. GitLab's side is stood in for: the pipeline's variables (`CI_*`), the variables of the
environment the job's `environment:name` names and those only (plus the unscoped ones), the
artifacts of the jobs it `needs` extracted into its workspace, its own `artifacts:paths` kept,
the job's `rules` and the pipeline's `workflow:rules` evaluated (`$A == "x"`, `$A == $B`,
`&&`), a `parallel:matrix` entry given as `matrix`. `pip install` is a no-op: the reconciler is
this worktree's (a shim).
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


@dataclass
class GitLabRunner:
    """One project: its git remote, its environments' variables and its unscoped ones."""

    workdir: Path
    remote: Path
    environments: dict[str, dict[str, str]]
    variables: dict[str, str] = field(default_factory=dict)  # unscoped: every job has them
    runs: list[GitLabJob] = field(default_factory=list)

    def run(
        self,
        name: str,
        pipeline: dict[str, str],
        *,
        matrix: dict[str, str] | None = None,
        needs: tuple[GitLabJob, ...] = (),
    ) -> GitLabJob:
        """The job `name` of the pipeline whose predefined variables are `pipeline` (with
        CI_COMMIT_SHA, the commit it runs at)."""
        spec = yaml.safe_load(PIPELINE.read_text())
        job = spec[name]
        matrix = matrix or {}
        scope = {**pipeline, **matrix}
        environment = _environment(job, scope)
        run = GitLabJob(name, matrix, environment)
        self.runs.append(run)
        workflow = spec.get("workflow", {}).get("rules", [])
        if not _any_rule(workflow, scope) or not _any_rule(job.get("rules", []), scope):
            run.ran = False
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
    (shim / "reconciler").write_text(
        f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m reconciler "$@"\n'
    )
    (shim / "pip").write_text("#!/bin/sh\nexit 0\n")  # the reconciler is this worktree's
    (shim / "python").symlink_to(sys.executable)
    for tool in ("reconciler", "pip"):
        (shim / tool).chmod(0o755)
