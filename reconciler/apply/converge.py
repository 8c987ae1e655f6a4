"""Deciding what to send again, so that nothing is ever invited twice.

Pure functions over what the service said: after an ambiguous outcome (the batch may or may not
have landed) the executor re-reads the workers and `landed` splits the batch into the
invitations that now have an open agreement (done: never sent again) and the rest; after a
batch refused for some items, `refusals` splits it into those items (failed, with the
service's reason) and the rest (sent again without them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from reconciler.apply.schedule import InvitationStep
from reconciler.identity import email_key
from reconciler.service.models import Worker, WorkerStatus


class ItemProblem(Protocol):
    """One per-item error of a refused request (the client's `ItemError`)."""

    @property
    def index(self) -> int | None: ...

    @property
    def field(self) -> str | None: ...

    @property
    def message(self) -> str: ...


@dataclass(frozen=True, slots=True)
class LiveAgreements:
    """The agreements as re-read during an apply, indexed for the questions it asks."""

    by_external_id: dict[str, Worker] = field(default_factory=dict)
    by_email: dict[str, Worker] = field(default_factory=dict)
    status: dict[int, WorkerStatus] = field(default_factory=dict)

    @classmethod
    def of(cls, workers: Iterable[Worker]) -> LiveAgreements:
        by_external_id: dict[str, Worker] = {}
        by_email: dict[str, Worker] = {}
        status: dict[int, WorkerStatus] = {}
        for worker in workers:
            status[worker.agreement_id] = worker.status
            if not worker.status.is_open:
                continue
            if worker.external_id is not None:
                by_external_id.setdefault(worker.external_id, worker)
            by_email.setdefault(email_key(worker.email), worker)
        return cls(by_external_id, by_email, status)

    def holder(self, step: InvitationStep) -> Worker | None:
        """The open agreement that holds this invitation's externalId or email, if any."""
        if step.external_id is not None and step.external_id in self.by_external_id:
            return self.by_external_id[step.external_id]
        return self.by_email.get(email_key(step.email))

    def is_inactivated(self, agreement_id: int) -> bool:
        return self.status.get(agreement_id) == WorkerStatus.INACTIVATED


def landed(
    steps: Sequence[InvitationStep], live: LiveAgreements
) -> tuple[list[tuple[InvitationStep, Worker]], list[InvitationStep]]:
    """Split a batch into the invitations that landed (with their agreement) and the rest.

    An invitation landed when an open agreement with its externalId or its email now exists:
    the plan invited it because there was none, so sending it again could only invite twice
    (or be refused as "already open").
    """
    done: list[tuple[InvitationStep, Worker]] = []
    rest: list[InvitationStep] = []
    for step in steps:
        holder = live.holder(step)
        if holder is None:
            rest.append(step)
        else:
            done.append((step, holder))
    return done, rest


def refusals(
    steps: Sequence[InvitationStep], problems: Iterable[ItemProblem]
) -> tuple[list[tuple[InvitationStep, str]], list[InvitationStep]] | None:
    """Split a refused batch into the refused invitations (with the reason) and the rest.

    `problems` index the request as sent (the order of `steps`). None when no problem names an
    item of the batch: the whole request was refused, and sending it again would not help.
    """
    reasons: dict[int, list[str]] = {}
    for problem in problems:
        if problem.index is None or not 0 <= problem.index < len(steps):
            continue
        text = f"{problem.field}: {problem.message}" if problem.field else problem.message
        reasons.setdefault(problem.index, []).append(text)
    if not reasons:
        return None
    refused = [(steps[index], "; ".join(texts)) for index, texts in sorted(reasons.items())]
    rest = [step for position, step in enumerate(steps) if position not in reasons]
    return refused, rest
