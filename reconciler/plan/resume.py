"""A saved plan made real again: checked against a fresh read of the account before it is applied.

The signature (`reconciler.plan.signing`) says nobody edited the plan; this module trusts
nothing in it that the live account can check, as defence in depth:

- a plan made in the future, or longer ago than `--plan-ttl`, is refused;
- an inactivation or a replacement acts only on the open agreement, owned under the plan's
  scope, of the externalId the plan names, and only if its id is the one the plan names;
- an invitation is only for an externalId the scope owns, and no address appears twice;
- the safety guards are judged again on the live owned agreements, with the recorded limit;
- every live resource a change touches must have the fingerprint it had when planned, and
  every `${VAR}` value must still be the one the plan was made with.

Anything else raises `StalePlan` (the world moved) or `UntrustedPlan` (the plan asks for what
no plan of this account could), before a single request is sent.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from reconciler.desired.interpolate import InterpolationError, interpolate
from reconciler.desired.model import (
    DesiredWebhook,
    DesiredWorker,
    InactivationLimit,
    WebhookHeader,
)
from reconciler.plan.approvals import Approvals
from reconciler.plan.changes import (
    Change,
    FieldChange,
    Inactivate,
    Invite,
    Replace,
    WebhookUpdate,
    closed_agreements,
)
from reconciler.plan.diff import assess, diff_webhook
from reconciler.plan.fingerprint import LABEL as FINGERPRINT_LABEL
from reconciler.plan.fingerprint import LiveIndex, fingerprint
from reconciler.plan.model import DriftEntry, LiveState, Plan, Reported
from reconciler.plan.payrun_checks import WalletCheck
from reconciler.plan.payruns import (
    CONFLICT,
    REFUSED,
    PayrunDecision,
    Unit,
    decide_units,
    paylist_key,
)
from reconciler.plan.periods import with_saved_variance, with_variance
from reconciler.plan.saved import (
    CLOCK_SKEW,
    DEFAULT_MAX_AGE,
    VALUE_LABEL,
    SavedPlan,
    StalePlan,
    closed_of,
    money_of,
    payment_of,
)
from reconciler.plan.signing import PlanKey, UntrustedPlan
from reconciler.plan.variance import variance_from
from reconciler.secrets import Secret, webhook_url
from reconciler.service.models import Worker
from reconciler.words import counted

_AGAIN = "nothing was applied; run `reconciler plan --out` again"


def resume(
    saved: SavedPlan,
    live: LiveState,
    *,
    key: PlanKey,
    environ: Mapping[str, str],
    now: datetime | None = None,
    max_age: timedelta = DEFAULT_MAX_AGE,
) -> Plan:
    """The plan to apply now, re-derived from `live`; `StalePlan`/`UntrustedPlan` otherwise."""
    saved.verify(key)
    _check_age(saved, now or datetime.now(UTC), max_age)
    index = LiveIndex(live)

    def owns(external_id: str | None) -> bool:
        prefix = saved.scope_prefix
        return external_id is not None and (prefix is None or external_id.startswith(prefix))

    rebuild = _Rebuilder(index, owns, key.derive(VALUE_LABEL), environ, saved.name)
    changes = [rebuild(record) for record in saved.records]
    fingerprint_key = key.derive(FINGERPRINT_LABEL)
    stale = [
        record["address"]
        for record, change in zip(saved.records, changes, strict=True)
        if not hmac.compare_digest(
            fingerprint(change, index, fingerprint_key), record["fingerprint"]
        )
    ]
    if stale:
        raise StalePlan(
            "the live account changed since the plan was made: "
            + ", ".join(stale[:20])
            + (f" and {counted(len(stale) - 20)} more" if len(stale) > 20 else ""),
            hint=_AGAIN,
        )
    owned_open = sum(1 for a in live.workers if a.status.is_open and owns(a.external_id))
    inactivations = sum(isinstance(change, Inactivate) for change in changes)
    limit = InactivationLimit(saved.limit_value, is_share=saved.limit_is_share)
    payruns, wallet = _payruns(saved, live, changes)
    reported = _reported(saved.reported)
    risks = tuple(str(line) for line in saved.reported.get("ignore_risks", ()))
    return Plan(
        # As the plan said them when it was made (the ignore rules that hide too much among
        # them); a plan saved before it kept them: the broad rules' warnings alone, or none.
        warnings=tuple(str(line) for line in saved.reported.get("warnings", risks)),
        changes=tuple(changes),
        safety=assess(owned_open, inactivations, limit),
        reported=reported,
        payruns=payruns,
        wallet=wallet,
        money=reported.money,
        ignore_risks=risks,
        approvals=None if saved.approvals is None else Approvals.from_dict(saved.approvals),
    )


def _payruns(
    saved: SavedPlan, live: LiveState, changes: list[Change]
) -> tuple[tuple[PayrunDecision, ...], WalletCheck | None]:
    """The saved payruns judged again on the live account, by the checks a fresh plan runs
    (`decide_units`): a payee no longer the agreement reviewed, ACTIVE at the very email
    reviewed, or one this plan closes, a payment paid meanwhile, a disabled
    wallet refuse a payrun; the wallet and `policy.maxPayout` (as recorded) refuse the payruns
    without `--force`; one whose paylist exists now is not paid again."""
    if not saved.payruns:
        return (), None
    units = []
    for record in saved.payruns:
        period = record.get("period")
        if record["idempotence_key"] != paylist_key(record["id"], record["part"], period):
            raise UntrustedPlan(
                f"{saved.name}: {record['address']!r:.80} carries a key that is not its "
                "payrun's: nothing was applied",
                hint=_AGAIN,
            )
        payments = tuple(payment_of(item) for item in record["payments"])
        reviewed = tuple(item["agreementId"] for item in record["payments"])
        units.append(
            Unit(record["id"], record["part"], record["description"], payments, reviewed, period)
        )
    decisions, wallet = decide_units(
        units,
        live.paylists,
        live.workers,
        live.wallet,
        closing=closed_agreements(changes),
        max_payout=saved.max_payout,
    )
    if all("variance" in record for record in saved.payruns):  # what the reviewer saw
        kept = {record["address"]: variance_from(record["variance"]) for record in saved.payruns}
        decisions = with_saved_variance(decisions, kept)
    else:  # a plan saved before it kept them: read again, as `diff` shows it
        decisions = with_variance(decisions, live.paylists)
    return tuple(_at_merge(decision) for decision in decisions), wallet


def _at_merge(decision: PayrunDecision) -> PayrunDecision:
    """A paylist with the key now, same content: paid since the review, skipped and shown as
    paid. Other content under the key: the reviewed payrun cannot be paid, refused."""
    if decision.state != CONFLICT:
        return decision
    reason = (
        f"since the plan was made, paylist {decision.paylist_id} was created with this "
        "payrun's key and other content: nothing of the reviewed payrun is paid"
    )
    return replace(decision, state=REFUSED, reasons=(reason,))


def _check_age(saved: SavedPlan, now: datetime, max_age: timedelta) -> None:
    made = saved.created_at
    if made - now > CLOCK_SKEW:
        raise UntrustedPlan(
            f"{saved.name} says it was made at {made.isoformat()}, which is in the future: "
            "nothing was applied",
            hint="check this machine's clock, and run `reconciler plan --out` again",
        )
    if now - made > max_age:
        raise StalePlan(
            f"the saved plan was made at {made.isoformat()}, more than {max_age} ago",
            hint=f"{_AGAIN} (or allow an older plan with --plan-ttl)",
        )


class _Rebuilder:
    """Turns each signed record back into a change, against the live account."""

    def __init__(
        self,
        index: LiveIndex,
        owns: Callable[[str | None], bool],
        value_key: bytes,
        environ: Mapping[str, str],
        name: str,
    ) -> None:
        self.index, self.owns, self.value_key, self.environ = index, owns, value_key, environ
        self.name = name
        self.seen: set[str] = set()

    def __call__(self, record: dict[str, Any]) -> Change:
        change = self._change(record)
        if change.address != record["address"] or change.address in self.seen:
            raise UntrustedPlan(
                f"{self.name}: the change recorded at {record['address']!r:.80} does not match "
                "what it does, or is there twice: nothing was applied",
                hint=_AGAIN,
            )
        self.seen.add(change.address)
        return change

    def _change(self, record: dict[str, Any]) -> Change:
        action = record["action"]
        if action == "invite":
            worker = DesiredWorker.from_fields(record["worker"])
            self._check_owned(worker.external_id)
            return Invite(worker)
        if action == "inactivate":
            external_id = record["externalId"]
            return Inactivate(external_id, self._open_agreement(record, external_id))
        if action == "replace":
            worker = DesiredWorker.from_fields(record["worker"])
            return Replace(self._open_agreement(record, worker.external_id), worker, ())
        webhook = self._webhook(record["webhook"])
        change = diff_webhook(webhook, self.index.webhook)
        if change is None:  # someone made the change already: the fingerprint check says so
            assert self.index.webhook is not None  # diff_webhook creates when there is none
            return WebhookUpdate(self.index.webhook, webhook, ())
        return change

    def _check_owned(self, external_id: str) -> None:
        if not self.owns(external_id):
            raise UntrustedPlan(
                f"{self.name} acts on {external_id!r:.80}, which its own scope does not own: "
                "nothing was applied",
                hint=_AGAIN,
            )

    def _open_agreement(self, record: dict[str, Any], external_id: str) -> Worker:
        """The live agreement the record names, if it is the open, owned one of `external_id`."""
        self._check_owned(external_id)
        agreement_id = record["agreementId"]
        agreement = self.index.by_agreement.get(agreement_id)
        if agreement is not None and agreement.external_id != external_id:
            raise UntrustedPlan(
                f"{self.name}: agreement {agreement_id} belongs to "
                f"{agreement.external_id or 'a worker without an externalId'!r:.80}, not to "
                f"{external_id!r:.80}: nothing was applied",
                hint=_AGAIN,
            )
        if agreement is None or not agreement.status.is_open:
            raise StalePlan(
                "the live account changed since the plan was made: "
                f"{record['address']} (agreement {agreement_id} is no longer open)",
                hint=_AGAIN,
            )
        return agreement

    def _webhook(self, record: dict[str, Any]) -> DesiredWebhook:
        url = self._value(record["url"], "webhook url")
        return DesiredWebhook(
            url=webhook_url(url) if isinstance(url, Secret) else url,
            enabled=record["enabled"],
            event_types=frozenset(record["event_types"]),
            headers=tuple(
                WebhookHeader(item["name"], self._secret(item, f'webhook header "{item["name"]}"'))
                for item in record["headers"]
            ),
        )

    def _secret(self, item: dict[str, str], what: str) -> Secret:
        value = self._value(item, what)
        return value if isinstance(value, Secret) else Secret(value)

    def _value(self, item: dict[str, str], what: str) -> str | Secret:
        """A recorded value: literal as it is, or its template filled and checked by HMAC."""
        if "value" in item:
            return item["value"]
        template = item["template"]
        try:
            value = Secret(interpolate(template, self.environ), template=template)
        except InterpolationError as error:
            raise StalePlan(
                f"{what}: {error}",
                hint="apply a saved plan in the environment it was made for",
            ) from None
        if not hmac.compare_digest(value.hmac(self.value_key), item["hmac"]):
            raise StalePlan(
                f"{what}: {template} no longer has the value the plan was made with",
                hint="nothing was applied; set it as it was, or run `reconciler plan --out` again",
            )
        return value


def _reported(record: dict[str, Any]) -> Reported:
    """What the saved plan reported: its counts, the drifted workers and the money it kept."""
    drift = tuple(
        DriftEntry(
            entry["address"],
            entry["agreementId"],
            tuple(FieldChange(f["name"], f["before"], f["after"]) for f in entry["fields"]),
        )
        for entry in record.get("drift", ())
    )
    money = money_of(record.get("money"))
    closed = tuple(closed_of(entry) for entry in record.get("closed", ()))
    made = tuple(record.get("made_in_service", ()))
    return Reported(
        record["drifted"], record["unmanaged"], record["conflicts"], drift, money, closed, made
    )
