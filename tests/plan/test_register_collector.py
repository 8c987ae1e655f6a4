"""`report` reads the account's paylists and loads the file with the cyclic garbage collector
paused (`session.collector`), as `plan` does: the pages and the file's payments make no cycles
for it to find, and its passes over them cost what the register must not (issue 47)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from reconciler.cli.connection import ConnectionOptions
from reconciler.desired import InvalidDesiredState
from reconciler.sandbox import SandboxServer
from reconciler.session.register import read_register


def _payroll(payments: int, amount: str = '"10.00"') -> str:
    lines = ["version: 1", "workers: []", "payruns:", "  - id: 2026-11-pay"]
    lines += ["    description: November pay", "    payments:"]
    lines += [
        f'      - {{email: p{n}@example.com, amount: {amount}, description: "pay {n}"}}'
        for n in range(payments)
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("good", [True, False], ids=["a good file", "a refused file"])
def test_the_register_is_read_with_the_collector_paused(
    good: bool, sandbox: SandboxServer, tmp_path: Path
) -> None:
    """No collection runs while the register is read and its file of 2,000 payments loaded,
    and the collector runs again afterwards, after a refused file too."""
    path = tmp_path / "payroll.yaml"
    path.write_text(_payroll(2000, '"10.00"' if good else '"1e3"'))
    environ = {"RECONCILER_BASE_URL": sandbox.base_url, "RECONCILER_TOKEN": sandbox.token}
    collections: list[int] = []

    def counted(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    assert gc.isenabled()
    gc.callbacks.append(counted)
    try:
        register = read_register(ConnectionOptions(environ=environ), path, since=None, until=None)
        assert good and register is not None
    except InvalidDesiredState:
        assert not good
    finally:
        gc.callbacks.remove(counted)
        gc.unfreeze()  # what the register froze is this test's to let go
    assert collections == []
    assert gc.isenabled()
