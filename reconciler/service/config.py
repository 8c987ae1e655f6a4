"""Where the service is and how to talk to it, resolved once from options and the environment."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from reconciler import __version__, logs
from reconciler.errors import ReconcilerError
from reconciler.hosts import is_loopback
from reconciler.secrets import Secret
from reconciler.service.retries import RetryPolicy
from reconciler.service.session import RENEW_HINT, Credentials

ENV_BASE_URL = "RECONCILER_BASE_URL"
ENV_TOKEN = "RECONCILER_TOKEN"
ENV_EMAIL = "RECONCILER_EMAIL"
ENV_PASSWORD = "RECONCILER_PASSWORD"
ENV_CLIENT_ID = "RECONCILER_CLIENT_ID"
ENV_TIMEOUT = "RECONCILER_TIMEOUT"
ENV_PARALLELISM = "RECONCILER_PARALLELISM"
ENV_RETRY_ATTEMPTS = "RECONCILER_RETRY_ATTEMPTS"
ENV_RETRY_SECONDS = "RECONCILER_RETRY_SECONDS"

#: The service's largest page (contract, paging); the client never asks for more.
MAX_PAGE_SIZE = 200


class ConfigError(ReconcilerError):
    """The connection settings are missing or wrong."""


@dataclass(frozen=True, slots=True)
class SettingNames:
    """Where each connection setting is given, as a message names it: the options and the
    `RECONCILER_*` variables for one account; for one account of several, its entry in the
    accounts file and its own variables (`reconciler.accounts.naming`): such a run takes
    no connection option, so no message may suggest one."""

    base_url: str = f"--base-url or {ENV_BASE_URL}"
    address: str = "the service address"  # what a bad URL is called
    token: str = f"the {ENV_TOKEN} environment variable"
    login: str = f"{ENV_EMAIL} and {ENV_PASSWORD}"
    client_id: str = f"--client-id or {ENV_CLIENT_ID}"
    set_client_id: str = f"pass --client-id N or set {ENV_CLIENT_ID}"
    renew: str = RENEW_HINT  # how a pasted token that expired could be renewed
    plan_key: str = "RECONCILER_PLAN_KEY"  # the key of saved plans
    sandbox: bool = True  # whether the embedded sandbox (--sandbox) may be suggested

    @property
    def connect_hint(self) -> str:
        """What every failure to connect says to do."""
        hint = (
            "is the service running at that address, and is the address right? Set it with "
            f"{self.base_url}"
        )
        if self.base_url.startswith("the "):
            hint = f"is the service running at that address, and is {self.base_url} right?"
        return hint + (" (or try the embedded sandbox: --sandbox)" if self.sandbox else "")


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Everything the service client needs, already checked."""

    base_url: str
    token: Secret | None  # None: signed in with `credentials` before the first request
    token_source: str  # where the token (or the credentials) came from; never a secret
    client_id: int | None = None
    timeout: float = 30.0
    connect_timeout: float = 10.0
    parallelism: int = 8
    page_size: int = MAX_PAGE_SIZE
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    user_agent: str = f"reconciler/{__version__}"
    credentials: Credentials | None = None  # sign in (again) with these
    names: SettingNames = field(default_factory=SettingNames)  # for messages

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ConfigError(f"page size must be between 1 and {MAX_PAGE_SIZE}")
        if self.parallelism < 1:
            raise ConfigError("parallelism must be at least 1")
        if self.timeout <= 0 or self.connect_timeout <= 0:
            raise ConfigError("timeouts must be positive")


def resolve_config(
    *,
    base_url: str | None = None,
    token_file: Path | None = None,
    password_file: Path | None = None,
    client_id: int | str | None = None,
    timeout: float | None = None,
    parallelism: int | None = None,
    retry: RetryPolicy | None = None,
    environ: Mapping[str, str] | None = None,
    names: SettingNames | None = None,
) -> ClientConfig:
    """Build the client's configuration: options first, then `RECONCILER_*` variables.

    The token comes from `--token-file` when given, else from `RECONCILER_TOKEN`; credentials
    from `RECONCILER_EMAIL` with `--password-file` or `RECONCILER_PASSWORD`. Neither is ever a
    command-line value; both are registered with the log scrubber before anything can print them.
    With both, the token is used and the credentials renew it.
    """
    env = os.environ if environ is None else environ
    names = names or SettingNames()
    url = check_base_url(base_url or env.get(ENV_BASE_URL, ""), names.address)
    credentials = _read_credentials(password_file, env, names)
    token, source = read_token(token_file, env, required=credentials is None, names=names)
    if token is not None:
        logs.register_secret(token.reveal())
    elif credentials is not None:
        source = credentials.source
    return ClientConfig(
        base_url=url,
        token=token,
        credentials=credentials,
        token_source=source,
        client_id=_client_id(client_id if client_id is not None else env.get(ENV_CLIENT_ID)),
        timeout=timeout if timeout is not None else _number(env, ENV_TIMEOUT, 30.0, most=3600),
        parallelism=(
            parallelism
            if parallelism is not None
            else int(_number(env, ENV_PARALLELISM, 8, most=256, whole=True))
        ),
        retry=retry or _retry_policy(env),
        names=names,
    )


