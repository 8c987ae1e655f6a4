"""The diff: a pure function from the desired and the live state to a plan.

Records are matched by externalId with dictionaries and set operations, and each pair is
compared field by field in plain code: a generic deep diff (deepdiff over the whole account,
or even one per pair) costs more than the rest of a plan of 100,000 workers.

The diff also takes out the drift an active ignore rule hides (`apply_rules`), and judges the
two guards an apply must pass without `--force`, the inactivation limit and all-owned
(`assess`, which a saved plan's resume judges again on the live agreements).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from reconciler.desired.ignore import IgnoreRules, email_address
from reconciler.desired.model import (
    DesiredState,
    DesiredWebhook,
    DesiredWorker,
    InactivationLimit,
)
from reconciler.identity import email_key
from reconciler.plan.agreements import OPEN, AgreementIndex
from reconciler.plan.changes import (
    WEBHOOK_ADDRESS,
    Change,
    ClosedInService,
    Conflict,
    Drift,
    FieldChange,
    Inactivate,
    Invite,
    PastAgreement,
    Replace,
    Unmanaged,
    WebhookCreate,
    WebhookUpdate,
    closed_agreements,
    worker_address,
)
from reconciler.plan.model import Ignored, LiveState, Plan, PlanOptions, Safety
from reconciler.plan.money import known_lines, money_report, window_paylists
from reconciler.plan.payrun_checks import WalletCheck
from reconciler.plan.payruns import (
    PayrunDecision,
    decide_units,
    traced_paylists,
    units_of,
)
from reconciler.plan.periods import period_units, with_variance
from reconciler.secrets import Secret, live_webhook_url, reveal
from reconciler.service.models import Webhook, Worker
from reconciler.words import are, counted, plural

NO_EXTERNAL_ID = "no externalId"
OUTSIDE_SCOPE = "outside the scope"


def diff(desired: DesiredState, live: LiveState, options: PlanOptions | None = None) -> Plan:
    """Decide, for every managed externalId and the webhook, what an apply would do."""
    options = options or PlanOptions()
    index = live.index
    if index is None or not index.indexes(live.workers):
        index = AgreementIndex.of(live.workers)
    warnings = [
        f"agreement {agreement.agreement_id} has a status the reconciler does not know "
        f"({agreement.status}); it is treated as closed"
        for agreement in index.unknown_status
    ]
    unmanaged = [Unmanaged(agreement, NO_EXTERNAL_ID) for agreement in index.no_external_id]
    by_id = index.by_id
    wanted = {worker.external_id: worker for worker in desired.workers}
    managed_live: list[str] = []  # externalIds of the account the file manages, not in it
    owned_open = 0
    owns = desired.owns
    for external_id, agreements in by_id.items():  # one entry per externalId of the account
        if external_id in wanted or owns(external_id):
            if external_id not in wanted:
                managed_live.append(external_id)
            if len(agreements) == 1:  # nearly every one
                owned_open += agreements[0].status in OPEN
            else:
                owned_open += sum(agreement.status in OPEN for agreement in agreements)
        else:
            unmanaged.extend(Unmanaged(a, OUTSIDE_SCOPE) for a in agreements if a.status in OPEN)
    # Sorted from the file's order (timsort is quick on the runs a file mostly is).
    managed = sorted([*wanted, *managed_live])

    decide = _Decider(desired, options, index)
    narrowed = bool(options.targets or options.excludes)
    decide.each(managed if not narrowed else filter(options.selects, managed), wanted, by_id)
    ignored: tuple[Ignored, ...] = ()
    ignore_risks: tuple[str, ...] = ()
    if desired.ignore:
        rules = IgnoreRules(desired.ignore, options.today)
        ignored = apply_rules(rules, decide)
        unmanaged, hidden = ignore_unmanaged(rules, unmanaged)
        ignored += hidden
        warnings.extend(rule.expired_line() for rule in rules.expired())
        ignore_risks = (*rules.risk_lines(), *desired.ignore_changes)
        warnings.extend(ignore_risks)
        if not narrowed:  # a narrowed plan did not look at every address
            warnings.extend(rule.unmatched_line() for rule in rules.unmatched())

    if decide.kept_without_prune:
        kept = decide.kept_without_prune
        warnings.append(
            f"{plural(kept, 'owned open agreement')} {are(kept)} not in the file and "
            f"{are(kept)} kept because policy.prune is false"
        )
    warnings.extend(_unused_options(options, wanted, by_id, decide.replaced))
    warnings.extend(_made_in_service_lines(desired, decide))
    changes: list[Change] = list(decide.changes)
    kept_webhook = None
    if desired.webhook is not None and options.selects(WEBHOOK_ADDRESS):
        webhook_change = diff_webhook(desired.webhook, live.webhook)
        if webhook_change is not None:
            changes.append(webhook_change)
        else:
            kept_webhook = desired.webhook
    inactivations = sum(isinstance(change, Inactivate) for change in changes)
    payruns: tuple[PayrunDecision, ...] = ()
    wallet: WalletCheck | None = None
    if desired.payruns and not options.targets:  # --target names workers or the webhook
        today = options.today or datetime.now(UTC).date()
        payruns, wallet = decide_units(
            period_units(desired, index, live.paylists, today),
            live.paylists,
            live.workers,
            live.wallet,
            closing=closed_agreements(changes),
            max_payout=desired.policy.max_payout,
        )
        payruns = with_variance(payruns, live.paylists)
    money = None
    if live.money is not None:
        money = money_report(
            live.money,
            traced_paylists(units_of(desired.payruns), window_paylists(live.money)),
            {known.paylist_id: known.total for known in desired.history},
        )
        listed = desired.listed
        warnings.extend(known_lines(money, None if listed is None else listed.known_at_base))
    return Plan(
        money=money,
        payruns=payruns,
        wallet=wallet,
        changes=tuple(changes),
        drift=tuple(decide.drift),
        kept_pairs=tuple(decide.kept),
        kept_webhook=kept_webhook,
        conflicts=tuple(decide.conflicts),
        unmanaged=tuple(sorted(unmanaged, key=lambda u: u.agreement.agreement_id)),
        history=tuple(decide.history),
        closed=tuple(decide.closed),
        made_in_service=tuple(decide.made_in_service),
        ignore_risks=ignore_risks,
        warnings=tuple(warnings),
        safety=assess(owned_open, inactivations, desired.policy.max_inactivations),
        narrowed=narrowed,
        ignored=ignored,
    )


class _Decider:
    """The decision table of the spec, applied to one externalId at a time."""

    def __init__(
        self,
        desired: DesiredState,
        options: PlanOptions,
        index: AgreementIndex,
    ) -> None:
        self._prune = desired.policy.prune
        listed = desired.listed
        # None: prune everything owned that no file lists (`prune: all`, or history unknown).
        self._listed = None if desired.policy.prune_all or listed is None else listed.ids
        self.made_in_service: list[Worker] = []
        self._owns = desired.owns
        self._replaces = options.replaces
        self._today = options.today
        self._open_by_email = index.open_by_email
        self._compared = index.compared
        self.changes: list[Change] = []
        self.drift: list[Drift] = []
        # (agreement, worker, drifted fields): plain tuples, a plan of 100,000 in-sync workers
        # makes as many; Plan.kept turns them into Kept values when an output asks.
        self.kept: list[tuple[Worker, DesiredWorker, tuple[FieldChange, ...]]] = []
        self.conflicts: list[Conflict] = []
        self.history: list[PastAgreement] = []
        self.closed: list[ClosedInService] = []
        self.replaced: set[str] = set()
        self.kept_without_prune = 0

    def each(
        self, keys: Iterable[str], wanted: dict[str, DesiredWorker], by_id: dict[str, list[Worker]]
    ) -> None:
        """Decide every key, in order. A wanted worker with one open agreement, not to be
        replaced, is nearly every key of an account, and is decided here in line (as
        `_one_open` would): at 100,000 the calls alone cost a good part of the diff, which
        runs after the last page."""
        kept, drifted, compared, replaces = self.kept, self.drift, self._compared, self._replaces
        for key in keys:
            want = wanted.get(key)
            agreements = by_id.get(key, ())
            if (
                want is not None
                and len(agreements) == 1
                and agreements[0].status in OPEN
                and key not in replaces
                and want.ended is None
            ):
                agreement = agreements[0]
                fields = compared(want, agreement)
                if fields:
                    drifted.append(Drift(agreement, want, fields))
                kept.append((agreement, want, fields))
            else:
                self(key, want, agreements)

    def __call__(self, key: str, want: DesiredWorker | None, agreements: Sequence[Worker]) -> None:
        if len(agreements) == 1 and agreements[0].status in OPEN:  # nearly every worker
            self._one_open(key, want, agreements[0])
            return
        open_ = [a for a in agreements if a.status in OPEN]
        past = tuple(PastAgreement(key, a) for a in agreements if a.status not in OPEN)
        self.history.extend(past)
        if len(open_) > 1:
            ids = ", ".join(str(a.agreement_id) for a in open_)
            self.conflicts.append(
                Conflict(f"several open agreements ({ids})", tuple(open_), external_id=key)
            )
        elif open_:
            self._one_open(key, want, open_[0])
        elif want is not None and want.ended is None:  # an ended worker is never invited
            if past and not self._invites_again(want, agreements):
                self.closed.append(ClosedInService(want, past))
                return
            holders = self._email_holders(want, exclude=None)
            if holders:
                self.conflicts.append(_email_conflict(want, holders))
            else:
                self.changes.append(Invite(want, history=past))

    def _invites_again(self, want: DesiredWorker, agreements: Sequence[Worker]) -> bool:
        """Whether a worker closed in the service is invited again: `--replace ID`, or a
        `rehire:` day no agreement of it was created on or after (the marker is spent then)."""
        if want.external_id in self._replaces:
            self.replaced.add(want.external_id)
            return True
        rehire = want.rehire
        if rehire is None or rehire > (self._today or datetime.now(UTC).date()):
            return False  # a day ahead invites from that day, so its agreement spends it
        return not any(
            agreement.created_at.astimezone(UTC).date() >= rehire for agreement in agreements
        )

    def _one_open(self, key: str, want: DesiredWorker | None, agreement: Worker) -> None:
        if want is None:
            if self._prune and self._owns(key):
                if self._listed is not None and key not in self._listed:
                    self.made_in_service.append(agreement)  # no file ever listed it
                else:
                    self.changes.append(Inactivate(key, agreement))
            else:
                self.kept_without_prune += 1
            return
        if want.ended is not None:  # offboarding from git
            self.changes.append(Inactivate(key, agreement, want.ended))
            return
        fields = self._compared(want, agreement)
        if key in self._replaces:
            self.replaced.add(key)
            holders = self._email_holders(want, exclude=agreement)
            if holders:
                self.conflicts.append(_email_conflict(want, holders))
            else:
                self.changes.append(Replace(agreement, want, fields))
        else:
            if fields:
                self.drift.append(Drift(agreement, want, fields))
            self.kept.append((agreement, want, fields))

    def _email_holders(self, want: DesiredWorker, exclude: Worker | None) -> tuple[Worker, ...]:
        holders = self._open_by_email.get(email_key(want.worker_email), ())
        return tuple(a for a in holders if a is not exclude)


def _email_conflict(want: DesiredWorker, holders: tuple[Worker, ...]) -> Conflict:
    held = ", ".join(
        f"agreement {a.agreement_id} "
        + (f'under externalId "{a.external_id}"' if a.external_id else "with no externalId")
        for a in holders
    )
    return Conflict(
        f"the email {want.worker_email} is held by an open {held}; "
        "the service would refuse the invitation",
        holders,
        external_id=want.external_id,
        email=want.worker_email,
    )


def _made_in_service_lines(desired: DesiredState, decide: _Decider) -> Iterable[str]:
    """Risk first: each open agreement made in the service (no version of the files listed
    it), which prune leaves; or, when the files' history is unknown, that every inactivation
    keeps the old rule."""
    for agreement in decide.made_in_service:
        yield (
            f'worker["{agreement.external_id}"] (agreement {agreement.agreement_id}, '
            f"{agreement.status}) was made in the service: no version of the files in git "
            "listed it, so prune leaves it; `reconciler adopt` proposes it, and "
            "`policy.prune: all` (or listing it, then dropping it) inactivates it"
        )
    listed = desired.listed
    if (
        listed is not None
        and listed.ids is None
        and not desired.policy.prune_all
        and any(isinstance(change, Inactivate) for change in decide.changes)
    ):
        yield (
            f"whether the files ever listed the workers to inactivate cannot be told "
            f"({listed.why}): every owned open agreement no file lists is inactivated, "
            "as `policy.prune: all` does"
        )


def _unused_options(
    options: PlanOptions,
    wanted: dict[str, DesiredWorker],
    by_id: dict[str, list[Worker]],
    replaced: set[str],
) -> Iterable[str]:
    if not (options.targets or options.excludes or options.replaces):
        return  # nothing asked (the common case: no set of every key is made for it)
    known = wanted.keys() | by_id.keys() | {WEBHOOK_ADDRESS}
    for key in sorted(options.targets - known):
        yield f"--target {key}: no such worker in the file or the account"
    for key in sorted(options.excludes - known):
        yield f"--exclude {key}: no such worker in the file or the account"
    for key in sorted(options.replaces - replaced):
        if options.selects(key):
            yield (
                f"--replace {key}: nothing to replace (it needs a worker in the file and "
                "exactly one open agreement)"
            )


# --- comparing the webhook ----------------------------------------------------------------


def diff_webhook(want: DesiredWebhook, live: Webhook | None) -> Change | None:
    """Create when the service has none, update when url, enabled, event types or headers differ."""
    if live is None:
        return WebhookCreate(want)
    fields: list[FieldChange] = []
    if reveal(want.url) != live.url:
        fields.append(FieldChange("url", live_webhook_url(live.url, want.url), want.url))
    if want.enabled != live.enabled:
        fields.append(FieldChange("enabled", live.enabled, want.enabled))
    if set(want.event_types) != set(live.event_types):
        fields.append(
            FieldChange("event_types", sorted(set(live.event_types)), sorted(want.event_types))
        )
    fields.extend(_header_changes(want, live))
    return WebhookUpdate(live, want, tuple(fields)) if fields else None


def _header_changes(want: DesiredWebhook, live: Webhook) -> Iterable[FieldChange]:
    mine = {header.name.lower(): header for header in want.headers}
    theirs = {header.name.lower(): header for header in live.headers}
    for key in sorted(mine.keys() | theirs.keys()):
        new, old = mine.get(key), theirs.get(key)
        old_value: Secret | None = old.value if old else None
        new_value: Secret | None = new.value if new else None
        if old_value is None or new_value is None or old_value != new_value:
            name = (new or old).name  # type: ignore[union-attr]  # one of them exists
            yield FieldChange(f'headers["{name}"]', old_value, new_value, sensitive=True)


#: Below this many owned open agreements a share limit is not checked: at 4 owned workers,
#: 25% would refuse a single removal. A count (`maxInactivations: 2`) is always checked.
MIN_OWNED_FOR_SHARE = 10


def assess(owned_open: int, inactivations: int, limit: InactivationLimit) -> Safety:
    """Judge a plan that would inactivate `inactivations` of `owned_open` owned agreements."""
    problems: list[str] = []
    allowed = limit.allowed(owned_open)
    checked = not limit.is_share or owned_open >= MIN_OWNED_FOR_SHARE
    if checked and inactivations > allowed:
        shown = math.floor(allowed) if limit.is_share else allowed
        problems.append(
            f"{plural(inactivations, 'inactivation')} exceed{'s' if inactivations == 1 else ''} "
            f"policy.maxInactivations {limit} "
            f"({shown} of {plural(owned_open, 'owned open agreement')})"
        )
    if inactivations and inactivations >= owned_open:
        problems.append(f"the plan would inactivate every owned worker ({counted(owned_open)})")
    return Safety(
        owned_open=owned_open,
        inactivations=inactivations,
        limit=limit,
        problems=tuple(problems),
    )


def apply_rules(rules: IgnoreRules, decided: _Decider) -> tuple[Ignored, ...]:
    """Take the fields active rules hide out of `decided`'s drift (a worker left with none is
    no longer drifted) and kept pairs; return them, in the plan's order.

    The drift of 100,000 workers is decided in line (`_Decider`); the rules are applied once it
    has, and only when the files write any, so a state without rules pays nothing."""
    ignored: list[Ignored] = []
    hidden: dict[int, tuple[FieldChange, ...]] = {}  # agreement id -> fields still shown
    drift: list[Drift] = []
    for found in decided.drift:
        address = worker_address(found.worker.external_id)
        shown: list[FieldChange] = []
        for change in found.fields:
            rule = rules.rule_for(f"{address}.{change.name}")
            if rule is None:
                shown.append(change)
            else:
                ignored.append(Ignored(f"{address}.{change.name}", rule))
        if len(shown) != len(found.fields):
            hidden[found.agreement.agreement_id] = tuple(shown)
        if shown:
            drift.append(Drift(found.agreement, found.worker, tuple(shown)))
    if hidden:
        decided.drift[:] = drift
        decided.kept[:] = [
            (agreement, want, hidden.get(agreement.agreement_id, fields))
            for agreement, want, fields in decided.kept
        ]
    return tuple(ignored)


def ignore_unmanaged(
    rules: IgnoreRules, unmanaged: list[Unmanaged]
) -> tuple[list[Unmanaged], tuple[Ignored, ...]]:
    """Split the unmanaged workers into those still unmanaged and those an active rule names
    (another team's `worker["AGY-*"]`, or `worker[email="..."]` for one with no externalId):
    those are counted as ignored, and never fail `drift --strict`."""
    kept: list[Unmanaged] = []
    ignored: list[Ignored] = []
    for item in unmanaged:
        agreement = item.agreement
        if agreement.external_id is not None:
            address = worker_address(agreement.external_id)
        else:
            address = email_address(agreement.email)
        rule = rules.rule_for(address)
        if rule is None:
            kept.append(item)
        else:
            ignored.append(Ignored(address, rule))
    return kept, tuple(ignored)
