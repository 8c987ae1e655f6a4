"""The demo sandbox for apply's tests through the command line: seeded, settling at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import SEED


@pytest.fixture
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=SEED, process_delay_ms=0) as server:
        yield server
