"""The plan: what would change, what drifted, what is left alone, and whether it is safe."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from reconciler.desired.ignore import IgnoreRule
from reconciler.desired.model import (
    DEFAULT_INACTIVATION_LIMIT,
    DesiredWebhook,
    DesiredWorker,
    InactivationLimit,
)
from reconciler.errors import Refused
from reconciler.plan.agreements import AgreementIndex
from reconciler.plan.approvals import Approvals
from reconciler.plan.changes import (
    Change,
    ClosedInService,
    Conflict,
    Drift,
    FieldChange,
    Inactivate,
    Invite,
    Kept,
    PastAgreement,
    Replace,
    Resource,
    Unmanaged,
    WebhookCreate,
    WebhookUpdate,
    live_worker_resource,
)
from reconciler.plan.money import LiveMoney, MoneyReport
from reconciler.plan.payrun_checks import WalletCheck
from reconciler.plan.payruns import (
    CONFLICT,
    REFUSED,
    TO_PAY,
    WAITING,
    LivePaylist,
    PayrunDecision,
    to_pay_phrase,
)
from reconciler.service.models import Wallet, Webhook, Worker
from reconciler.words import are, counted, plural


@dataclass(frozen=True, slots=True)
class LiveState:
    """What the service holds: every agreement in every status, and the webhook (or None)."""

    workers: tuple[Worker, ...]
    webhook: Webhook | None = None
    paylists: tuple[LivePaylist, ...] = ()  # read only when the file has payruns
    wallet: Wallet | None = None
    money: LiveMoney | None = None  # read only with payruns or a money window
    # The agreements grouped as they were read (`agreements`); the diff makes one without it.
    index: AgreementIndex | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """How the command line narrows or bends a plan."""

    targets: frozenset[str] = frozenset()  # externalIds, or "webhook"; empty: everything
    excludes: frozenset[str] = frozenset()
    replaces: frozenset[str] = frozenset()
    today: date | None = None  # the day ignore rules are read against (default: UTC today)

    def selects(self, address_key: str) -> bool:
        """Whether `--target`/`--exclude` keep this externalId (or "webhook") in the plan."""
        if address_key in self.excludes:
            return False
        return not self.targets or address_key in self.targets


class UnsafePlan(Refused):
    """The plan trips a safety guard; it was shown, and apply needs `--force`."""


@dataclass(frozen=True, slots=True)
class Summary:
    """The counts of the summary line."""

    invite: int = 0
    inactivate: int = 0
    replace: int = 0
    create: int = 0
    update: int = 0
    drifted: int = 0
    unmanaged: int = 0
    conflicts: int = 0

    @property
    def invitation_emails(self) -> int:
        """How many invitation e-mails an apply would make the service send."""
        return self.invite + self.replace

    def line(self) -> str:
        """'3 to invite, 1 to inactivate, 1 to update, 2 drifted, 5 unmanaged' and extras."""
        parts = [f"{counted(self.invite)} to invite", f"{counted(self.inactivate)} to inactivate"]
        if self.replace:
            parts.append(f"{counted(self.replace)} to replace")
        if self.create:
            parts.append(f"{counted(self.create)} to create")
        parts += [f"{counted(self.update)} to update", f"{counted(self.drifted)} drifted"]
        parts.append(f"{counted(self.unmanaged)} unmanaged")
        if self.conflicts:
            parts.append(f"{counted(self.conflicts)} in conflict")
        return ", ".join(parts)

    def changes_line(self) -> str:
        """'1 to invite, 1 to inactivate, 1 to update': what an apply acts on, and only that
        (drift, unmanaged workers and conflicts are never touched)."""
        counts = (
            (self.invite, "invite"),
            (self.inactivate, "inactivate"),
            (self.replace, "replace"),
            (self.create, "create"),
            (self.update, "update"),
        )
        return (
            ", ".join(f"{counted(count)} to {verb}" for count, verb in counts if count)
            or "no changes"
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "invite": self.invite,
            "inactivate": self.inactivate,
            "replace": self.replace,
            "create": self.create,
            "update": self.update,
            "drifted": self.drifted,
            "unmanaged": self.unmanaged,
            "conflicts": self.conflicts,
            "invitation_emails": self.invitation_emails,
        }


@dataclass(frozen=True, slots=True)
class DriftEntry:
    """A drifted worker as the plan's outputs show it: its address, agreement and fields.

    A saved plan keeps these, so a comment made from it shows the drift as it was planned."""

    address: str
    agreement_id: int
    fields: tuple[FieldChange, ...]

    @classmethod
    def of(cls, drift: Drift) -> DriftEntry:
        return cls(drift.address, drift.agreement.agreement_id, drift.fields)


@dataclass(frozen=True, slots=True)
class Ignored:
    """A drifted field an active ignore rule hides: counted and shown, never failing."""

    address: str  # worker["ENG-002"].<field>, a field the plan compares
    rule: IgnoreRule


@dataclass(frozen=True, slots=True)
class ClosedEntry:
    """A worker closed in the service as the outputs show it (a saved plan keeps these): its
    address and why, and for the plan's JSON its externalId, `rehire:` and closed agreements
    (None in a plan saved before it kept them, which the JSON leaves out)."""

    address: str
    reason: str
    external_id: str | None = None
    rehire: str | None = None
    agreements: tuple[Resource, ...] | None = None

    @classmethod
    def of(cls, closed: ClosedInService) -> ClosedEntry:
        rehire = closed.worker.rehire
        return cls(
            closed.address,
            closed.reason,
            closed.external_id,
            None if rehire is None else rehire.isoformat(),
            tuple(live_worker_resource(past.agreement) for past in closed.history),
        )


@dataclass(frozen=True, slots=True)
class Reported:
    """What a saved plan reported besides its changes, when it was made: counts, the drifted
    workers and the money of the window (unmanaged workers and conflicts are counted only)."""

    drifted: int = 0
    unmanaged: int = 0
    conflicts: int = 0
    drift: tuple[DriftEntry, ...] = ()
    money: MoneyReport | None = None
    closed: tuple[ClosedEntry, ...] = ()
    #: The open agreements made in the service (`live_worker_resource`'s) it reported.
    made_in_service: tuple[Resource, ...] = ()


@dataclass(frozen=True, slots=True)
class Safety:
    """The inputs and verdict of the two apply guards."""

    owned_open: int  # owned open agreements in the whole account, before any --target
    inactivations: int
    limit: InactivationLimit = DEFAULT_INACTIVATION_LIMIT
    problems: tuple[str, ...] = ()

    @property
    def safe(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything one diff found. Changes are in address order, the webhook last."""

    changes: tuple[Change, ...] = ()
    drift: tuple[Drift, ...] = ()
    # The managed workers left as they are, (agreement, worker, drifted fields): see `kept`.
    kept_pairs: tuple[tuple[Worker, DesiredWorker, tuple[FieldChange, ...]], ...] = ()
    kept_webhook: DesiredWebhook | None = None  # the file's webhook, when it needs no change
    conflicts: tuple[Conflict, ...] = ()
    unmanaged: tuple[Unmanaged, ...] = ()
    history: tuple[PastAgreement, ...] = ()
    #: Workers of the files the service closed: not invited again (product spec, "The
    #: service's screens").
    closed: tuple[ClosedInService, ...] = ()
    #: Open agreements in scope no version of the files listed (HR invited them in the
    #: service's screens): prune leaves them, `adopt` proposes them, `drift` reports them.
    made_in_service: tuple[Worker, ...] = ()
    warnings: tuple[str, ...] = ()
    #: Those of the warnings that name an ignore rule hiding too much: a saved plan keeps them,
    #: so its comment warns as the fresh plan's did.
    ignore_risks: tuple[str, ...] = ()
    safety: Safety = field(default_factory=lambda: Safety(owned_open=0, inactivations=0))
    narrowed: bool = False  # --target or --exclude kept only part of the file and the account
    payruns: tuple[PayrunDecision, ...] = ()
    wallet: WalletCheck | None = None
    reported: Reported | None = None  # what a resumed saved plan reported when it was made
    money: MoneyReport | None = None  # the money of the window, when it was read
    ignored: tuple[Ignored, ...] = ()  # drift that active ignore rules hide
    #: The payruns' approvals under dual control (`reconciler.plan.approvals`), when judged.
    approvals: Approvals | None = None

    @property
    def kept(self) -> tuple[Kept, ...]:
        """The managed workers the plan leaves as they are: in sync, or drifted and only
        reported (Terraform's planned_values lists them)."""
        return tuple(
            Kept(agreement, worker, fields) for agreement, worker, fields in self.kept_pairs
        )

    @property
    def drift_entries(self) -> tuple[DriftEntry, ...]:
        """The drifted workers to show: this plan's, or those a saved plan kept."""
        if self.drift:
            return tuple(DriftEntry.of(drift) for drift in self.drift)
        return self.reported.drift if self.reported is not None else ()

    @property
    def closed_entries(self) -> tuple[ClosedEntry, ...]:
        """The workers closed in the service to show: this plan's, or a saved plan's."""
        if self.closed:
            return tuple(ClosedEntry.of(closed) for closed in self.closed)
        return self.reported.closed if self.reported is not None else ()

    @property
    def made_entries(self) -> tuple[Resource, ...]:
        """The open agreements made in the service to show: this plan's, or a saved plan's."""
        if self.made_in_service:
            return tuple(live_worker_resource(agreement) for agreement in self.made_in_service)
        return self.reported.made_in_service if self.reported is not None else ()

    @property
    def has_changes(self) -> bool:
        return bool(self.changes) or bool(self.to_pay)

    def drift_detected(self, *, strict: bool) -> bool:
        """`drift`'s verdict: changes or drift (workers closed or made in the service count:
        `adopt` proposes them); with `--strict`, unmanaged workers, conflicts
        and money that needs action (untraced, failed, stuck) too."""
        if self.has_changes or self.drift or self.closed_entries or self.made_entries:
            return True
        money = self.money is not None and self.money.needs_action
        return strict and bool(self.unmanaged or self.conflicts or money)

    @property
    def to_pay(self) -> tuple[PayrunDecision, ...]:
        """The paylists an apply would create."""
        return tuple(decision for decision in self.payruns if decision.state == TO_PAY)

    @property
    def actions_line(self) -> str:
        """What an apply acts on: '1 to invite, 1 payrun to pay (1,750.00)', or 'no changes'."""
        changes = self.summary.changes_line() if self.changes else ""
        return ", ".join(part for part in (changes, to_pay_phrase(self.payruns)) if part) or (
            "no changes"
        )

    @property
    def headline(self) -> str:
        """The plan's first words: what it does, or why there is nothing to do."""
        return self.headline_for(strict=False)

    def headline_for(self, *, strict: bool) -> str:
        """The plan's first words for every mix: actions (changes or payruns to pay) first;
        else each reason the account is not as the file says: drift, conflicts and blocked
        payruns, money that needs action, and (`strict`, as `drift --strict` judges it)
        unmanaged workers; else that it matches."""
        if self.has_changes:
            return "reconciler will perform the following actions:"
        summary = self.summary
        blocked = any(decision.state in (CONFLICT, REFUSED, WAITING) for decision in self.payruns)
        reasons = []
        if summary.drifted or summary.conflicts or blocked:
            reasons.append("the account still differs from the file where the plan cannot act")
        if self.closed_entries:
            closed = len(self.closed_entries)
            reasons.append(
                f"{plural(closed, 'worker')} closed in the service {are(closed)} not invited again"
            )
        if self.money is not None and self.money.needs_action:
            reasons.append("money was paid outside the files' payruns or needs action")
        if strict and self.unmanaged:
            unmanaged = f"{plural(len(self.unmanaged), 'open agreement')} not owned by the file"
            if not reasons and not self.narrowed:
                return (
                    f"No changes to apply, but {unmanaged} (unmanaged, listed below) make "
                    "`drift --strict` report drift."
                )
            reasons.append(f"{unmanaged} make `drift --strict` report drift")
        but = (
            ", ".join(reasons[:-1]) + " and " + reasons[-1]
            if len(reasons) > 1
            else "".join(reasons)
        )
        if self.narrowed:
            nothing = "No changes among what --target and --exclude selected"
            return f"{nothing}, but {but} (below)." if but else f"{nothing}."
        if but:
            return f"No changes to apply, but {but} (below)."
        if self.ignored:
            return "No changes. The account matches the file but for the drift ignore rules hide."
        return "No changes. The account matches the file."

    @property
    def summary(self) -> Summary:
        counts = {kind: 0 for kind in (Invite, Inactivate, Replace, WebhookCreate, WebhookUpdate)}
        for change in self.changes:
            counts[type(change)] += 1
        return Summary(
            invite=counts[Invite],
            inactivate=counts[Inactivate],
            replace=counts[Replace],
            create=counts[WebhookCreate],
            update=counts[WebhookUpdate],
            drifted=len(self.drift) or (self.reported.drifted if self.reported else 0),
            unmanaged=len(self.unmanaged) or (self.reported.unmanaged if self.reported else 0),
            conflicts=len(self.conflicts) or (self.reported.conflicts if self.reported else 0),
        )

    def raise_if_unsafe(self, force: bool = False) -> None:
        """Refuse to apply a plan that trips a safety guard, unless forced."""
        if force or self.safety.safe:
            return
        raise UnsafePlan(
            "the plan is unsafe to apply: " + "; ".join(self.safety.problems),
            hint="check the file and the scope; apply with --force if this is really intended",
        )
