"""The sandbox keeps each client's list of ids while several read theirs at once, and drops
the least recently read first beyond its bound."""

from __future__ import annotations

from array import array

import pytest

from reconciler.sandbox import idcache


def test_clients_reading_at_once_keep_their_own_lists_the_oldest_dropped_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(idcache, "_IDS", type(idcache._IDS)())
    monkeypatch.setattr(idcache, "_IDS_KEPT", 10)
    eu, us, apac = (1, 1, 7, None), (1, 1, 8, None), (1, 1, 9, None)
    idcache.keep_ids(eu, array("q", range(4)))
    idcache.keep_ids(us, array("q", range(4)))
    assert idcache.kept_ids(eu) == array("q", range(4))  # read again: now the newest
    idcache.keep_ids(apac, array("q", range(4)))  # 12 ids > 10: the least recently read goes
    assert idcache.kept_ids(us) is None
    assert idcache.kept_ids(eu) is not None and idcache.kept_ids(apac) is not None
    idcache.keep_ids(us, array("q", range(50)))  # alone beyond the bound: still kept, alone
    assert idcache.kept_ids(us) is not None and idcache.kept_ids(eu) is None
