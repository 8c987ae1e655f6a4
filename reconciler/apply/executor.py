"""The executor: carries out a plan's changes through a service, and records each in a ledger.

The service is passed in (the read-write `ServiceClient` in the CLI), so this module speaks no
HTTP; it only knows the client's error classes. Order and batching come from `schedule`, what
to send again from `converge`. Work runs on a bounded pool of threads sharing the one
thread-safe client; `stop` (set on Ctrl-C) makes every step that has not sent its request yet
skip it, while requests already in flight finish and are recorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, wait
from typing import Protocol, TypeVar

from reconciler import logs, threads
from reconciler.apply.converge import landed, refusals
from reconciler.apply.ledger import Ledger, Outcome
from reconciler.apply.reread import SharedReread, may_have_landed
from reconciler.apply.schedule import (
    MAX_BATCH,
    InactivationStep,
    InvitationStep,
    WebhookStep,
    batches,
    schedule,
)
from reconciler.plan.model import Plan
from reconciler.secrets import reveal
from reconciler.service.config import ClientConfig
from reconciler.service.errors import (
    AmbiguousOutcome,
    NotFound,
    ServiceError,
)
from reconciler.service.models import (
    InactivationResult,
    Invitation,
    InvitationResult,
    Webhook,
    WebhookHeader,
    Worker,
)
from reconciler.service.retries import wait_to_resend
from reconciler.words import plural

DEFAULT_PARALLELISM = 4
#: How many times one batch may come back ambiguous before its rest is given up as failed.
MAX_AMBIGUOUS_ROUNDS = 6

INTERRUPTED = "interrupted before it was sent"
QUIT_IN_FLIGHT = "not known: apply quit (second Ctrl-C) before its answer, if it was sent"

_T = TypeVar("_T")

_log = logs.get_logger("reconciler.apply")


class ApplyService(Protocol):
    """What the executor needs of a service client."""

    def list_workers(self) -> list[Worker]: ...

    def invite_workers(self, invitations: Sequence[Invitation]) -> list[InvitationResult]: ...

    def inactivate_agreement(self, agreement_id: int) -> InactivationResult: ...

    def set_webhook(
        self,
        url: str,
        headers: Sequence[WebhookHeader],
        event_types: Sequence[str],
        enabled: bool = True,
    ) -> Webhook: ...

    @property
    def config(self) -> ClientConfig: ...


class Progress(Protocol):
    """Where the executor reports how far it got (a progress bar, log lines, nothing)."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, outcome: Outcome) -> None: ...


class _NoProgress:
    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, outcome: Outcome) -> None:
        pass


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