def _retry_policy(env: Mapping[str, str]) -> RetryPolicy:
    default = RetryPolicy()
    return replace(
        default,
        attempts=int(_number(env, ENV_RETRY_ATTEMPTS, default.attempts, most=100, whole=True)),
        total_seconds=_number(env, ENV_RETRY_SECONDS, default.total_seconds, most=86_400),
    )


def check_base_url(url: str, what: str = "the service address") -> str:
    """The base URL without a trailing slash; https, or plain http to a loopback host only.

    A URL with credentials in it is refused without being echoed (it would print them).
    """
    url = url.strip()
    if not url:
        raise ConfigError(
            "no service address: pass --base-url or set RECONCILER_BASE_URL",
            hint="or use --sandbox to run against the embedded sandbox",
        )
    authority = url.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in authority:
        raise ConfigError(
            f"{what} must not carry credentials (user:password@); it is not shown here",
            hint="take the credentials out of the URL: the token comes from its own setting",
        )
    if any(character.isspace() or not character.isprintable() for character in url):
        raise ConfigError(  # urlsplit drops tabs and line breaks: what it read is not the text
            f"{what} {url[:200]!r} has a space or control character in it",
            hint="write the address alone, on one line",
        )
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port  # a port that is not a number raises
    except ValueError as error:
        raise ConfigError(f"{what} {url[:200]!r} is not a valid URL ({error})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ConfigError(f"{what} {url[:200]!r} is not an http(s) URL with a host")
    if parts.query or parts.fragment:
        raise ConfigError(f"{what} {url[:200]!r} must not have a query or fragment")
    if parts.scheme == "http" and not is_loopback(host):
        raise ConfigError(
            f"refusing plain http:// to {host}: the token would travel unencrypted",
            hint="use https://, or http:// only to localhost / 127.0.0.1 / ::1",
        )
    return url.rstrip("/")


def _read_credentials(
    password_file: Path | None, env: Mapping[str, str], names: SettingNames
) -> Credentials | None:
    """RECONCILER_EMAIL with the password from `--password-file` or RECONCILER_PASSWORD."""
    email = env.get(ENV_EMAIL, "").strip()
    if password_file is not None:
        source = f"{ENV_EMAIL} and the password file {password_file}"
        try:
            password = Path(password_file).read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as error:
            raise ConfigError(
                f"cannot read the password file {password_file}: {error.strerror}"
            ) from None
        except UnicodeDecodeError:
            raise ConfigError(f"the password file {password_file} is not UTF-8 text") from None
    elif env.get(ENV_PASSWORD):
        source, password = names.login, env[ENV_PASSWORD]
    elif email:
        raise ConfigError(
            f"{ENV_EMAIL} is set but no password: set {ENV_PASSWORD} or pass --password-file FILE",
            hint="the password is never accepted as a command-line value",
        )
    else:
        return None
    if not email:
        raise ConfigError(f"a password is given but no email: set {ENV_EMAIL}")
    if not password.strip():
        raise ConfigError(f"the password from {source} is empty")
    logs.register_secret(password)
    return Credentials(email, Secret(password), source)


def read_token(
    token_file: Path | None,
    env: Mapping[str, str],
    *,
    required: bool = True,
    names: SettingNames | None = None,
) -> tuple[Secret | None, str]:
    """The static token and where it came from: `--token-file`, else RECONCILER_TOKEN; (None,
    "") when neither is set and it is not `required`. A blank token, or one with white space
    or control characters inside, is an error."""
    if token_file is not None:
        source = f"the token file {token_file}"
        try:
            text = Path(token_file).read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"cannot read {source}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{source} is not UTF-8 text") from None
    elif env.get(ENV_TOKEN):
        source, text = (names or SettingNames()).token, env[ENV_TOKEN]
    elif not required:
        return None, ""
    else:
        raise ConfigError(
            "no token and no credentials: set RECONCILER_TOKEN (or pass --token-file FILE), or "
            "RECONCILER_EMAIL with RECONCILER_PASSWORD (or --password-file FILE)",
            hint="the token is never accepted as a command-line value",
        )
    token = text.strip()
    if not token:
        raise ConfigError(f"{source} is empty")
    if any(char.isspace() or not char.isprintable() for char in token):
        # A token must fit in one header line; anything else is a mistake (two lines pasted).
        raise ConfigError(f"{source} holds white space or control characters inside the token")
    return Secret(token), source


def _client_id(value: int | str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"the client id must be a whole number, not {value!r}") from None
    if number < 0:
        raise ConfigError(f"the client id must not be negative, not {number}")
    return number


def _number(
    env: Mapping[str, str], name: str, default: float, *, most: float, whole: bool = False
) -> float:
    """A positive, finite number from the environment, at most `most` (a setting beyond it is
    a mistake, and `inf`, `nan` or `1e999` would break the arithmetic that uses it)."""
    raw = env.get(name)
    if not raw:
        return default
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, not {shown!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a positive number, not {shown!r}")
    if value > most:
        raise ConfigError(f"{name} is {shown}; it may be at most {most:g}")
    if whole and not value.is_integer():
        raise ConfigError(f"{name} must be a whole number, not {shown!r}")
    return value
