"""The connection options every command that talks to the service shares, and a ready client.

`--base-url`/`RECONCILER_BASE_URL` and `RECONCILER_TOKEN`/`--token-file` reach a real service;
`--sandbox` starts the embedded sandbox instead, on a SQLite file (seeded with the demo account
when the file is new), and uses its demo client's token.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import click

import reconciler
from reconciler import logs
from reconciler.redaction import shown
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import (
    ClientConfig,
    ConfigError,
    SettingNames,
    check_base_url,
    resolve_config,
)

DEFAULT_SANDBOX_DB = Path(".reconciler/sandbox.db")
SANDBOX_SEED = Path("examples/sandbox-seed.yaml")

F = TypeVar("F", bound=Callable[..., Any])


def _line(text: str) -> str:
    return text.rstrip("\r\n")  # as the password file is read (`service.config`)


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """What the shared options said; `connection_options` passes it as `connection`."""

    base_url: str | None = None
    token_file: Path | None = None
    password_file: Path | None = None
    client_id: int | None = None
    sandbox: bool = False
    sandbox_db: Path = DEFAULT_SANDBOX_DB
    sandbox_reset: bool = False
    #: The environment to read the connection (and `${VAR}`) from instead of the process's:
    #: one account's of several (`reconciler.accounts.environment`).
    environ: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    #: Where the settings were given, for messages: that account's entry and variables.
    names: SettingNames | None = field(default=None, repr=False, compare=False)

    def env(self) -> Mapping[str, str]:
        """The environment this connection reads: its own, else the process's."""
        return os.environ if self.environ is None else self.environ

    def credentials(self) -> list[str]:
        """The token `--token-file` holds and the password `--password-file` holds, read early
        so no `${VAR}` can carry them (unreadable here, a file is reported when the client is
        opened); the variables that hold credentials are checked by the filler itself."""
        found = []
        for path, strip in ((self.token_file, str.strip), (self.password_file, _line)):
            if path is None:
                continue
            try:
                found.append(strip(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
        return found

    def open(
        self, *, read_only: bool, parallelism: int | None = None
    ) -> AbstractContextManager[ServiceClient]:
        """`open_client` for these options (`reconciler.session.connection.Connection`)."""
        return open_client(self, read_only=read_only, parallelism=parallelism)

    def repeated(self) -> str:
        """The options to give again in a command printed as a hint (` --sandbox`, or ``).

        Never `--sandbox-reset` (the next command must find what this one left) and never a
        secret: the token and the password come from the environment or a file, not a flag."""
        words: list[str] = []
        if self.sandbox:
            words.append("--sandbox")
            if self.sandbox_db != DEFAULT_SANDBOX_DB:
                words += ["--sandbox-db", str(self.sandbox_db)]
        else:
            if self.base_url:
                words += ["--base-url", self.base_url]
            if self.token_file is not None:
                words += ["--token-file", str(self.token_file)]
            if self.password_file is not None:
                words += ["--password-file", str(self.password_file)]
        if self.client_id is not None:
            words += ["--client-id", str(self.client_id)]
        return "".join(f" {shlex.quote(word)}" for word in words)


_OPTION_NAMES = (
    "base_url",
    "token_file",
    "password_file",
    "client_id",
    "sandbox",
    "sandbox_db",
    "sandbox_reset",
)


def connection_options(command: F) -> F:
    """Add the shared connection options to a click command; it receives `connection`."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _OPTION_NAMES}
        path = kwargs.get("path", kwargs.get("source"))  # PATH, or apply's and comment's SOURCE
        if isinstance(path, Path):  # an account's folder reads only its own variables
            from reconciler.accounts.confine import path_environment

            values["environ"] = path_environment(path, os.environ)
        return command(*args, connection=ConnectionOptions(**values), **kwargs)

    decorators = [
        click.option(
            "--base-url",
            metavar="URL",
            help="The service's address (default: $RECONCILER_BASE_URL). https, or http to "
            "a loopback host.",
        ),
        click.option(
            "--token-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Read the token from this file (default: $RECONCILER_TOKEN). Never a flag value.",
        ),
        click.option(
            "--password-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Sign in as $RECONCILER_EMAIL with the password in this file (default: "
            "$RECONCILER_PASSWORD); the login renews itself. Never a flag value.",
        ),
        click.option(
            "--client-id",
            type=click.IntRange(min=0),
            envvar="RECONCILER_CLIENT_ID",
            help="The client's id, needed only for the wallet (default: found from the account).",
        ),
        click.option(
            "--sandbox",
            is_flag=True,
            help="Run against the embedded sandbox instead of a service.",
        ),
        click.option(
            "--sandbox-db",
            type=click.Path(dir_okay=False, path_type=Path),
            default=DEFAULT_SANDBOX_DB,
            show_default=True,
            help="The embedded sandbox's SQLite file (with --sandbox).",
        ),
        click.option(
            "--sandbox-reset",
            is_flag=True,
            help="Start the embedded sandbox afresh from the demo seed (with --sandbox).",
        ),
    ]
    for decorate in reversed(decorators):
        wrapper = decorate(wrapper)
    return wrapper  # type: ignore[return-value]


@contextmanager
def open_client(
    options: ConnectionOptions,
    *,
    read_only: bool,
    parallelism: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> Iterator[ServiceClient]:
    """A ready client for the options, closed (and the embedded sandbox stopped) afterwards."""
    if not options.sandbox:
        if options.sandbox_reset:
            raise ConfigError("--sandbox-reset only makes sense with --sandbox")
        config = resolve_config(
            base_url=options.base_url,
            token_file=options.token_file,
            password_file=options.password_file,
            client_id=options.client_id,
            parallelism=parallelism,
            environ=environ if environ is not None else options.environ,
            names=options.names,
        )
        with ServiceClient(config, read_only=read_only) as client:
            client.check_credentials()
            yield client
        return
    if options.base_url or options.token_file or options.password_file:
        raise ConfigError(
            "--sandbox runs its own service: leave out --base-url, --token-file and --password-file"
        )
    with _embedded_sandbox(options.sandbox_db, reset=options.sandbox_reset) as server:
        logs.register_secret(server.token)
        config = ClientConfig(
            base_url=check_base_url(server.base_url),
            token=Secret(server.token),
            token_source="the embedded sandbox's demo client",
            client_id=options.client_id if options.client_id is not None else server.client_id,
        )
        if parallelism is not None:
            config = replace(config, parallelism=parallelism)
        with ServiceClient(config, read_only=read_only) as client:
            yield client


@contextmanager
def _embedded_sandbox(db: Path, *, reset: bool) -> Iterator[Any]:
    # Imported here: only the CLI joins the sandbox and the client.
    from reconciler.sandbox import SandboxServer, is_sandbox_database

    if db.exists() and not is_sandbox_database(db):
        raise ConfigError(
            f"{db} is not a sandbox database: the sandbox neither uses nor deletes it (not "
            "even with --sandbox-reset), and it is left as it was",
            hint="give --sandbox-db a new file name (the default is .reconciler/sandbox.db)",
        )
    if reset:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                db.with_name(db.name + suffix).unlink(missing_ok=True)
            except OSError as error:
                raise ConfigError(
                    f"--sandbox-reset cannot delete {error.filename}: {error.strerror}",
                    hint="give --sandbox-db a file the sandbox may write",
                ) from None
    is_new = not db.exists()
    try:
        _private_folder(db.parent)  # the database itself is created 0600 by the sandbox
    except OSError as error:
        raise ConfigError(f"cannot create the sandbox's database {db}: {error}") from None
    seed = demo_seed() if is_new else None
    server = SandboxServer(db=str(db), seed=seed)
    try:
        server.start()
    except Exception as error:  # a locked or foreign file, a bad seed: say which, no traceback
        raise ConfigError(
            f"the embedded sandbox could not start on {db}: {shown(str(error))}",
            hint="--sandbox-reset starts it afresh",
        ) from error
    try:
        yield server
    finally:
        server.stop()


def _private_folder(folder: Path) -> None:
    """Create the sandbox's folder owner-only, and keep it out of git when it is ours.

    A folder the reconciler creates (`.reconciler/` by default) gets mode 0700 and a
    `.gitignore` of `*`; a folder that already existed is the user's, and is left as it is,
    except `.reconciler/` itself, which is always made private again.
    """
    created = not folder.exists()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if created or folder.name == DEFAULT_SANDBOX_DB.parent.name:
        folder.chmod(0o700)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Written by reconciler: nothing here belongs in git.\n*\n")


def demo_seed() -> Path | None:
    """The demo seed: beside the current directory's project, else beside the package."""
    for candidate in (SANDBOX_SEED, Path(reconciler.__file__).parent.parent / SANDBOX_SEED):
        if candidate.is_file():
            return candidate
    logs.get_logger("reconciler.cli").warning(
        "demo seed not found; the sandbox starts empty", looked_for=str(SANDBOX_SEED)
    )
    return None
