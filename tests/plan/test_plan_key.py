"""The plan key where no client is opened (`plan-compare`) is chosen as the client's would be."""

from __future__ import annotations

import pytest

from reconciler.cli.plankey import offline_plan_key
from reconciler.service.config import ConfigError

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
