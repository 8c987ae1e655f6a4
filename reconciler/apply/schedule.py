"""The order of an apply: inactivations, then invitations in batches, then the webhook.

Inactivations go first so that a replaced worker's email is free again before it is invited
(the service refuses an invitation for an email that still has an open agreement), and so a
plan that frees a slot never trips over its own order. The webhook goes last: it changes no
worker, and a run interrupted earlier leaves it as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reconciler.desired.model import DesiredWorker
from reconciler.plan.changes import Inactivate, Invite, Replace, WebhookCreate, WebhookUpdate
from reconciler.plan.model import Plan
from reconciler.service.models import Invitation

#: The most invitations one bulk request may carry (the contract answers 413 above it).
MAX_BATCH = 100


@dataclass(frozen=True, slots=True)
class InactivationStep:
    """Inactivate one agreement, for change number `index` (an Inactivate or a Replace)."""

    index: int
    agreement_id: int
    replace: bool = False


@dataclass(frozen=True, slots=True)
class InvitationStep:
    """Invite one worker, for change number `index` (an Invite, or a Replace once inactivated)."""

    index: int
    invitation: Invitation
    replace: bool = False

    @property
    def external_id(self) -> str | None:
        return self.invitation.external_id

    @property
    def email(self) -> str:
        return self.invitation.worker_email


@dataclass(frozen=True, slots=True)
class WebhookStep:
    """Create or replace the webhook configuration, for change number `index`."""

    index: int
    change: WebhookCreate | WebhookUpdate


@dataclass(frozen=True, slots=True)
class Schedule:
    """A plan's changes as the steps of an apply, in the order they run."""

    inactivations: tuple[InactivationStep, ...] = ()
    invitations: tuple[InvitationStep, ...] = ()
    webhook: WebhookStep | None = None


def schedule(plan: Plan) -> Schedule:
    """The steps for `plan`; a replace contributes an inactivation and an invitation."""
    inactivations: list[InactivationStep] = []
    invitations: list[InvitationStep] = []
    webhook: WebhookStep | None = None
    for index, change in enumerate(plan.changes):
        if isinstance(change, Inactivate):
            inactivations.append(InactivationStep(index, change.agreement.agreement_id))
        elif isinstance(change, Replace):
            inactivations.append(
                InactivationStep(index, change.agreement.agreement_id, replace=True)
            )
            invitations.append(InvitationStep(index, invitation_for(change.worker), replace=True))
        elif isinstance(change, Invite):
            invitations.append(InvitationStep(index, invitation_for(change.worker)))
        else:
            webhook = WebhookStep(index, change)
    return Schedule(tuple(inactivations), tuple(invitations), webhook)


def batches(
    steps: Iterable[InvitationStep], size: int = MAX_BATCH
) -> list[tuple[InvitationStep, ...]]:
    """The invitations in request-sized batches, in order."""
    if not 1 <= size <= MAX_BATCH:
        raise ValueError(f"a batch holds 1 to {MAX_BATCH} invitations, not {size}")
    pending = list(steps)
    return [tuple(pending[start : start + size]) for start in range(0, len(pending), size)]


def invitation_for(worker: DesiredWorker) -> Invitation:
    """The invitation item the file asks for (`ignoreChanges` only matters to the plan)."""
    return Invitation(
        worker_name=worker.worker_name,
        worker_surname=worker.worker_surname,
        type_of_worker=worker.type_of_worker,
        worker_email=worker.worker_email,
        country_iso=worker.country_iso,
        worker_legal_name=worker.worker_legal_name,
        job_title=worker.job_title,
        worker_email_text=worker.worker_email_text,
        external_id=worker.external_id,
        more=worker.more,
    )


def without(steps: Sequence[InvitationStep], indexes: set[int]) -> tuple[InvitationStep, ...]:
    """The steps whose change is not among `indexes`."""
    return tuple(step for step in steps if step.index not in indexes)
