"""Can code a pull request controls read a secret? A reading of a workflow's jobs.

"Code from the pull request" runs in a job when
- the workflow itself comes from the pull request: a `pull_request` (or review) trigger runs
  the workflow file of the pull request's merge commit, so the branch can rewrite every step;
- or the job checks out the pull request (a `ref:` naming its head, `refs/pull/...`, a
  dispatched input, a workflow_run's head) and then executes what it checked out: a
  `uses: ./...` action, a `run:` in that folder (`working-directory:`), a `run:` naming the
  folder with something that executes (python, pip install, bash, sh, source, make, npm, node,
  `./`), or any `run:` or local action at all when the checkout went into the workspace root,
  where every relative path is the pull request's.
A secret in reach is any `secrets.NAME` other than GITHUB_TOKEN referenced in the job (its
env, a step's env or `with:`), or `secrets: inherit`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Triggers whose workflow file is the pull request's own.
PR_WORKFLOW_TRIGGERS = frozenset(
    {"pull_request", "pull_request_review", "pull_request_review_comment"}
)
_SECRET = re.compile(r"secrets\.([A-Za-z_][A-Za-z0-9_]*)")
_PR_REF = re.compile(
    r"pull_request\.head|github\.head_ref|refs/pull/|workflow_run\.head|inputs\.|"
    r"github\.event\.issue|client_payload"
)
_EXECUTES = re.compile(
    r"\b(python3?|pip3?\s+install|bash|sh|source|make|npm|npx|node|yarn|pnpm|go\s+run)\b|\./"
)


@dataclass(frozen=True, slots=True)
class Finding:
    job: str
    why: str


def triggers(workflow: dict[Any, Any]) -> set[str]:
    # YAML reads the key `on` as True.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return set(on)
    return set(on or {})


def secrets_in(node: Any) -> set[str]:
    text = repr(node)
    found = set(_SECRET.findall(text)) - {"GITHUB_TOKEN"}
    if "'secrets': 'inherit'" in text:
        found.add("(inherit)")
    return found


def findings(workflow: dict[Any, Any]) -> list[Finding]:
    """Each job in which code from a pull request can read a secret other than GITHUB_TOKEN."""
    out = []
    on = triggers(workflow)
    workflow_level = secrets_in(workflow.get("env", {}))
    for name, job in (workflow.get("jobs") or {}).items():
        held = secrets_in(job) | workflow_level
        if not held:
            continue
        if on & PR_WORKFLOW_TRIGGERS:
            trigger = sorted(on & PR_WORKFLOW_TRIGGERS)[0]
            out.append(Finding(name, f"{trigger} runs the pull request's own workflow, which "
                                     f"can read {sorted(held)}"))  # fmt: skip
            continue
        executed = _executes_pull_request_code(job)
        if executed:
            out.append(Finding(name, f"{executed}, with {sorted(held)} in reach"))
    return out


def _executes_pull_request_code(job: dict[str, Any]) -> str | None:
    checkouts: list[str] = []  # folders holding the pull request's files ("" is the root)
    for step in job.get("steps") or []:
        uses = str(step.get("uses", ""))
        settings = step.get("with") or {}
        if uses.startswith("actions/checkout@"):
            if _PR_REF.search(str(settings.get("ref", ""))) or _PR_REF.search(
                str(settings.get("repository", ""))
            ):
                checkouts.append(str(settings.get("path", "")).strip("/"))
            continue
        if not checkouts:
            continue
        if uses.startswith("./"):
            where = uses[2:]
            if any(folder == "" or where.startswith(folder + "/") for folder in checkouts):
                return f"step {uses!r} runs an action the pull request checked out"
        script = step.get("run")
        if script is None:
            continue
        directory = str(step.get("working-directory", "")).strip("./")
        for folder in checkouts:
            if folder == "":
                return "a run: step in the workspace the pull request was checked out into"
            if directory == folder or directory.startswith(folder + "/"):
                return f"a run: step inside the pull request's checkout ({folder})"
            if folder in script and _EXECUTES.search(script):
                return f"a run: step executes files of the pull request's checkout ({folder})"
    return None


#: Several accounts (examples/github/accounts/): a job's environment is its account's,
#: `reconciler-<name>` to plan and check drift, `production-<name>` to apply; or, for a fleet
#: chunked beyond GitHub's 256 jobs (the repository variable RECONCILER_CHUNK), the fleet's
#: `reconciler` / `production`, both allowed on the default branch only.
ACCOUNT_ENVIRONMENT = re.compile(
    r"\$\{\{ (?:vars\.RECONCILER_CHUNK && '(?P<fleet>[a-z]+)' \|\| )?"
    r"format\('(?P<prefix>reconciler|production)-\{0\}', matrix\.account\) \}\}"
)


def environment_of(job: dict[str, Any]) -> str:
    environment = job.get("environment", "")
    if isinstance(environment, dict):
        return str(environment.get("name", ""))
    return str(environment)


def secrets_outside_account_environment(workflow: dict[Any, Any]) -> list[Finding]:
    """Each job of a several-accounts workflow that can read a secret other than GITHUB_TOKEN
    outside one account's environment: with no environment, a shared one, or from the
    workflow's own `env:`. GitHub gives a job its environment's secrets only, so a job in
    `reconciler-eu` holds eu's token and no other account's."""
    out = []
    if secrets_in(workflow.get("env", {})):
        out.append(Finding("(workflow)", "the workflow's env: gives a secret to every job"))
    for name, job in (workflow.get("jobs") or {}).items():
        held = secrets_in(job)
        if not held:
            continue
        environment = environment_of(job)
        match = ACCOUNT_ENVIRONMENT.fullmatch(environment)
        if match is None or match["fleet"] not in (None, match["prefix"]):
            out.append(Finding(name, f"{sorted(held)} outside an account's environment "
                                     f"(environment: {environment or 'none'})"))  # fmt: skip
    return out
