"""The ids of the agreement lists read lately, in order, while the database is unchanged."""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict

#: The ids of the lists read lately, in order, while the database is unchanged: a deep page is
#: an index range from them (keyset), not an OFFSET that skips every row before it, and the
#: count is their number, not a COUNT(*) per page. Several clients read their lists at once
#: (`plan --all` of several accounts): each keeps its own, the least recently read dropped
#: first, at most `_IDS_KEPT` ids in all (8 bytes each).
_IDS: OrderedDict[tuple[int, int, int, str | None], array[int]] = OrderedDict()
_IDS_KEPT = 2_000_000
_IDS_LOCK = threading.Lock()


def kept_ids(key: tuple[int, int, int, str | None]) -> array[int] | None:
    with _IDS_LOCK:
        ids = _IDS.get(key)
        if ids is not None:
            _IDS.move_to_end(key)
        return ids


def keep_ids(key: tuple[int, int, int, str | None], ids: array[int]) -> None:
    with _IDS_LOCK:
        _IDS[key] = ids
        _IDS.move_to_end(key)
        kept = sum(len(value) for value in _IDS.values())
        while kept > _IDS_KEPT and len(_IDS) > 1:
            _, dropped = _IDS.popitem(last=False)
            kept -= len(dropped)
