"""Which forge the job's environment names, decided once, and its client opened once: the
account lock's claims (`cli/apply`, `apply.forge_lock.ForgeLock`) and the approvals' reads
(`source_from_env`) share it, and it is closed when the last of them is done.

Each forge's adapter (a package beside this module) says whether the environment is its job's
(`named_by`), whether it has what opening it needs (`configured`: its token, its repository),
and opens its forge (`open_forge`); the first adapter, by name, that the environment names is
the job's. Outside CI (no adapter named) there is none, and the core refuses a payrun under an
approvals policy: holding the service token and the plan key is not an approval. A forge
named without its token is refused for the approvals, with the adapter's configuration error
(saying which variable); the lock is then this machine's only, as it is outside CI.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any

from reconciler.gitops.approvals import ForgeReviews

if TYPE_CHECKING:
    from reconciler.plan.approvals import ReviewSource

_GUARD = threading.Lock()
#: The forges open in this process, by the environment they were opened from: [forge, users].
_OPEN: dict[tuple[tuple[str, str], ...], list[Any]] = {}


def _adapters() -> Iterator[ModuleType]:
    """Each forge's adapter, in the order of their names."""
    here = importlib.import_module("reconciler.gitops")
    for found in sorted(pkgutil.iter_modules(here.__path__), key=lambda m: m.name):
        if found.ispkg:
            yield importlib.import_module(f"reconciler.gitops.{found.name}")


def _adapter(environ: Mapping[str, str]) -> ModuleType | None:
    return next((a for a in _adapters() if a.named_by(environ)), None)


def forge_of(environ: Mapping[str, str]) -> str | None:
    """The name of the forge the job's environment names (its adapter's: `github`, ...);
    None: none (outside CI)."""
    adapter = _adapter(environ)
    return None if adapter is None else adapter.__name__.rsplit(".", 1)[-1]


@contextmanager
def shared_forge(environ: Mapping[str, str], *, configured: bool = False) -> Iterator[Any]:
    """The forge the environment names, opened (or the one already open for it), closed when
    its last user is done; None outside CI, or (`configured`) when the environment lacks what
    opening it needs. Raises the adapter's configuration error when it cannot be opened."""
    forge = open_shared(environ, configured=configured)
    try:
        yield forge
    finally:
        if forge is not None:
            release(forge)


def open_shared(environ: Mapping[str, str], *, configured: bool = False) -> Any:
    """`shared_forge`'s forge, to be handed back with `release`."""
    adapter = _adapter(environ)
    if adapter is None or (configured and not adapter.configured(environ)):
        return None
    key = tuple(sorted(environ.items()))
    with _GUARD:
        if key not in _OPEN:
            _OPEN[key] = [adapter.open_forge(environ), 0]
        _OPEN[key][1] += 1
        return _OPEN[key][0]


def release(forge: Any) -> None:
    """One user of `forge` is done; the last one closes it."""
    with _GUARD:
        for key, held in list(_OPEN.items()):
            if held[0] is forge:
                held[1] -= 1
                if held[1] == 0:
                    del _OPEN[key]
                    forge.close()
                return
    forge.close()  # not shared: its own


def source_from_env(
    requests: Sequence[int], environ: Mapping[str, str] | None = None
) -> ReviewSource | None:
    """The reviews of the change requests `requests` on the forge of the job's environment;
    None outside CI. A job of a forge that lacks its token or repository is refused with
    the adapter's configuration error (saying which variable), never taken as no forge."""
    forge = open_shared(os.environ if environ is None else environ)
    return None if forge is None else ForgeReviews(forge, requests, release)
