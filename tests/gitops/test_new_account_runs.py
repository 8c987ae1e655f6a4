"""A pull request that adds an account plans it (issue 37): the plan workflow of
examples/github/accounts/, run by the workflow runner against the sandbox and a fake GitHub.

The new account's entry is the pull request's (main has none); main's accounts keep main's.
Its environment `reconciler-<name>` is an administrator's to create, with its secrets: until
then its plan job fails alone, naming the variable and the environment, and the comment says
it was not planned.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.gitops import test_accounts_workflow_runs as fleet
from tests.gitops.fake_github import FakeGitHub
from tests.gitops.test_accounts_workflow_runs import (
    CLIENT_IDS,
    FOLDER,
    PR,
    accounts_file,
    clients_seen,
    live,
    merge,
    plan_pull_request,
    secrets_of,
    state,
)
from tests.gitops.workflow_runner import Runner
from tests.sandbox.support import ClientAccess, Controls, service_client

# The fleet's fixtures: two accounts eu and us on main, their environments, GitHub's fake.
github, clients, repo, runner = fleet.github, fleet.clients, fleet.repo, fleet.runner


def with_fr(url: str, token_env: str = "RECONCILER_TOKEN_FR") -> str:
    return accounts_file(url, url) + (
        f"  - name: fr\n    path: accounts/fr\n    baseUrl: {url}\n"
        f"    tokenEnv: {token_env}\n    clientId: {CLIENT_IDS['eu'] + 100}\n"
    )


def test_an_account_a_pull_request_adds_is_planned_and_fails_alone_without_its_environment(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    since = controls.last_seq()
    _, runs = plan_pull_request(github, runner, repo, "add-fr", {
        "reconciler.yaml": with_fr(sandbox.base_url),
        "accounts/fr/workforce.yaml": state(["W-1"]),
    })  # fmt: skip

    (accounts,) = runs["accounts"]
    assert accounts.outputs["names"] == "fr", accounts.logs  # eu and us are not changed
    assert "fr: added by this pull request" in accounts.logs[-1]
    (plan,) = runs["plan"]
    assert plan.environment == "reconciler-fr" and plan.returncode == 1
    said = plan.logs[-1].replace("\\_", "_")  # the report's Markdown, unescaped
    assert "RECONCILER_TOKEN_FR" in said and "environment reconciler-fr" in said
    assert clients_seen(controls, since) == set()  # no token sent anywhere
    (comment,) = github.state.comments[PR]
    assert "fr" in comment["body"]


def test_a_new_account_that_names_another_account_s_token_is_refused(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """fr points at the pull request's own server with eu's token variable, while the pull
    request moves eu to another variable (so its own file is valid): refused, nothing sent."""
    runner.environments["reconciler-fr"] = dict(runner.environments["reconciler-eu"])
    theirs = with_fr(github.api_url, "RECONCILER_TOKEN_EU").replace(
        "tokenEnv: RECONCILER_TOKEN_EU\n    clientId", "tokenEnv: OTHER_TOKEN\n    clientId", 1
    )
    since = controls.last_seq()
    _, runs = plan_pull_request(github, runner, repo, "borrow", {
        "reconciler.yaml": theirs,
        "accounts/fr/workforce.yaml": state(["W-1"]),
    })  # fmt: skip

    plans = {run.matrix["account"]: run for run in runs["plan"]}
    assert plans["fr"].returncode == 1
    assert "fr: not planned" in plans["fr"].logs[-1]
    assert "RECONCILER_TOKEN_EU" in plans["fr"].logs[-1]
    assert all(clients["eu"].token not in str(request) for request in github.requests)
    assert clients_seen(controls, since) <= {clients["eu"].client_id}


def test_a_new_account_s_environment_sends_its_token_only_where_an_administrator_said(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    github: FakeGitHub,
) -> None:
    """fr's environments exist, with fr's token, while the pull request that adds fr is open.
    Another pull request adds an account named fr too, pointing at a server of its own: its
    plan job runs in reconciler-fr and would send fr's token there. A new account's address is
    one an administrator chose (an address main's accounts use, RECONCILER_BASE_URL, or the
    variable of `baseUrl: ${VAR}` in its environment): refused, alone, and nothing is sent."""
    fr = controls.create_client(name="FR")
    for kind in ("reconciler", "production"):
        runner.environments[f"{kind}-fr"] = secrets_of({"RECONCILER_TOKEN_FR": fr.token}, "f" * 40)
    since = controls.last_seq()

    _, runs = plan_pull_request(github, runner, repo, "steal-fr", {
        "reconciler.yaml": with_fr(github.api_url),
        "accounts/fr/workforce.yaml": state(["W-1"]),
    })  # fmt: skip

    (plan,) = runs["plan"]
    assert plan.returncode == 1
    said = plan.logs[-1].replace("\\_", "_")
    assert "fr: not planned" in said and github.api_url in said, said
    assert all(fr.token not in str(request) for request in github.requests)
    assert clients_seen(controls, since) == set()


def test_an_account_added_by_editing_reconciler_yaml_only_is_planned_and_applied(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """Issue 37: adding an account edits reconciler.yaml only. The administrator creates fr's
    two environments, each with the one secret RECONCILER_SECRETS (its token and its webhook's
    header variable, under the names its entry gives); no workflow is edited, and fr is
    planned on the pull request and applied at the merge with its own client and header."""
    fr = controls.create_client(name="FR")
    header = "fr-" + "h" * 30
    variables = {"RECONCILER_TOKEN_FR": fr.token, "WEBHOOK_TOKEN_FR": header}
    for kind in ("reconciler", "production"):
        runner.environments[f"{kind}-fr"] = secrets_of(variables, "f" * 40)
    entry = (
        f"  - name: fr\n    path: accounts/fr\n    baseUrl: {sandbox.base_url}\n"
        f"    tokenEnv: RECONCILER_TOKEN_FR\n    clientId: {fr.client_id}\n"
        "    env: [WEBHOOK_TOKEN_FR]\n"
    )
    webhook = (
        "webhook:\n  url: https://hooks.example.com/fr\n  event_types: [KYC]\n  headers:\n"
        "    - name: X-Webhook-Token\n      value: ${WEBHOOK_TOKEN_FR}\n"
    )
    files = {
        "reconciler.yaml": accounts_file(sandbox.base_url, sandbox.base_url) + entry,
        "accounts/fr/workforce.yaml": state(["W-7"]) + webhook,
    }
    workflows = {path: path.read_bytes() for path in FOLDER.glob("*.yml")}

    since = controls.last_seq()
    head, runs = plan_pull_request(github, runner, repo, "add-fr", files)

    (plan,) = runs["plan"]
    assert (plan.environment, plan.returncode) == ("reconciler-fr", 0), plan.logs
    assert clients_seen(controls, since) == {fr.client_id}
    assert runs["comment"][0].returncode == 0, "\n".join(runs["comment"][0].logs)
    (comment,) = github.state.comments[PR]
    assert "W-7" in comment["body"] and header not in comment["body"]

    runs = merge(runner, repo, github, "add-fr", head)

    (apply,) = runs["apply"]
    assert (apply.environment, apply.returncode) == ("production-fr", 0), apply.logs
    access = ClientAccess(fr.client_id, fr.token)
    assert live(sandbox, access) == ["W-7"]
    with service_client(sandbox.base_url, fr.token) as api:
        hook = api.get("/webhooks/clients").json()
    assert hook["headers"] == [{"name": "X-Webhook-Token", "value": header}], hook
    assert all(header not in line for job in runs["apply"] for line in job.logs)
    assert {path: path.read_bytes() for path in FOLDER.glob("*.yml")} == workflows
