"""Loading a desired state: the model it gives, directories, secrets, and the CLI around it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler import logs
from reconciler.cli import main
from reconciler.desired import InvalidDesiredState, load_desired_state, rules, schema
from reconciler.desired.model import DesiredWorker, InactivationLimit
from reconciler.secrets import Secret

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLES = REPOSITORY / "examples"
EXAMPLE_ENVIRONMENT = {"WEBHOOK_TOKEN": "t0ken", "WEBHOOK_HOST": "hooks.example.com"}
EXAMPLE_PATHS = [
    EXAMPLES / "quickstart.yaml",
    EXAMPLES / "team.yaml",
    EXAMPLES / "business-worker.yaml",
    EXAMPLES / "webhook-secret-headers.yaml",
    EXAMPLES / "large-company",
]


def test_quickstart_model() -> None:
    state = load_desired_state(EXAMPLES / "quickstart.yaml", environ={})
    assert state.scope_prefix == "ENG-"
    assert state.policy.prune is True
    assert state.policy.max_inactivations == InactivationLimit(Decimal(25), is_share=True)
    assert [worker.external_id for worker in state.workers] == [f"ENG-00{i}" for i in range(1, 6)]
    assert state.workers[0] == DesiredWorker(
        external_id="ENG-001",
        type_of_worker="Worker",
        worker_name="Ada",
        worker_surname="Lovelace",
        worker_email="ada@example.com",
        country_iso="GB",
        job_title="Engineer",
    )
    business = state.workers[4]
    assert (business.type_of_worker, business.worker_legal_name) == (
        "Business",
        "Acme Consulting Ltd",
    )
    assert state.webhook is not None
    assert state.webhook.url == "https://hooks.example.com/workforce"
    assert state.webhook.event_types == frozenset({"KYC", "PAYMENT"})
    assert state.webhook.enabled is True
    assert state.webhook.headers == ()
    assert state.sources == (str(EXAMPLES / "quickstart.yaml"),)


@pytest.mark.parametrize("path", EXAMPLE_PATHS, ids=lambda path: path.name)
def test_examples_validate(path: Path) -> None:
    state = load_desired_state(path, environ=EXAMPLE_ENVIRONMENT)
    assert state.version == 1


def test_header_values_are_secrets_that_remember_their_template() -> None:
    state = load_desired_state(EXAMPLES / "webhook-secret-headers.yaml", EXAMPLE_ENVIRONMENT)
    assert state.webhook is not None
    url = state.webhook.url
    assert isinstance(url, Secret) and url.reveal() == "https://hooks.example.com/workforce"
    assert str(url) == "https://(sensitive value)/workforce"  # the variable's part is masked
    assert url.template == "https://${WEBHOOK_HOST}/workforce"
    assert "hooks.example.com" not in logs.scrub("posting to hooks.example.com")  # bare value
    headers = {header.name: header.value for header in state.webhook.headers}
    assert headers["X-Webhook-Token"].reveal() == "t0ken"
    assert headers["X-Webhook-Token"].template == "${WEBHOOK_TOKEN}"
    assert headers["Authorization"].reveal() == "Bearer t0ken"
    assert headers["Authorization"].template == "Bearer ${WEBHOOK_TOKEN}"
    assert headers["X-Template"] == Secret("${not-a-variable}")
    assert headers["X-Template"].template is None
    assert "t0ken" not in repr(state)
    assert "t0ken" not in logs.scrub("sent Bearer t0ken")


def test_policy_count_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("version: 1\npolicy:\n  prune: false\n  maxInactivations: 7\n")
    state = load_desired_state(path, environ={})
    assert state.policy.prune is False
    assert state.policy.max_inactivations == InactivationLimit(Decimal(7), is_share=False)
    path.write_text("version: 1\n")
    state = load_desired_state(path, environ={})
    assert (state.workers, state.webhook, state.scope_prefix) == ((), None, None)
    assert state.policy.max_inactivations == InactivationLimit(Decimal(25), is_share=True)


def test_directory_merges_workers_in_file_order() -> None:
    state = load_desired_state(EXAMPLES / "large-company", environ={})
    prefixes = [worker.external_id[:6] for worker in state.workers]
    assert prefixes == ["CO-ENG"] * 12 + ["CO-OPS"] * 6 + ["CO-SAL"] * 8
    assert state.scope_prefix == "CO-"
    assert state.webhook is not None
    assert [Path(source).name for source in state.sources] == [
        "00-settings.yaml",
        "engineering.yaml",
        "operations.yaml",
        "sales.yaml",
    ]
    assert state.policy.max_inactivations == InactivationLimit(Decimal(10), is_share=True)


def test_directory_ignores_other_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("version: 1\n")
    (tmp_path / "notes.txt").write_text("not yaml: [\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yaml").write_text("not: [valid\n")
    assert load_desired_state(tmp_path, environ={}).workers == ()


def test_every_problem_is_reported_sorted_by_file_and_place(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("workers:\n  - externalId: X\n")
    (tmp_path / "a.yaml").write_text("version: 1\nwebhook:\n  url: http://example.com\n")
    with pytest.raises(InvalidDesiredState) as raised:
        load_desired_state(tmp_path, environ={})
    places = [(Path(p.location.file).name, p.location.line) for p in raised.value.problems]
    assert places == sorted(places)
    assert len(raised.value.problems) == 3  # missing event_types, http url, an incomplete worker
    assert "3 problems found" in str(raised.value)


def test_a_file_that_cannot_be_read_hides_no_version(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("version: 1\nworkers: [\n")
    (tmp_path / "b.yaml").write_text("workers: []\n")
    with pytest.raises(InvalidDesiredState) as raised:
        load_desired_state(tmp_path, environ={})
    assert [Path(p.location.file).name for p in raised.value.problems] == ["a.yaml"]


@pytest.mark.parametrize(
    ("data", "line", "column"),
    [
        (b"version: 1\nworkers: '\xc3\xa9\xff'\n", 2, 12),  # counted in characters, not bytes
        (b"\xfe\xffversion: 1\n", 1, 1),
        (b"version: 1\r\n# caf\xe9\r\n", 2, 6),
    ],
)
def test_bytes_that_are_not_utf8_are_located(
    tmp_path: Path, data: bytes, line: int, column: int
) -> None:
    path = tmp_path / "desired.yaml"
    path.write_bytes(data)
    with pytest.raises(InvalidDesiredState) as raised:
        load_desired_state(path, environ={})
    [problem] = raised.value.problems
    assert (problem.location.line, problem.location.column) == (line, column)
    assert "not UTF-8" in problem.message


def test_a_byte_order_mark_is_accepted_and_columns_ignore_it(tmp_path: Path) -> None:
    path = tmp_path / "desired.yaml"
    path.write_bytes(b"\xef\xbb\xbfversion: 2\n")
    with pytest.raises(InvalidDesiredState) as raised:
        load_desired_state(path, environ={})
    assert [(p.location.line, p.location.column) for p in raised.value.problems] == [(1, 10)]


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidDesiredState, match="no such file or directory"):
        load_desired_state(tmp_path / "absent.yaml", environ={})


def test_environment_defaults_to_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_TOKEN", "from-the-process")
    monkeypatch.setenv("WEBHOOK_HOST", "hooks.example.com")
    state = load_desired_state(EXAMPLES / "webhook-secret-headers.yaml")
    assert state.webhook is not None
    assert state.webhook.headers[0].value.reveal() == "from-the-process"


def test_validation_touches_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("validation tried to use the network")

    # Start cold, so building the validators and checking the domains happen under the patch.
    schema._validator.cache_clear()
    schema.desired_state_schema.cache_clear()
    rules._domain_problem.cache_clear()
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for path in EXAMPLE_PATHS:
        load_desired_state(path, environ=EXAMPLE_ENVIRONMENT)
    broken = REPOSITORY / "tests" / "corpus" / "desired" / "several-problems-at-once"
    with pytest.raises(InvalidDesiredState):
        load_desired_state(broken / "desired.yaml", environ={})
    result = CliRunner().invoke(main, ["validate", str(broken / "desired.yaml")])
    assert result.exit_code == 1


def _invoke(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", *arguments], env={"WEBHOOK_TOKEN": None})
    return result.exit_code, result.output


def test_cli_valid_file() -> None:
    code, output = _invoke(str(EXAMPLES / "quickstart.yaml"))
    assert code == 0
    assert "valid (5 workers, a webhook)" in output
    assert _invoke(str(EXAMPLES / "quickstart.yaml"), "--format", "json") == (0, "[]\n")
    assert _invoke(str(EXAMPLES / "quickstart.yaml"), "--format", "github") == (0, "")


def _broken(tmp_path: Path) -> Path:
    path = tmp_path / "d,1.yaml"
    path.write_text("version: 1\nworkers:\n  - externalId: 1\n    colour: red\n")
    return path


def test_cli_text_format(tmp_path: Path) -> None:
    path = _broken(tmp_path)
    code, output = _invoke(str(path))
    assert code == 1
    lines = output.splitlines()
    assert lines[0].startswith(f"{path}:3:5: missing required key")
    assert f"{path}:3:17: externalId must be a string, not 1 (an integer)" in lines
    assert f"{path}:4:5: unknown key 'colour' in item 1 of workers" in output
    assert lines[-1] == f"{len(lines) - 1} problems found"


def test_cli_json_format(tmp_path: Path) -> None:
    path = _broken(tmp_path)
    code, output = _invoke(str(path), "--format", "json")
    assert code == 1
    problems = json.loads(output)
    assert problems[0]["file"] == str(path)
    assert {(p["line"], p["column"]) for p in problems} >= {(3, 5), (3, 17), (4, 5)}
    assert set(problems[0]) == {"file", "line", "column", "message"}


def test_cli_github_format(tmp_path: Path) -> None:
    path = _broken(tmp_path)
    code, output = _invoke(str(path), "--format", "github")
    assert code == 1
    escaped = str(path).replace(":", "%3A").replace(",", "%2C")
    assert f"::error file={escaped},line=4,col=5::unknown key 'colour'" in output
    assert all(line.startswith("::error file=") for line in output.splitlines())


def test_cli_as_a_real_process() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "reconciler", "validate", str(EXAMPLES / "large-company")],
        env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "valid (26 workers, a webhook)" in completed.stdout


_ITEM = "version: 1\nworkers:\n  - externalId: ENG-1\n    typeOfWorker: Worker\n"


@pytest.mark.parametrize(
    ("text", "where", "said"),
    [
        (_ITEM + "    ? [a, b]\n    : x\n", "5:7", "a sequence as a key (a complex key `? ...`)"),
        ("version: 1\n? [a, b]\n: x\n", "2:3", "a sequence as a key"),
        (_ITEM + "    ? {a: 1}\n    : x\n", "5:7", "a mapping as a key"),
        (_ITEM + "    1: x\n", "5:5", "the key 1 is not text"),
        (_ITEM + "    true: x\n", "5:5", "the key true is not text"),
        ("version: 1\n~: x\n", "2:1", "the key ~ is not text"),
        ("version: 1\nworkers: [{externalId: E, 2.5: x}]\n", "2:27", "the key 2.5 is not text"),
    ],
)
def test_a_key_that_is_not_text_is_reported_at_its_own_line(
    tmp_path: Path, text: str, where: str, said: str
) -> None:
    path = tmp_path / "odd-key.yaml"
    path.write_text(text)
    code, output = _invoke(str(path))
    assert code == 1 and "internal error" not in output
    assert f"{path}:{where}: {said}" in output, output
    assert "every key of a desired-state file is a field name (text)" in output
