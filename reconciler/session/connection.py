"""What a session needs of a connection, so the core never imports how it is made.

The command line's `ConnectionOptions` (`reconciler.cli.connection`) is one: it reads the
service's settings from its options and environment, or starts the embedded sandbox, which the
core may not import. Each account of several connects as its environment says: the runner makes
its connection with the `Connect` it was handed (the options' class).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from reconciler.service.client import ServiceClient


class Connection(Protocol):
    """Where the service is and how to reach it, and the environment `${VAR}` reads."""

    @property
    def sandbox(self) -> bool:
        """The embedded sandbox (`--sandbox`), named by its database file."""
        ...

    @property
    def sandbox_db(self) -> Path: ...

    def env(self) -> Mapping[str, str]:
        """The environment this connection reads (and the file's `${VAR}`)."""
        ...

    def credentials(self) -> list[str]:
        """The secrets read from files, which no `${VAR}` may carry."""
        ...

    def open(
        self, *, read_only: bool, parallelism: int | None = None
    ) -> AbstractContextManager[ServiceClient]:
        """A ready client, closed (and whatever it started stopped) afterwards."""
        ...

    def repeated(self) -> str:
        """The options to give again in a command printed as a hint (` --sandbox`, or ``)."""
        ...


#: An account's connection from its environment: `Connect(environ=...)`.
Connect = Callable[..., Connection]
