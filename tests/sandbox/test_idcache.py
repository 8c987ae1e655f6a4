"""The sandbox keeps each client's list of ids while several read theirs at once, and drops
the least recently read first beyond its bound."""

from __future__ import annotations

from array import array

import pytest

from reconciler.sandbox import workers


def test_clients_reading_at_once_keep_their_own_lists_the_oldest_dropped_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(workers, "_IDS", type(workers._IDS)())
    monkeypatch.setattr(workers, "_IDS_KEPT", 10)
    eu, us, apac = (1, 1, 7, None), (1, 1, 8, None), (1, 1, 9, None)
    workers.keep_ids(eu, array("q", range(4)))
    workers.keep_ids(us, array("q", range(4)))
    assert workers.kept_ids(eu) == array("q", range(4))  # read again: now the newest
    workers.keep_ids(apac, array("q", range(4)))  # 12 ids > 10: the least recently read goes
    assert workers.kept_ids(us) is None
    assert workers.kept_ids(eu) is not None and workers.kept_ids(apac) is not None
    workers.keep_ids(us, array("q", range(50)))  # alone beyond the bound: still kept, alone
    assert workers.kept_ids(us) is not None and workers.kept_ids(eu) is None
