"""The plan key: where no client is opened (`plan-compare`) it is chosen as the client's would be;
it is never the password, and never shorter than 32 bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from reconciler.service.config import ConfigError
from reconciler.session.plankey import offline_plan_key
from tests.apply.support import QUICKSTART, SEED
from tests.cli import reconciler

KEY = "k" * 32


def test_the_plan_key_variable_comes_first() -> None:
    key = offline_plan_key({"RECONCILER_PLAN_KEY": KEY, "RECONCILER_TOKEN": "token-1234567890"})
    assert key.setting == "RECONCILER_PLAN_KEY"


def test_else_the_token_read_as_the_client_reads_it() -> None:
    key = offline_plan_key({"RECONCILER_TOKEN": "  token-1234567890\n"})
    assert key.setting == "the token from the RECONCILER_TOKEN environment variable"
    assert key.check == offline_plan_key({"RECONCILER_TOKEN": "token-1234567890"}).check


@pytest.mark.parametrize("token", ["two words", "line\nbreak", "tab\tinside"])
def test_a_token_the_client_would_refuse_is_refused_here_too(token: str) -> None:
    with pytest.raises(ConfigError, match="white space or control characters"):
        offline_plan_key({"RECONCILER_TOKEN": token})


def test_without_either_it_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match="RECONCILER_PLAN_KEY"):
        offline_plan_key({})


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(seed=SEED) as server:
        yield server


def _login(server: SandboxServer, **env: str) -> dict[str, str]:
    return {
        "RECONCILER_BASE_URL": server.base_url,
        "RECONCILER_EMAIL": server.email,
        "RECONCILER_PASSWORD": server.password,
        **env,
    }


def test_a_plan_signed_in_with_a_password_needs_the_plan_key(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    out = tmp_path / "plan.json"
    refused = reconciler("plan", str(QUICKSTART), "--out", str(out), **_login(sandbox))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "a saved plan needs RECONCILER_PLAN_KEY" in refused.stderr
    assert "Traceback" not in refused.stderr and sandbox.password not in refused.stderr
    assert not out.exists()
    keyed = reconciler(
        "plan", str(QUICKSTART), "--out", str(out), **_login(sandbox, RECONCILER_PLAN_KEY=KEY)
    )
    assert keyed.returncode == 0, keyed.stderr
    document = json.loads(out.read_text())
    assert document["key"]["setting"] == "RECONCILER_PLAN_KEY"
    assert document["account"]["email"] == sandbox.email
    assert document["account"]["client_id"] == 1  # the login token's claim


@pytest.mark.parametrize("key", ["k" * 31, "é" * 15, " " * 40])
def test_a_plan_key_under_32_bytes_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match="RECONCILER_PLAN_KEY"):
        offline_plan_key({"RECONCILER_PLAN_KEY": key})