class Executor:
    """Applies plans through `service`, `parallelism` requests at a time.

    `batch_size` is the number of invitations per request (at most the contract's 100).
    """

    def __init__(
        self,
        service: ApplyService,
        *,
        parallelism: int = DEFAULT_PARALLELISM,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
        batch_size: int = MAX_BATCH,
    ) -> None:
        if parallelism < 1:
            raise ValueError("parallelism must be at least 1")
        self._service = service
        self._parallelism = parallelism
        self._batch_size = batch_size
        self._progress = progress or _NoProgress()
        self.stop = stop or threading.Event()
        self._reread = SharedReread(service.list_workers)
        self.ledger: Ledger | None = None

    def apply(self, plan: Plan) -> Ledger:
        """Carry out `plan`; every change ends in the ledger as applied, failed or skipped."""
        ledger = Ledger(plan.changes, on_settle=lambda entry: self._progress.advance(entry.outcome))
        self.ledger = ledger  # as it stands, for a second Ctrl-C that will not wait
        steps = schedule(plan)
        # A replace's invitation waits for its inactivation; these are the ones that may go.
        inactivated: set[int] = set()
        lock = threading.Lock()

        def inactivate(step: InactivationStep) -> None:
            if self._inactivate(step, ledger):
                with lock:
                    inactivated.add(step.index)

        if steps.inactivations:
            self._progress.phase("inactivating", len(steps.inactivations))
            self._run(inactivate, steps.inactivations)
        invitations = [
            step for step in steps.invitations if not step.replace or step.index in inactivated
        ]
        if invitations:
            self._progress.phase("inviting", len(invitations))
            self._run(
                lambda batch: self._invite(batch, ledger), batches(invitations, self._batch_size)
            )
        if steps.webhook is not None:
            self._progress.phase("webhook", 1)
            self._set_webhook(steps.webhook, ledger)
        for step in invitations:  # replaces inactivated whose invitation was never sent
            if step.replace and not ledger.is_settled(step.index):
                ledger.record(
                    step.index,
                    Outcome.FAILED,
                    f"inactivated, but the new invitation was {INTERRUPTED}",
                )
        ledger.interrupted = self.stop.is_set()
        ledger.settle_the_rest(INTERRUPTED)
        return ledger

    def _run(self, work: Callable[[_T], None], items: Iterable[_T]) -> None:
        """Run `work` on every item, `parallelism` at a time; returns when all have ended."""
        pool = threads.Pool(self._parallelism, thread_name_prefix="reconciler-apply")
        try:
            futures: list[Future[None]] = [pool.submit(work, item) for item in items]
            wait(futures)
        except KeyboardInterrupt:  # a second Ctrl-C: leave the requests in flight, wait for none
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        for future in futures:
            future.result()  # a bug in a step must not pass silently

    # -- inactivation ---------------------------------------------------------------------

    def _inactivate(self, step: InactivationStep, ledger: Ledger) -> bool:
        """Inactivate one agreement; True when it is inactive now (a replace may invite)."""
        if self.stop.is_set():
            return False  # settled as skipped at the end
        agreement = step.agreement_id
        try:
            result = self._service.inactivate_agreement(agreement)
        except NotFound:
            ledger.record(
                step.index,
                Outcome.SKIPPED,
                f"agreement {agreement} no longer exists (it vanished since the plan)"
                + ("; not invited again: plan again" if step.replace else ""),
                agreement_id=agreement,
            )
            return False
        except ServiceError as error:
            if may_have_landed(error) and self._confirm_inactivated(agreement, error):
                note = "inactivated (confirmed by re-reading after a lost answer)"
                if not step.replace:
                    ledger.record(step.index, Outcome.APPLIED, note, agreement_id=agreement)
                return True
            ledger.record(
                step.index,
                Outcome.FAILED,
                _first_line(error) + ("; not invited again" if step.replace else ""),
                agreement_id=agreement,
            )
            return False
        _log.debug("inactivated", agreement_id=agreement, changed=result.changed)
        if not step.replace:
            # Not changed: inactive already when this request arrived (a retried request whose
            # first answer was lost, or a change made elsewhere): not "already inactivated".
            already = None if result.changed else "inactive when confirmed by the service"
            ledger.record(step.index, Outcome.APPLIED, already, agreement_id=agreement)
        return True

    def _confirm_inactivated(self, agreement_id: int, error: ServiceError) -> bool:
        try:
            return self._reread.after(time.monotonic()).is_inactivated(agreement_id)
        except ServiceError as read_error:
            _log.warning(
                "could not re-read to confirm an inactivation",
                agreement_id=agreement_id,
                error=_first_line(error),
                read_error=_first_line(read_error),
            )
            return False

    # -- invitation -----------------------------------------------------------------------

    def _invite(self, batch: Sequence[InvitationStep], ledger: Ledger) -> None:
        """Send one batch until every invitation in it has landed, failed or been skipped."""
        pending = list(batch)
        ambiguous_rounds = 0
        policy = self._service.config.retry  # the batch's sends, in the time of one request's
        deadline = time.monotonic() + policy.total_seconds
        while pending:
            if self.stop.is_set():
                return  # the rest is settled as skipped at the end
            try:
                results = self._service.invite_workers([step.invitation for step in pending])
            except AmbiguousOutcome as error:
                # Only a read that starts after the failure was seen may judge it: the service
                # commits before it answers (or drops the connection), not before it is sent.
                failed_at = time.monotonic()
                ambiguous_rounds += 1
                pending = self._after_ambiguity(pending, error, failed_at, ambiguous_rounds, ledger)
                # Sent again only after the wait any retry takes (at least its Retry-After).
                waited = wait_to_resend(
                    self.stop,
                    policy,
                    ambiguous_rounds,
                    error.retry_after,
                    failed_at=failed_at,
                    deadline=deadline,
                )
                if pending and not waited:
                    reason = (
                        f"outcome unknown ({_first_line(error)}) and not landed when re-read; "
                        "not sent again: the wait before it would pass the request's time "
                        f"({policy.total_seconds:g} s); plan again"
                    )
                    for step in pending:
                        self._settle_invitation(step, ledger, Outcome.FAILED, reason)
                    pending = []
                continue
            except ServiceError as error:
                pending = self._after_refusal(pending, error, ambiguous_rounds > 0, ledger)
                continue
            agreements: list[int | None] = [result.agreement_id for result in results]
            if len(agreements) != len(pending):
                agreements = [None] * len(pending)  # an answer without one per item: no ids
            for step, agreement in zip(pending, agreements, strict=True):
                self._settle_invitation(step, ledger, Outcome.APPLIED, None, agreement)
            pending = []

    def _after_ambiguity(
        self,
        pending: list[InvitationStep],
        error: AmbiguousOutcome,
        failed_at: float,
        rounds: int,
        ledger: Ledger,
    ) -> list[InvitationStep]:
        """Re-read, count what landed as done, and return what must be sent again."""
        _log.info("invitation outcome unknown; re-reading", batch=len(pending), round=rounds)
        try:
            live = self._reread.after(failed_at)
        except ServiceError as read_error:
            reason = (
                f"outcome unknown ({_first_line(error)}), and re-reading the workers failed "
                f"({_first_line(read_error)}): not sent again, so never twice; plan again"
            )
            for step in pending:
                self._settle_invitation(step, ledger, Outcome.FAILED, reason)
            return []
        done, rest = landed(pending, live)
        for step, agreement in done:
            note = "landed although its answer was lost"
            self._settle_invitation(step, ledger, Outcome.APPLIED, note, agreement.agreement_id)
        if rest and rounds >= MAX_AMBIGUOUS_ROUNDS:
            reason = f"the service's answer was lost {plural(rounds, 'time')}: {_first_line(error)}"
            for step in rest:
                self._settle_invitation(step, ledger, Outcome.FAILED, reason)
            return []
        return rest

    def _after_refusal(
        self,
        pending: list[InvitationStep],
        error: ServiceError,
        sent_before: bool,
        ledger: Ledger,
    ) -> list[InvitationStep]:
        """Fail the refused items with the service's reason; return the rest to send again."""
        split = refusals(pending, error.item_errors)
        if split is None:
            for step in pending:
                self._settle_invitation(step, ledger, Outcome.FAILED, _first_line(error))
            return []
        refused, rest = split
        if sent_before:
            # After an ambiguous answer, an invitation the service now refuses may be one that
            # landed late (after the re-read): the live state says which.
            refused = self._recheck_refused(refused, ledger)
        for step, reason in refused:
            self._settle_invitation(step, ledger, Outcome.FAILED, reason)
        return rest

    def _recheck_refused(
        self, refused: list[tuple[InvitationStep, str]], ledger: Ledger
    ) -> list[tuple[InvitationStep, str]]:
        try:
            live = self._reread.after(time.monotonic())
        except ServiceError:
            return refused
        still: list[tuple[InvitationStep, str]] = []
        for step, reason in refused:
            holder = live.holder(step)
            if holder is None:
                still.append((step, reason))
            else:
                note = "landed although its answer was lost"
                self._settle_invitation(step, ledger, Outcome.APPLIED, note, holder.agreement_id)
        return still

    def _settle_invitation(
        self,
        step: InvitationStep,
        ledger: Ledger,
        outcome: Outcome,
        detail: str | None,
        agreement_id: int | None = None,
    ) -> None:
        if step.replace:
            prefix = (
                "inactivated, then invited again"
                if outcome is Outcome.APPLIED
                else ("inactivated, but the new invitation failed")
            )
            detail = f"{prefix}: {detail}" if detail else prefix
        ledger.record(step.index, outcome, detail, agreement_id=agreement_id)

    # -- webhook --------------------------------------------------------------------------

    def _set_webhook(self, step: WebhookStep, ledger: Ledger) -> None:
        if self.stop.is_set():
            return
        webhook = step.change.webhook
        headers = [WebhookHeader(header.name, header.value) for header in webhook.headers]
        try:
            self._service.set_webhook(
                reveal(webhook.url), headers, sorted(webhook.event_types), enabled=webhook.enabled
            )
        except ServiceError as error:
            ledger.record(step.index, Outcome.FAILED, _first_line(error))
            return
        ledger.record(step.index, Outcome.APPLIED)
