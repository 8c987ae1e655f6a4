"""The cyclic garbage collector, paused while a command reads and builds what it holds.

Reading an account's pages and loading a file of tens of thousands of items allocate hundreds
of thousands of small objects and no cycles: the collector's passes over them (one each 700
allocations, a full one now and then) cost tenths of a second for nothing. `plan` and its kin
(`reading.file_and_account`) and `report` (`register.read_register`) pause it while they read
and build; what was built is frozen afterwards (`gc.freeze`): still freed by reference
counting, never walked again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector inside; as it was (and what was built frozen) after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What was built lives on to the end of the command: out of the collector's sight, or
        # its first pass after this would walk all of it (a tenth of a second at 100,000).
        gc.freeze()
        if was_enabled:
            gc.enable()
