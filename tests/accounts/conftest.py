"""Two sandbox servers: the shared one (`sandbox`) and a second one, both fresh for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reconciler.sandbox import SandboxServer
from tests.accounts.support import Account
from tests.sandbox.support import Controls


@pytest.fixture(scope="session")
def _second_server() -> Iterator[tuple[SandboxServer, Controls]]:
    with SandboxServer() as server:
        controls = Controls(server.base_url)
        yield server, controls
        controls.close()


@pytest.fixture
def second(_second_server: tuple[SandboxServer, Controls]) -> tuple[SandboxServer, Controls]:
    """The second server, reset."""
    _second_server[1].reset()
    return _second_server


@pytest.fixture
def three(
    sandbox: SandboxServer, controls: Controls, second: tuple[SandboxServer, Controls]
) -> list[Account]:
    """eu and us, two clients of the first server; apac, a client of the second."""
    server_b, controls_b = second
    return [
        Account("eu", sandbox, controls, controls.create_client(name="EU")),
        Account("us", sandbox, controls, controls.create_client(name="US")),
        Account("apac", server_b, controls_b, controls_b.create_client(name="APAC")),
    ]
