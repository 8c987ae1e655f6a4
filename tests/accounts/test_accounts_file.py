"""The accounts file: every problem at its line, no network, and a token pasted where a
variable's name belongs refused without being printed anywhere."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import reconciler

PASTED = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
API_KEY = "sk9Xq2LmTz7Rw4Yb8Nc3Vd6Hf1Jg5Kp0"


def _write(root: Path, text: str) -> None:
    (root / "reconciler.yaml").write_text(text, encoding="utf-8")


BROKEN = f"""version: 1
accounts:
  - name: eu
    path: accounts/eu
    tokenEnv: {PASTED}
  - name: EU West
    path: accounts/eu-west
    tokenEnv: RECONCILER_TOKEN_EUW
    colour: blue
  - name: us
    path: accounts/us
    baseUrl: http://api.example.com
    passwordEnv: {API_KEY}
  - name: us
    path: accounts/us2
    tokenEnv: RECONCILER_TOKEN_EUW
"""


def test_every_problem_at_its_line_and_no_pasted_secret_printed(tmp_path: Path) -> None:
    _write(tmp_path, BROKEN)
    for args in (("validate", "--all"), ("plan", "--all"), ("accounts",)):
        result = reconciler(*args, cwd=tmp_path, RECONCILER_BASE_URL="https://x.example")
        assert result.returncode == 1, args
        output = result.stdout + result.stderr
        assert PASTED not in output and API_KEY not in output
        assert PASTED[:12] not in output and API_KEY[:12] not in output
        for line, words in (
            (5, "tokenEnv must be the NAME of the variable"),
            (6, "must be 1 to 40 of a-z, 0-9 and -"),
            (9, "unknown key 'colour'"),
            (12, "refusing plain http://"),
            (13, "passwordEnv must be the NAME of the variable"),
            (10, "emailEnv and passwordEnv go together"),
            (14, "the name 'us' is taken by item 3"),
            (16, "names RECONCILER_TOKEN_EUW, which is the token of account EU West already"),
        ):
            assert any(
                f"reconciler.yaml:{line}:" in row and words in row for row in output.splitlines()
            ), (line, words, output)


def test_the_schema_is_served_and_matches_what_is_checked(tmp_path: Path) -> None:
    result = reconciler("schema", "accounts", cwd=tmp_path)
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert schema["required"] == ["version", "accounts"]
    assert schema["$defs"]["account"]["properties"]["name"]["pattern"] == "^[a-z0-9-]{1,40}$"
    _write(tmp_path, "version: 2\naccounts: []\n")
    checked = reconciler("accounts", cwd=tmp_path)
    assert checked.returncode == 1
    assert "reconciler.yaml:1:10: version must be 1" in checked.stderr
    assert "reconciler.yaml:2:11: accounts must list at least one account" in checked.stderr


def test_without_a_selection_commands_work_on_path_as_before(tmp_path: Path) -> None:
    _write(tmp_path, "version: 1\naccounts: [{name: eu, path: eu, tokenEnv: T}]\n")
    missing = reconciler("plan", cwd=tmp_path)
    assert missing.returncode == 1 and "Missing argument 'PATH'" in missing.stderr
    both = reconciler("plan", "x.yaml", "--all", cwd=tmp_path)
    assert both.returncode == 1 and "not both" in both.stderr
    unknown = reconciler("plan", "--account", "mars", cwd=tmp_path)
    assert unknown.returncode == 1 and "no account named mars" in unknown.stderr
    assert "its accounts: eu" in unknown.stderr
