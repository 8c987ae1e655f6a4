"""Where `reconciler apply` and `plan` read a change request's approvals from: the forge the
job runs on, as each forge's adapter reads it (its `reviews` module).

The decisions are the core's (`reconciler.plan.approvals.judge`, called inside `apply` right
before any write, and by `plan` for the comment); this module only gives the forge's reads to
the core as a `ReviewSource`. Which forge, if any, is the job's: `environment`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from reconciler.plan.approvals import Approver, RequestFacts


class Reviews(Protocol):
    """A forge adapter's reads of approvals (every forge's has them). Each
    may raise the adapter's error (a `ReconcilerError`): the core then refuses the payruns,
    saying why, and pays none of them."""

    def request_facts(self, number: int) -> RequestFacts:
        """Change request `number` as the forge says it now."""
        ...

    def members(self, approver: Approver) -> frozenset[int] | None:
        """The forge user ids `approver` stands for; None: the forge will not say."""
        ...

    def close(self) -> None: ...


class ForgeReviews:
    """A `ReviewSource` over a forge adapter: the change requests in range, read each time
    they are asked for (apply reads them again right before any write); who `from` names,
    asked once per approver."""

    def __init__(self, forge: Reviews, numbers: Sequence[int],
                 done: Callable[[Any], None] | None = None) -> None:  # fmt: skip
        self.forge = forge
        self.numbers = tuple(dict.fromkeys(numbers))
        self._done = done  # how the forge is handed back (None: closed)
        self._members: dict[Approver, frozenset[int] | None] = {}

    def requests(self) -> Sequence[RequestFacts]:
        return [self.forge.request_facts(number) for number in self.numbers]

    def members(self, approver: Approver) -> frozenset[int] | None:
        if approver not in self._members:
            self._members[approver] = self.forge.members(approver)
        return self._members[approver]

    def close(self) -> None:
        if self._done is not None:
            self._done(self.forge)
        else:
            self.forge.close()
