"""Run a workflow of examples/github/accounts/ locally, job by job, as GitHub would.

The workflows' scripts take every value from environment variables, so they run here as they
are, with bash -eo pipefail, in a workspace folder. This runner evaluates the `${{ }}`
expressions the workflows use (contexts, `||`, `&&`, `!`, `==`, `format`, `fromJSON`), expands
a job's matrix, and gives each job the secrets of the environment its `environment:` names, and
those only, as GitHub does. GitHub's own actions have stand-ins: checkout clones the test's
repository at the ref (sparse as asked; of that commit alone unless `fetch-depth: 0`, as
actions/checkout fetches), the artifacts go to and come from a local store, and
the install action is a `reconciler` shim for this worktree. GitHub's API is the test's fake
(`reconciler github ...` reads GITHUB_API_URL): the pull request's head, its comments, its runs
and artifacts.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests import warm
from tests.gitops.support import job_environment

_TOKEN = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|,|'(?:[^']|'')*'|[A-Za-z_][\w.\-]*)")


@dataclass
class JobRun:
    """One job (one matrix entry) of a workflow run: what it saw and what it left."""

    name: str
    matrix: dict[str, str]
    environment: str
    returncode: int = 0
    logs: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class Runner:
    """One repository: its git remote, its environments' secrets, variables, GitHub's fake."""

    workdir: Path
    remote: Path
    environments: dict[str, dict[str, str]]
    github_token: str
    github_api_url: str
    variables: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, Path] = field(default_factory=dict)
    #: (run id, name) -> the artifact that run uploaded: `download-artifact` with a `run-id`
    #: takes the named artifact of that run only, as GitHub does.
    uploaded: dict[tuple[str, str], Path] = field(default_factory=dict)
    runs: list[JobRun] = field(default_factory=list)

    def run(
        self,
        workflow: Path,
        *,
        sha: str,
        event: dict[str, Any],
        inputs: dict[str, str],
        run_id: str = "5001",
        rerun_failed: dict[str, list[JobRun]] | None = None,
    ) -> dict[str, list[JobRun]]:
        """Every job of `workflow` in order (they are written in the order of their needs).
        With `rerun_failed`, an earlier attempt of the run: its jobs that passed are kept as
        they were, with their outputs; those that failed, and the jobs that need them, run again
        ("Re-run failed jobs")."""
        spec = yaml.safe_load(workflow.read_text())
        done: dict[str, list[JobRun]] = {}
        again: set[str] = set()
        for name, job in spec["jobs"].items():
            kept = (rerun_failed or {}).get(name)
            passed = kept is not None and all(run.returncode == 0 for run in kept)
            if rerun_failed is not None and passed and not again & set(_needs(job)):
                done[name] = kept or []
                continue
            again.add(name)
            context = {
                "github": {"sha": sha, "event": event, "repository": "octo-org/workforce",
                           "run_id": run_id},
                "inputs": inputs,
                "vars": self.variables,
                "needs": {need: {"result": _result(done[need]),
                                 "outputs": done[need][0].outputs if done[need] else {}}
                          for need in _needs(job)},
                "runner": {"temp": ""},
            }  # fmt: skip
            if "if" in job and not condition(job["if"], context):
                done[name] = []
                continue
            entries: list[dict[str, str]] = [{}]
            if "strategy" in job:
                entries = evaluate(job["strategy"]["matrix"], context)["include"]
            done[name] = []
            for index, entry in enumerate(entries):
                scope = {**context, "matrix": entry, "strategy": {"job-index": str(index)}}
                done[name].append(self._job(name, job, scope))
        return done

    def _job(self, name: str, job: dict[str, Any], context: dict[str, Any]) -> JobRun:
        environment = str(evaluate(job.get("environment", ""), context))
        where = self.workdir / f"{name}-{len(self.runs)}"
        workspace, temp, shim = where / "workspace", where / "temp", where / "bin"
        for folder in (workspace, temp, shim):
            folder.mkdir(parents=True)
        self._shims(shim)
        run = JobRun(name, context.get("matrix", {}), environment)
        self.runs.append(run)
        # A job reads only its environment's secrets (and its GITHUB_TOKEN), as on GitHub.
        secrets = {**self.environments.get(environment, {}), "GITHUB_TOKEN": self.github_token}
        context = {**context, "secrets": secrets, "runner": {"temp": str(temp)}, "steps": {}}
        summary = where / "summary.md"
        summary.touch()
        for index, step in enumerate(job["steps"]):
            if "if" in step and not condition(step["if"], context):
                continue
            settings = {k: str(evaluate(v, context)) for k, v in (step.get("with") or {}).items()}
            if "uses" in step:
                self._stand_in(step["uses"], settings, workspace, context)
                continue
            output = where / f"output-{index}"
            output.touch()
            env = job_environment(
                PATH=f"{shim}:{job_environment()['PATH']}",
                RUNNER_TEMP=str(temp),
                GITHUB_OUTPUT=str(output),
                GITHUB_STEP_SUMMARY=str(summary),
                GITHUB_WORKSPACE=str(workspace),
                GITHUB_SHA=context["github"]["sha"],
                GITHUB_RUN_ID=context["github"]["run_id"],
                GITHUB_SERVER_URL="https://github.com",
                GITHUB_REPOSITORY=context["github"]["repository"],
                GITHUB_API_URL=self.github_api_url,
            )
            env |= {k: str(evaluate(v, context)) for k, v in (step.get("env") or {}).items()}
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                capture_output=True, text=True, env=env, cwd=workspace, timeout=300,
            )  # fmt: skip
            run.logs.append(done.stdout + done.stderr)
            values = dict(line.split("=", 1) for line in output.read_text().splitlines())
            if "id" in step:
                context["steps"][step["id"]] = {"outputs": values}
            if done.returncode != 0:
                run.returncode = done.returncode
                break
        run.outputs = {
            key: str(evaluate(value, context)) for key, value in (job.get("outputs") or {}).items()
        }
        return run

    def _shims(self, shim: Path) -> None:
        warm.shim(shim / "reconciler", this_checkout=True)

    def _stand_in(
        self, uses: str, settings: dict[str, str], workspace: Path, context: dict[str, Any]
    ) -> None:
        if uses.startswith("actions/checkout@"):
            dest = workspace / settings.get("path", "")
            if dest.exists():
                shutil.rmtree(dest)
            git = ["git", "-c", "advice.detachedHead=false"]
            ref = settings.get("ref") or context["github"]["sha"]
            depth = int(settings.get("fetch-depth", "1"))  # actions/checkout's default: 1
            if depth > 0:  # a shallow clone of the commit alone, as actions/checkout fetches it
                subprocess.run([*git, "init", "--quiet", str(dest)], check=True)
                subprocess.run([*git, "-C", str(dest), "remote", "add", "origin",
                                self.remote.as_uri()], check=True)  # fmt: skip
                subprocess.run([*git, "-C", str(dest), "fetch", "--quiet", f"--depth={depth}",
                                "origin", ref], check=True)  # fmt: skip
            else:
                subprocess.run([*git, "clone", "--quiet", "--no-checkout", str(self.remote),
                                str(dest)], check=True)  # fmt: skip
            if "sparse-checkout" in settings:
                cone = settings.get("sparse-checkout-cone-mode", "true").lower() != "false"
                subprocess.run(
                    [*git, "-C", str(dest), "sparse-checkout", "set",
                     "--cone" if cone else "--no-cone", *settings["sparse-checkout"].split()],
                    check=True,
                )  # fmt: skip
            if not settings.get("ref"):  # as actions/checkout: origin/<branch> is the run's commit
                branch = context["github"]["event"].get("repository", {}).get("default_branch")
                tracking = f"refs/remotes/origin/{branch or 'main'}"
                subprocess.run([*git, "-C", str(dest), "update-ref", tracking, ref], check=True)
            subprocess.run([*git, "-C", str(dest), "checkout", "--quiet", ref], check=True)
            return
        if "/.github/actions/reconciler-install@" in uses:
            return  # the shim stands in for the install
        if uses.startswith("actions/upload-artifact@"):
            source = Path(settings["path"])
            if source.exists() and any(p.is_file() for p in source.rglob("*")):
                kept = self.workdir / "artifacts" / context["github"]["run_id"] / settings["name"]
                shutil.copytree(source, kept)
                self.artifacts[settings["name"]] = kept
                self.uploaded[(context["github"]["run_id"], settings["name"])] = kept
            elif settings.get("if-no-files-found") == "error":
                raise AssertionError(f"upload-artifact: no files for {settings['name']}")
            return
        if uses.startswith("actions/download-artifact@"):
            names = [settings["name"]] if "name" in settings else [
                name for name in self.artifacts if fnmatch.fnmatch(name, settings["pattern"])
            ]  # fmt: skip
            for name in names:
                target = Path(settings["path"])
                if "name" not in settings and settings.get("merge-multiple", "").lower() != "true":
                    target = target / name
                kept = self.artifacts[name]
                if settings.get("run-id"):  # another run's artifact: that run's, or none
                    kept = self.uploaded[(settings["run-id"], name)]
                shutil.copytree(kept, target, dirs_exist_ok=True)
            return
        raise AssertionError(f"the runner has no stand-in for {uses}")


def _needs(job: dict[str, Any]) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def _result(runs: list[JobRun]) -> str:
    if not runs:
        return "skipped"
    return "success" if all(run.returncode == 0 for run in runs) else "failure"


def _truthy(value: Any) -> bool:
    return value not in ("", None, False, 0)


def condition(node: Any, context: dict[str, Any]) -> bool:
    """An `if:`: an expression, with or without its `${{ }}`."""
    text = str(node).strip()
    whole = re.fullmatch(r"\$\{\{\s*(.*?)\s*\}\}", text, re.S)
    return _truthy(_Expression(whole[1] if whole else text, context).value())


def evaluate(node: Any, context: dict[str, Any]) -> Any:
    """A value of a workflow with its `${{ }}` expressions evaluated."""
    if not isinstance(node, str):
        return node
    whole = re.fullmatch(r"\$\{\{\s*(.*?)\s*\}\}", node, re.S)
    if whole:
        return _Expression(whole[1], context).value()
    return re.sub(
        r"\$\{\{\s*(.*?)\s*\}\}",
        lambda match: _text(_Expression(match[1], context).value()),
        node,
    )


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


class _Expression:
    """The part of GitHub's expression language the workflows use."""

    def __init__(self, text: str, context: dict[str, Any]) -> None:
        self.tokens = _TOKEN.findall(text)
        assert "".join(self.tokens) == re.sub(r"\s+", "", text), f"cannot read {text!r}"
        self.context = context
        self.at = 0

    def value(self) -> Any:
        result = self._or()
        assert self.at == len(self.tokens), f"cannot read {self.tokens[self.at :]}"
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1]

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if _truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == "&&":
            self._take()
            right = self._compare()
            left = right if _truthy(left) else left
        return left

    def _compare(self) -> Any:
        left = self._unary()
        if self._peek() in ("==", "!="):
            operator = self._take()
            right = self._unary()
            same = _text(left).lower() == _text(right).lower()
            return same if operator == "==" else not same
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        token = self._take()
        if token == "(":
            inner = self._or()
            assert self._take() == ")"
            return inner
        if token.startswith("'"):
            return token[1:-1].replace("''", "'")
        if self._peek() == "(":
            self._take()
            arguments = []
            while self._peek() != ")":
                arguments.append(self._or())
                if self._peek() == ",":
                    self._take()
            self._take()
            return self._call(token, arguments)
        value: Any = self.context
        for part in token.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value

    def _call(self, name: str, arguments: list[Any]) -> Any:
        if name == "format":
            template, *values = arguments
            return re.sub(r"\{(\d+)\}", lambda m: _text(values[int(m[1])]), template)
        if name == "fromJSON":
            return json.loads(arguments[0])
        if name in ("cancelled", "failure"):
            return False
        if name in ("always", "success"):
            return True
        raise AssertionError(f"the runner has no function {name}()")
