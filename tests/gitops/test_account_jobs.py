"""The accounts workflows' loops as functions (reconciler.gitops.account_jobs): what each
account's drift check and plan run, and the status the job exits with, from what each command
exited with; the accounts file a pull request is planned with (reconciler.accounts.pull_request).

The commands are given by a recorder that answers each with the status the case says, and
writes what a command would print where the job keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.accounts.pull_request import messages, pull_request_accounts
from reconciler.gitops.account_jobs import (
    DriftJob,
    PlanJob,
    drift_accounts,
    matrix_lines,
    plan_accounts,
)


class Commands:
    """Runs nothing: records each command, answers `status[(command, account)]` (default 0),
    and writes `output` where its stdout goes."""

    def __init__(self, status: dict[tuple[str, str], int], output: str = "report") -> None:
        self.status, self.output, self.ran = status, output, []  # type: list[list[str]]

    def __call__(self, args: list[str], stdout: Path | None) -> int:
        self.ran.append(args)
        if stdout is not None:
            stdout.write_text(self.output, encoding="utf-8")
        command = args[1] if args[0] == "github" else args[0]
        account = next((args[i + 1] for i, a in enumerate(args) if a in ("--account", "--key")), "")
        return self.status.get((command, account), 0)

    def commands(self, account: str) -> list[str]:
        mine = [a for a in self.ran if any(w == account or w.endswith(f"-{account}.md") for w in a)]
        return [args[1] if args[0] == "github" else args[0] for args in mine]


DRIFT = [  # drift's status for eu, adopt's, fail on drift -> the job's status, eu's commands
    (0, None, False, 0, ["drift", "adopt-pr", "step-summary", "drift-issue"]),
    (2, 2, False, 0, ["drift", "adopt", "adopt-pr", "step-summary", "drift-issue"]),
    (2, 2, True, 2, ["drift", "adopt", "adopt-pr", "step-summary", "drift-issue"]),
    (1, None, True, 1, ["drift", "adopt-pr", "step-summary", "drift-issue"]),
    (2, 1, False, 0, ["drift", "adopt", "adopt-pr", "step-summary", "drift-issue"]),
]


@pytest.mark.parametrize(("drift", "adopt", "fail_on_drift", "exit", "ran"), DRIFT)
def test_each_account_s_drift_check_runs_its_steps_and_the_job_exits_as_they_found(
    tmp_path: Path, drift: int, adopt: int | None, fail_on_drift: bool, exit: int, ran: list[str]
) -> None:
    status = {("drift", "eu"): drift} | ({("adopt", "eu"): adopt} if adopt is not None else {})
    commands = Commands(status)

    assert drift_accounts(["eu", "us"], DriftJob(tmp_path, fail_on_drift), commands) == exit

    assert commands.commands("eu") == ran
    assert commands.commands("us") == ["drift", "adopt-pr", "step-summary", "drift-issue"]
    (issue,) = [args for args in commands.ran if "drift-issue" in args and "eu" in args]
    assert issue[issue.index("--drift-exit-status") + 1] == str(drift)
    assert "reconciler: the account eu has drifted" in issue[issue.index("--title") + 1]
    # A failed dry run leaves no adoption file: the pull request is left as it is.
    assert (tmp_path / "adopt-eu.json").exists() == (adopt in (0, 2))


def test_a_failed_check_fails_the_job_after_the_others_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = Commands({("drift", "eu"): 1, ("drift", "us"): 2}, output="the token was refused")

    assert drift_accounts(["eu", "us"], DriftJob(tmp_path, True), commands) == 1

    out = capsys.readouterr().out
    assert "::error::eu: reconciler drift failed (exit 1)" in out
    assert "the token was refused" in out and "::error::Not checked: eu" in out
    assert "drift-issue" in commands.commands("us")


@pytest.mark.parametrize(("strict", "mode"), [(True, ["--strict"]), (False, [])])
def test_the_drift_mode_is_the_job_s_strict_input(
    tmp_path: Path, strict: bool, mode: list[str]
) -> None:
    """As the single action's `strict` input: `drift --strict` unless the job says false."""
    commands = Commands({})

    assert drift_accounts(["eu"], DriftJob(tmp_path, strict=strict), commands) == 0

    (drift,) = [args for args in commands.ran if args[0] == "drift"]
    assert drift == ["drift", "--account", "eu", *mode, "--format", "markdown"]


