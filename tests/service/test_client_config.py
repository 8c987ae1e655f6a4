"""resolve_config: where the address and the token come from, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler import __version__, logs
from reconciler.service.config import ClientConfig, ConfigError, RetryPolicy, resolve_config

TOKEN = "tok-Zr8Qf3LwX9pV2mKc"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.example.com", "https://api.example.com"),
        ("https://api.example.com/v1/", "https://api.example.com/v1"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://localhost:8080/", "http://localhost:8080"),
        ("http://[::1]:9000", "http://[::1]:9000"),
        ("http://127.8.9.10", "http://127.8.9.10"),
    ],
)
def test_accepted_addresses(url: str, expected: str) -> None:
    config = resolve_config(base_url=url, environ={"RECONCILER_TOKEN": TOKEN})
    assert config.base_url == expected


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("http://api.example.com", "refusing plain http:// to api.example.com"),
        ("http://10.0.0.1:8080", "refusing plain http:// to 10.0.0.1"),
        ("ftp://api.example.com", "is not an http(s) URL"),
        ("api.example.com", "is not an http(s) URL"),
        ("https://", "is not an http(s) URL"),
        ("https://user:pw@api.example.com", "must not carry credentials"),
        ("ftp://user:s3cr3t-pw@[::1", "must not carry credentials"),
        ("https://api.example.com/?x=1", "must not have a query"),
        ("http://[::1", "is not a valid URL"),
        ("https://[not-an-address]/", "is not a valid URL"),
        ("", "no service address"),
        ("https://api.example.com\n::add-mask::x", "a space or control character"),
        ("https://api.example.com/a b", "a space or control character"),
        ("https://api.\texample.com", "a space or control character"),
        ("https://api.example.com::warning::x", "is not a valid URL"),
    ],
)
def test_refused_addresses(url: str, complaint: str) -> None:
    with pytest.raises(
        ConfigError,
    ) as caught:
        resolve_config(base_url=url, environ={"RECONCILER_TOKEN": TOKEN})
    assert complaint in str(caught.value)
    assert "pw" not in str(caught.value)  # credentials in a URL are never echoed


def test_base_url_from_the_environment_and_the_option_wins() -> None:
    env = {"RECONCILER_TOKEN": TOKEN, "RECONCILER_BASE_URL": "https://env.example.com"}
    assert resolve_config(environ=env).base_url == "https://env.example.com"
    assert resolve_config(base_url="https://opt.example.com", environ=env).base_url == (
        "https://opt.example.com"
    )


def test_token_from_the_environment_is_a_secret_with_its_source() -> None:
    config = resolve_config(base_url="https://x.example.com", environ={"RECONCILER_TOKEN": TOKEN})
    assert config.token.reveal() == TOKEN
    assert config.token_source == "the RECONCILER_TOKEN environment variable"
    assert TOKEN not in repr(config)
    assert logs.scrub(f"Bearer {TOKEN}") == "Bearer [redacted]"


def test_token_file_wins_over_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(f"  {TOKEN}-file\n", encoding="utf-8")
    config = resolve_config(
        base_url="https://x.example.com", token_file=path, environ={"RECONCILER_TOKEN": TOKEN}
    )
    assert config.token.reveal() == f"{TOKEN}-file"
    assert config.token_source == f"the token file {path}"


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        (None, "cannot read the token file"),
        ("   \n", "is empty"),
        ("abc def\n", "white space or control characters"),
        ("abc\nsecond-line\n", "white space or control characters"),
    ],
)
def test_bad_token_files(tmp_path: Path, content: str | None, complaint: str) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resolve_config(base_url="https://x.example.com", token_file=path, environ={})
    assert complaint in str(caught.value)
    assert "second-line" not in str(caught.value)


def test_no_token_says_where_one_may_come_from() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(base_url="https://x.example.com", environ={})
    assert "RECONCILER_TOKEN" in str(caught.value)
    assert "--token-file" in str(caught.value)


@pytest.mark.parametrize(
    ("env", "field", "expected"),
    [
        ({"RECONCILER_CLIENT_ID": "42"}, "client_id", 42),
        ({}, "client_id", None),
        ({"RECONCILER_TIMEOUT": "2.5"}, "timeout", 2.5),
        ({"RECONCILER_PARALLELISM": "3"}, "parallelism", 3),
        ({}, "parallelism", 8),
        ({}, "user_agent", f"reconciler/{__version__}"),
        ({}, "page_size", 200),
        ({"RECONCILER_RETRY_ATTEMPTS": "2"}, "retry", RetryPolicy(attempts=2)),
        ({"RECONCILER_RETRY_SECONDS": "5"}, "retry", RetryPolicy(total_seconds=5.0)),
    ],
)
def test_settings_from_the_environment(env: dict[str, str], field: str, expected: object) -> None:
    config = resolve_config(
        base_url="https://x.example.com", environ={"RECONCILER_TOKEN": TOKEN, **env}
    )
    assert getattr(config, field) == expected


@pytest.mark.parametrize(
    ("env", "complaint"),
    [
        ({"RECONCILER_CLIENT_ID": "abc"}, "client id must be a whole number"),
        ({"RECONCILER_TIMEOUT": "soon"}, "RECONCILER_TIMEOUT must be a number"),
        ({"RECONCILER_PARALLELISM": "0"}, "RECONCILER_PARALLELISM must be a positive number"),
        ({"RECONCILER_RETRY_ATTEMPTS": "many"}, "RECONCILER_RETRY_ATTEMPTS must be a number"),
    ],
)
def test_bad_settings(env: dict[str, str], complaint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_config(base_url="https://x.example.com", environ={"RECONCILER_TOKEN": TOKEN, **env})
    assert complaint in str(caught.value)


def test_explicit_settings_win_and_are_checked() -> None:
    config = resolve_config(
        base_url="https://x.example.com",
        environ={"RECONCILER_TOKEN": TOKEN, "RECONCILER_PARALLELISM": "3"},
        parallelism=5,
        timeout=1.0,
        retry=RetryPolicy(attempts=2),
    )
    assert (config.parallelism, config.timeout, config.retry.attempts) == (5, 1.0, 2)
    with pytest.raises(ConfigError, match="page size"):
        ClientConfig(base_url=config.base_url, token=config.token, token_source="x", page_size=201)
