"""If the service would refuse it, validate refuses it first: after `${VAR}` is filled in, and
for what the parsers would read differently (tags, fractions, nesting).

Each case is a real file and a real environment, through `reconciler validate`: one problem,
at its line, never an internal error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import reconciler

WORKER = """\
workers:
  - externalId: ENG-1
    typeOfWorker: Worker
    workerName: {name}
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: GB
"""


def _webhook(url: str = "https://hooks.example.com/x", value: str = "${HOOK_VALUE}") -> str:
    return (
        f"version: 1\nwebhook:\n  url: {url}\n  event_types: [KYC]\n"
        f"  headers:\n    - name: X-Token\n      value: {value}\n"
    )


CASES = [
    ("an empty header value from a missing CI secret", _webhook(), {"HOOK_VALUE": ""}, 7,
     "is empty once filled in"),
    ("a header value of spaces", _webhook(value="'   '"), {}, 7, "must not be blank"),
    ("a line break in a header value", _webhook(), {"HOOK_VALUE": "a\nb"}, 7, "line break"),
    ("a header value over 1,024 characters", _webhook(), {"HOOK_VALUE": "v" * 1025}, 7,
     "1,025 characters once filled in"),
    ("a header value of exactly 1,024 characters", _webhook(), {"HOOK_VALUE": "v" * 1024}, 0, ""),
    ("a URL over 2,048 characters once filled in", _webhook(url="https://h.example/${PATH_PART}"),
     {"PATH_PART": "p" * 2040, "HOOK_VALUE": "v"}, 3, "at most 2,048"),
    ("plain http to another host once filled in", _webhook(url="http://${HOST}/x"),
     {"HOST": "hooks.example.com", "HOOK_VALUE": "v"}, 3, "plain http://"),
    ("version 1.0", "version: 1.0\n", {}, 1, "whole number 1"),
    ("a binary tag", "version: !!binary MQ==\n", {}, 1, "the YAML tag !!binary"),
    ("a tag on a string", "version: 1\n" + WORKER.format(name="!!str Ada"), {}, 5,
     "the YAML tag !!str"),
    ("a control character in a name", "version: 1\n" + WORKER.format(name='"Ada\\x07"'), {}, 5,
     "control character U+0007"),
    ("maxInactivations of 100,000 digits", "version: 1\npolicy:\n  maxInactivations: "
     + "9" * 100_000 + "\n", {}, 3, "more than 1,000,000,000"),
    ("maxInactivations NaN%", "version: 1\npolicy:\n  maxInactivations: 'NaN%'\n", {}, 3,
     "percentage"),
    ("maxInactivations .inf", "version: 1\npolicy:\n  maxInactivations: .inf\n", {}, 3, "got inf"),
    ("nested brackets", "version: 1\nworkers: " + "[" * 100_000 + "]" * 100_000 + "\n", {}, 2,
     "nested too deeply"),
    ("nested blocks", "version: 1\nworkers:\n"
     + "".join(" " * (2 * i + 2) + "-\n" for i in range(2000)), {}, 1, "nested more than 32"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "text", "env", "line", "said"), CASES, ids=[case[0] for case in CASES]
)
def test_validate_refuses_what_the_service_or_a_parser_would(
    tmp_path: Path, name: str, text: str, env: dict[str, str], line: int, said: str
) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(text)
    result = reconciler("validate", str(path), timeout=30, **env)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    if not line:
        assert result.returncode == 0, result.stdout + result.stderr
        return
    assert result.returncode == 1, result.stdout
    assert f"desired.yaml:{line}:" in result.stdout, result.stdout
    assert said in result.stdout, result.stdout
    for value in env.values():
        if len(value) > 6:
            assert value not in result.stdout + result.stderr  # never echoed