def test_a_drift_issue_that_cannot_be_kept_fails_its_account(tmp_path: Path) -> None:
    commands = Commands({("drift", "eu"): 2, ("drift-issue", "eu"): 1})

    assert drift_accounts(["eu"], DriftJob(tmp_path), commands) == 1


def plan_job(tmp_path: Path, refused: dict[str, str] | None = None) -> PlanJob:
    return PlanJob(tmp_path / "reconciler.yaml", 31, "a" * 40, tmp_path / "out", "part-0",
                   refused or {})  # fmt: skip


@pytest.mark.parametrize(
    ("status", "exit"),
    [({}, 0), ({("validate", "eu"): 1}, 1), ({("plan", "eu"): 1}, 1)],
)
def test_the_plan_job_validates_and_plans_every_account_and_fails_on_either(
    tmp_path: Path, status: dict[tuple[str, str], int], exit: int
) -> None:
    commands = Commands(status, output="# plan")

    assert plan_accounts(["eu", "us"], plan_job(tmp_path), commands) == exit

    validate, plan, summary = commands.ran
    assert validate[:3] == ["validate", "--format", "github"]
    assert plan[plan.index("--pull-request") + 1] == "31" and "--out" in plan
    assert [plan[i + 1] for i, word in enumerate(plan) if word == "--account"] == ["eu", "us"]
    assert summary[:2] == ["github", "step-summary"]
    assert (tmp_path / "out" / "full" / "part-0.md").read_text() == "# plan"


def test_a_refused_new_account_fails_alone_and_the_others_are_planned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = Commands({})

    job = plan_job(tmp_path, {"fr": "it names RECONCILER_TOKEN_EU"})
    assert plan_accounts(["eu", "fr"], job, commands) == 1

    assert "::error::fr: not planned: it names RECONCILER_TOKEN_EU" in capsys.readouterr().out
    assert [args[args.index("--account") + 1] for args in commands.ran[:2]] == ["eu", "eu"]
    assert all("fr" not in args for args in commands.ran)


def test_the_matrix_lines_name_the_accounts_in_either_shape() -> None:
    assert matrix_lines(["eu", "us"], None) == [
        'matrix={"include":[{"account":"eu"},{"account":"us"}]}', "names=eu us"]  # fmt: skip
    matrix, names = matrix_lines(["a", "b", "c", "d"], 3)
    assert json.loads(matrix.removeprefix("matrix=")) == {
        "include": [{"accounts": "a b c"}, {"accounts": "d"}]}  # fmt: skip
    assert names == "names=a b c d"
    assert matrix_lines([], 2) == ['matrix={"include":[]}', "names="]


def entry(name: str, url: str, token: str, env: str = "") -> str:
    more = f"    env: [{env}]\n" if env else ""
    return (f"  - name: {name}\n    path: accounts/{name}\n    baseUrl: {url}\n"
            f"    tokenEnv: {token}\n{more}")  # fmt: skip


def files(tmp_path: Path, main: str, theirs: str) -> tuple[Path, Path]:
    default = tmp_path / "reconciler.yaml"
    default.write_text("version: 1\naccounts:\n" + main)
    checkout = tmp_path / "pull-request"
    for name in ("eu", "fr", "de"):
        (checkout / "accounts" / name).mkdir(parents=True)
    (checkout / "reconciler.yaml").write_text("version: 1\naccounts:\n" + theirs)
    return default, checkout


def test_main_s_accounts_keep_main_s_entries_and_a_new_one_its_own(tmp_path: Path) -> None:
    eu = entry("eu", "https://eu.example.com", "RECONCILER_TOKEN_EU")
    default, checkout = files(tmp_path, eu, entry("eu", "https://evil.example", "STOLEN") + entry(
        "fr", "${RECONCILER_BASE_URL_FR}", "RECONCILER_TOKEN_FR"))  # fmt: skip

    written = pull_request_accounts(default, checkout)

    assert written.new == ("fr",) and written.refused == {} and written.changes_file
    text = (checkout / "reconciler.yaml").read_text()
    assert "evil" not in text and "STOLEN" not in text
    assert "https://eu.example.com" in text and "${RECONCILER_BASE_URL_FR}" in text
    said = messages(written)
    assert any("This pull request changes reconciler.yaml" in line for line in said)
    assert any(line.startswith("::notice::fr: added by this pull request") for line in said)


ADDRESSES = [
    ("main's address", "https://eu.example.com", True),
    ("its environment's variable", "${RECONCILER_BASE_URL_FR}", True),
    ("its own address", "https://fr.example.com", False),
    ("main's address with a path", "https://eu.example.com/steal", False),
]


@pytest.mark.parametrize(("case", "url", "planned"), ADDRESSES, ids=[c[0] for c in ADDRESSES])
def test_a_new_account_s_address_is_an_administrator_s(
    tmp_path: Path, case: str, url: str, planned: bool
) -> None:
    """fr's environment may hold fr's token before the pull request that adds fr is merged
    (or after fr was removed), and any pull request may add an account named fr: the address
    its token goes to is main's, its environment's, or refused, naming it."""
    eu = entry("eu", "https://eu.example.com", "RECONCILER_TOKEN_EU")
    default, checkout = files(tmp_path, eu, eu + entry("fr", url, "RECONCILER_TOKEN_FR"))

    written = pull_request_accounts(default, checkout)

    assert (written.new == ("fr",)) is planned
    if not planned:
        assert url in written.refused["fr"] and "an administrator's" in written.refused["fr"]
        assert url not in (checkout / "reconciler.yaml").read_text()


@pytest.mark.parametrize("borrowed", ["token", "env"])
def test_a_new_account_naming_a_variable_of_main_s_accounts_is_refused(
    tmp_path: Path, borrowed: str
) -> None:
    """The pull request's own file is valid (its eu now names other variables), but its fr
    would send main's eu's secret to its own server."""
    eu = entry("eu", "https://eu.example.com", "RECONCILER_TOKEN_EU", env="WEBHOOK_TOKEN_EU")
    theirs = entry("eu", "https://eu.example.com", "OTHER_TOKEN", env="OTHER_WEBHOOK")
    variables = {"token": ("RECONCILER_TOKEN_EU", ""), "env": ("TOKEN_FR", "WEBHOOK_TOKEN_EU")}
    token, env = variables[borrowed]
    fr = entry("fr", "https://evil.example", token, env=env)
    default, checkout = files(tmp_path, eu, theirs + fr)

    written = pull_request_accounts(default, checkout)

    assert written.new == () and list(written.refused) == ["fr"]
    assert (
        "RECONCILER_TOKEN_EU" if borrowed == "token" else "WEBHOOK_TOKEN_EU"
    ) in written.refused["fr"]
    assert (checkout / "reconciler.yaml").read_text() == default.read_text()


def test_a_link_in_place_of_the_pull_request_s_file_is_not_written_through(tmp_path: Path) -> None:
    eu = entry("eu", "https://eu.example.com", "RECONCILER_TOKEN_EU")
    default, checkout = files(tmp_path, eu, eu)
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs")
    (checkout / "reconciler.yaml").unlink()
    (checkout / "reconciler.yaml").symlink_to(outside)

    written = pull_request_accounts(default, checkout)

    assert outside.read_text() == "theirs" and not written.path.is_symlink()
    assert written.path.read_text() == default.read_text() and written.new == ()


INJECTED = "::add-mask::x"


@pytest.mark.parametrize("more", ["", "  - name: Bad\n"], ids=["an address", "and a bad name"])
def test_a_pull_request_s_file_cannot_start_a_workflow_command(tmp_path: Path, more: str) -> None:
    """The pull request's reconciler.yaml is its author's: what the job says of it (an error
    of several lines, a value with a line break) stays in one annotation each."""
    eu = entry("eu", "https://eu.example.com", "RECONCILER_TOKEN_EU")
    broken = entry("fr", '"https://fr.example\\n::add-mask::x"', "RECONCILER_TOKEN_FR")
    default, checkout = files(tmp_path, eu, eu + broken + more)

    said = messages(pull_request_accounts(default, checkout))

    assert said and all("\n" not in line and "\r" not in line for line in said), said
    assert "cannot be read" in said[0] and "%0A" in said[0]


def test_a_refusal_of_several_lines_is_one_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = plan_job(tmp_path, {"fr": f"it sends its credentials to https://fr.example\n{INJECTED}"})

    assert plan_accounts(["fr"], job, Commands({})) == 1

    out = capsys.readouterr().out
    assert "::error::fr: not planned: it sends its credentials to https://fr.example%0A" in out
    assert not any(line.startswith(INJECTED) for line in out.splitlines()), out
