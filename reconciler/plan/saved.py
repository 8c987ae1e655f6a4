"""Saved plans (`plan --out`): what to change, signed, and how to tell later whether it holds.

A saved plan records the account it was made for (`reconciler.plan.account`), what it was
reviewed as (the files it was made from and, in CI, the pull request and commit:
`reconciler.plan.review`), its changes, a fingerprint of each live resource they touch, the
scope and policy it was planned under, when it was made and by which version, and what it
reported besides (drift, unmanaged workers, conflicts, and the money of the window: kept
for the pull-request comment).
It never holds a secret in clear, nor an unkeyed hash of one: a value from `${VAR}` is stored
as the template and an HMAC keyed with the plan key (`reconciler.plan.signing`). The whole
document is signed with the same key, so an edited plan is refused before anything is sent;
its shape is checked exactly (no extra or missing keys, no `true` where a number belongs).

`apply` tells a saved plan from a desired-state file by its content (`"format"`), and
`SavedPlan.resume` (`reconciler.plan.resume`) checks it against a fresh read of the account.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from reconciler.desired.model import DesiredWebhook, PayrunPayment
from reconciler.errors import ReconcilerError, Refused
from reconciler.money import two_places
from reconciler.plan.account import Account
from reconciler.plan.changes import Change, Inactivate, Invite, Replace, WebhookCreate
from reconciler.plan.fingerprint import LABEL as FINGERPRINT_LABEL
from reconciler.plan.fingerprint import LiveIndex, fingerprint
from reconciler.plan.model import ClosedEntry, DriftEntry, LiveState, Plan
from reconciler.plan.money import Figure, MoneyReport, PaymentAlert, Untraced
from reconciler.plan.payruns import PayrunDecision
from reconciler.plan.review import Review
from reconciler.plan.saved_schema import document_problem
from reconciler.plan.signing import PlanKey, sign, verify
from reconciler.plan.variance import variance_record
from reconciler.regular import NotRegular, TooLarge, open_regular, read_regular
from reconciler.secrets import MASK, Secret

FORMAT = "reconciler-plan"
#: 4: the review (files, pull request, commit), and a client id always named.
#: 5: each payment names the agreement (payee) it was reviewed paying.
FORMAT_VERSION = 5
DEFAULT_MAX_AGE = timedelta(hours=1)
#: A plan made this far in the future is refused: clocks differ a little, never by more.
CLOCK_SKEW = timedelta(minutes=5)
#: Larger than any plan of 100,000 workers; a bigger file is not read into memory.
_MAX_BYTES = 256 * 1024 * 1024
#: How every saved plan begins (its first key is the format), whatever follows.
_SAVED_PLAN_HEAD = re.compile(rb'\s*\{\s*"format"\s*:\s*"reconciler-plan"')

VALUE_LABEL = b"reconciler saved-plan header-value v1"


class InvalidSavedPlan(ReconcilerError):
    """The file looks like a saved plan but cannot be read as one."""


class StalePlan(Refused):
    """The account or the environment changed since the plan was made: nothing was applied."""


# --- writing ------------------------------------------------------------------------------


def saved_plan_document(
    plan: Plan,
    live: LiveState,
    *,
    key: PlanKey,
    account: Account,
    review: Review,
    created_at: datetime,
    tool_version: str,
    sources: Iterable[str] = (),
    scope_prefix: str | None = None,
    max_payout: Decimal | None = None,
) -> dict[str, Any]:
    """The signed JSON document `plan --out` writes."""
    fingerprint_key = key.derive(FINGERPRINT_LABEL)
    value_key = key.derive(VALUE_LABEL)
    index = LiveIndex(live)
    summary = plan.summary
    document: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool_version": tool_version,
        "created_at": created_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "sources": list(sources),
        "key": {"setting": key.setting, "check": key.check},
        "account": account.as_record(),
        "review": review.as_record(),
        "scope": {"externalIdPrefix": scope_prefix},
        "safety": {
            "owned_open_agreements": plan.safety.owned_open,
            "max_inactivations": {
                "value": str(plan.safety.limit.value),
                "is_share": plan.safety.limit.is_share,
            },
        },
        "reported": {
            "drifted": summary.drifted,
            "unmanaged": summary.unmanaged,
            "conflicts": summary.conflicts,
            "drift": [drift_record(entry) for entry in plan.drift_entries],
            "money": money_record(plan.money),
            "closed": [closed_record(entry) for entry in plan.closed_entries],
            "made_in_service": list(plan.made_entries),
            # Risk first, as the plan said them: made in the service, the files' history
            # unknown (a shallow clone), ignore rules matching nothing, ...
            "ignore_risks": list(plan.ignore_risks),
            "warnings": list(plan.warnings),
        },
        "changes": [
            {
                **_change_record(change, value_key),
                "fingerprint": fingerprint(change, index, fingerprint_key),
            }
            for change in plan.changes
        ],
        "payruns": [payrun_record(decision) for decision in plan.to_pay],
        "max_payout": None if max_payout is None else two_places(max_payout),
    }
    if plan.approvals is not None:  # optional: plans saved before dual control have none
        document["approvals"] = plan.approvals.as_dict()
    document["mac"] = sign(document, key)
    return document


def closed_record(entry: ClosedEntry) -> dict[str, Any]:
    """A worker closed in the service as the saved plan keeps it: why, and for the resumed
    plan's JSON its externalId, `rehire:` and closed agreements (`closed_of` reads it back)."""
    record: dict[str, Any] = {"address": entry.address, "reason": entry.reason}
    if entry.agreements is not None:
        record |= {
            "externalId": entry.external_id,
            "rehire": entry.rehire,
            "agreements": list(entry.agreements),
        }
    return record


def closed_of(record: Mapping[str, Any]) -> ClosedEntry:
    """`closed_record` read back (a plan saved before it kept more: its address and why)."""
    agreements = record.get("agreements")
    return ClosedEntry(
        record["address"],
        record["reason"],
        record.get("externalId"),
        record.get("rehire"),
        None if agreements is None else tuple(agreements),
    )


def drift_record(entry: DriftEntry) -> dict[str, Any]:
    """A drifted worker as the saved plan keeps it for its comment (no secret: worker fields)."""
    return {
        "address": entry.address,
        "agreementId": entry.agreement_id,
        "fields": [
            {"name": f.name, "before": _shown(f.before), "after": _shown(f.after)}
            for f in entry.fields
        ],
    }


def _shown(value: Any) -> str | None:
    if value is None:
        return None
    return MASK if isinstance(value, Secret) else str(value)


def money_record(report: MoneyReport | None) -> dict[str, Any] | None:
    """The money of the window as the plan reported it, for its comment (None: not read)."""
    if report is None:
        return None

    def figure(value: Figure | None) -> dict[str, Any] | None:
        return None if value is None else {"count": value.count, "total": two_places(value.total)}

    def alert(item: PaymentAlert) -> dict[str, Any]:
        return {
            "payment_id": item.payment_id,
            "paylist_id": item.paylist_id,
            "email": item.email,
            "amount": two_places(item.amount),
            "status": item.status,
            "cause": item.cause,
            "created_at": _moment(item.created_at),
            "action": item.action,
        }

    return {
        "since": _moment(report.since),
        "relative": report.relative,
        "paid": figure(report.paid),
        "untraced": [
            {
                "paylist_id": item.paylist_id,
                "created_at": _moment(item.created_at),
                "description": item.description,
                "payments": item.payments,
                "total": two_places(item.total),
            }
            for item in report.untraced
        ],
        "failed": [alert(item) for item in report.failed],
        "stuck": [alert(item) for item in report.stuck],
        "pending": figure(report.pending),
        "top_ups": figure(report.top_ups),
        "balance": None if report.balance is None else two_places(report.balance),
    }


def money_of(record: dict[str, Any] | None) -> MoneyReport | None:
    """`money_record` read back (a plan saved before it kept none: None)."""
    if record is None:
        return None

    def figure(value: dict[str, Any]) -> Figure:
        return Figure(value["count"], Decimal(value["total"]))

    def alert(item: dict[str, Any]) -> PaymentAlert:
        return PaymentAlert(
            item["payment_id"],
            item["paylist_id"],
            item["email"],
            Decimal(item["amount"]),
            item["status"],
            item["cause"],
            _when(item["created_at"]),
            item["action"],
        )

    since = _when(record["since"])
    assert since is not None, "the schema requires it"
    return MoneyReport(
        since=since,
        relative=record["relative"],
        paid=figure(record["paid"]),
        untraced=tuple(
            Untraced(
                u["paylist_id"],
                _when(u["created_at"]),
                u["description"],
                u["payments"],
                Decimal(u["total"]),
            )
            for u in record["untraced"]
        ),
        failed=tuple(alert(item) for item in record["failed"]),
        stuck=tuple(alert(item) for item in record["stuck"]),
        pending=figure(record["pending"]),
        top_ups=None if record["top_ups"] is None else figure(record["top_ups"]),
        balance=None if record["balance"] is None else Decimal(record["balance"]),
    )


def _moment(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _when(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def payrun_record(decision: PayrunDecision) -> dict[str, Any]:
    """A paylist to pay, as the saved plan carries it (and plan-compare compares it); a
    period payrun's with its period, which its key derives from."""
    record: dict[str, Any] = {
        "address": decision.address,
        "action": "pay",
        "id": decision.payrun_id,
        "part": decision.part,
        "idempotence_key": decision.key,
        "description": decision.description,
        "payments": [
            payment_record(p, agreement)
            for p, agreement in zip(decision.payments, decision.agreements, strict=True)
        ],
    }
    if decision.period is not None:
        record["period"] = decision.period
    # What changed since the payrun paid before, as reviewed (null: none was paid): kept, so
    # the plan's apply and comment show it, not one read again later.
    record["variance"] = variance_record(decision.variance)
    return record


def payment_record(payment: PayrunPayment, agreement: int | None) -> dict[str, Any]:
    """A payment to pay as the saved plan carries it: its payee's email and the agreement
    reviewed, and the externalId it was written with (`worker`, where one was), so the apply of
    the saved plan names the payee in its ledger as a fresh plan's does."""
    record: dict[str, Any] = {
        "email": payment.email,
        "agreementId": agreement,
        "amount": two_places(payment.amount),
        "description": payment.description,
    }
    if payment.worker is not None:
        record["worker"] = payment.worker
    return record


def payment_of(record: Mapping[str, Any]) -> PayrunPayment:
    """`payment_record` read back (a plan saved before it kept `worker`: by email alone)."""
    return PayrunPayment(
        record["email"], Decimal(record["amount"]), record["description"], record.get("worker")
    )


def write_saved_plan(path: Path, document: Mapping[str, Any]) -> None:
    """Write the document atomically, readable by its owner only.

    Only a saved plan is ever replaced: `plan desired.yaml --out desired.yaml` (or any file the
    user wrote) is refused, and the file is left as it was.
    """
    path = Path(path)
    if (path.exists() or path.is_symlink()) and not is_saved_plan(path):
        raise ReconcilerError(
            f"{path} exists and is not a saved plan: refusing to replace it",
            hint="give --out a new file name (such as plan.json), or the path of an earlier "
            "saved plan",
        )
    try:
        write_private_json(path, document, prefix=".plan-")
    except OSError as error:
        raise ReconcilerError(f"cannot write the saved plan {path}: {error.strerror}") from None


def write_private_json(path: Path, document: Mapping[str, Any], *, prefix: str) -> None:
    """`document` as indented JSON at `path`, readable by its owner only, written beside it and
    moved into place (never half-written); on an OSError nothing of it is left behind."""
    handle, temporary = tempfile.mkstemp(prefix=prefix, dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def _change_record(change: Change, value_key: bytes) -> dict[str, Any]:
    record: dict[str, Any] = {"address": change.address}
    if isinstance(change, Invite):
        record.update(action="invite", worker=change.worker.as_fields())
    elif isinstance(change, Inactivate):
        record.update(
            action="inactivate",
            externalId=change.external_id,
            agreementId=change.agreement.agreement_id,
        )
    elif isinstance(change, Replace):
        record.update(
            action="replace",
            agreementId=change.agreement.agreement_id,
            worker=change.worker.as_fields(),
        )
    else:
        action = "webhook_create" if isinstance(change, WebhookCreate) else "webhook_update"
        record.update(action=action, webhook=_webhook_record(change.webhook, value_key))
    return record


def secret_record(value: Secret, value_key: bytes) -> dict[str, str]:
    """A value from `${VAR}` as its template and keyed hash; a literal one as it is (in git)."""
    if value.template is not None:
        return {"template": value.template, "hmac": value.hmac(value_key)}
    return {"value": value.reveal()}


def _webhook_record(webhook: DesiredWebhook, value_key: bytes) -> dict[str, Any]:
    url = webhook.url
    return {
        "url": secret_record(url, value_key) if isinstance(url, Secret) else {"value": url},
        "enabled": webhook.enabled,
        "event_types": sorted(webhook.event_types),
        "headers": [
            {"name": header.name, **secret_record(header.value, value_key)}
            for header in webhook.headers
        ],
    }


# --- reading ------------------------------------------------------------------------------


def is_saved_plan(path: Path) -> bool:
    """Whether `path` holds a saved plan: by content (a JSON object whose format says so).

    A file that opens as a saved plan does (`{"format": "reconciler-plan"` first, as `plan
    --out` writes it) is one even when it cannot be read further (cut short in an upload, not
    UTF-8, too large): `load_saved_plan` then says what is wrong, instead of reading it as a
    desired-state file (JSON is YAML) and reporting YAML problems or asking to confirm.
    """
    path = Path(path)
    try:
        if not path.is_file():
            return False
        with open_regular(path) as stream:  # swapped for a FIFO since: not read forever
            head = _utf8_head(stream.read(256))
            if not head.lstrip().startswith(b"{"):
                return False  # a desired-state file is YAML; no need to read it all
            if _SAVED_PLAN_HEAD.match(head):
                return True
            if path.stat().st_size > _MAX_BYTES:
                return False
            stream.seek(0)
            document = json.load(stream)
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT


#: Byte order marks, and the encoding each begins: a saved plan re-encoded by an editor (UTF-16,
#: UTF-32, UTF-8 with a BOM) still opens as one, so it is named as changed, not read as YAML.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _utf8_head(head: bytes) -> bytes:
    """The first bytes of a file as UTF-8: without a byte order mark, decoded from the
    encoding the mark names (a character cut at the end is dropped)."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return head[len(bom) :].decode(encoding, "ignore").encode()
    return head


@dataclass(frozen=True, slots=True)
class SavedPlan:
    """A saved plan as read back and checked: its records, to resume against a fresh read."""

    name: str
    document: dict[str, Any]
    created_at: datetime
    tool_version: str
    records: tuple[dict[str, Any], ...]
    scope_prefix: str | None
    owned_open: int
    limit_value: Decimal
    limit_is_share: bool
    reported: dict[str, Any]
    sources: tuple[str, ...] = ()
    payruns: tuple[dict[str, Any], ...] = ()
    max_payout: Decimal | None = None
    account: Account | None = None  # always set when read from a file
    review: Review | None = None  # always set when read from a file
    #: The approvals the plan judged (`Approvals.as_dict`); None: saved before dual control.
    approvals: dict[str, Any] | None = None

    def verify(self, key: PlanKey) -> None:
        """Refuse the plan unless this key signed exactly this document."""
        verify(self.document, key, name=self.name)


def load_saved_plan(path: Path, key: PlanKey | None = None) -> SavedPlan:
    """Read a saved plan, checking its shape exactly (and its signature, given the key)."""
    path = Path(path)
    name = str(path)
    try:
        document = json.loads(
            read_regular(path, _MAX_BYTES).decode("utf-8"),
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constant,
            parse_float=_no_float,
        )
    except TooLarge:
        raise InvalidSavedPlan(f"{name}: too large for a saved plan") from None
    except NotRegular as error:  # a FIFO would be read forever: refused at once, unread
        raise InvalidSavedPlan(
            f"{name}: {error.strerror}, so no saved plan: nothing was read",
            hint="give the path of the file `reconciler plan --out` wrote",
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        reason = getattr(error, "strerror", None) or str(error)[:200]
        raise InvalidSavedPlan(
            f"{name}: not a readable saved plan ({reason}): it was changed after it was made, "
            "or damaged",
            hint="never edit a saved plan; run `reconciler plan --out` again",
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidSavedPlan(f'{name}: not a saved plan (no "format": "{FORMAT}")')
    if document.get("format_version") != FORMAT_VERSION:
        raise InvalidSavedPlan(
            f"{name}: saved plan format_version {document.get('format_version')!r:.20} is not "
            f"supported (this version reads {FORMAT_VERSION})",
            hint="make the plan again with this version: `reconciler plan --out`",
        )
    problem = document_problem(document)
    if problem is not None:
        raise InvalidSavedPlan(f"{name}: the saved plan is damaged ({problem})")
    saved = _from_document(name, document)
    if key is not None:
        saved.verify(key)
    return saved


def _from_document(name: str, document: dict[str, Any]) -> SavedPlan:
    text = document["created_at"]
    try:
        created_at = datetime.fromisoformat(text.replace("Z", "+00:00"))
        limit = Decimal(document["safety"]["max_inactivations"]["value"])
    except (ValueError, InvalidOperation):
        raise InvalidSavedPlan(f"{name}: the saved plan is damaged (a bad value)") from None
    if created_at.tzinfo is None or created_at.utcoffset() is None:
        raise InvalidSavedPlan(
            f"{name}: the saved plan's created_at {text!r:.40} has no UTC offset",
            hint="never edit a saved plan; run `reconciler plan --out` again",
        )
    if not limit.is_finite() or limit < 0:
        raise InvalidSavedPlan(f"{name}: the saved plan is damaged (its maxInactivations)")
    return SavedPlan(
        name=name,
        document=document,
        created_at=created_at,
        tool_version=document["tool_version"],
        records=tuple(document["changes"]),
        scope_prefix=document["scope"]["externalIdPrefix"],
        owned_open=document["safety"]["owned_open_agreements"],
        limit_value=limit,
        limit_is_share=document["safety"]["max_inactivations"]["is_share"],
        reported=dict(document["reported"]),
        sources=tuple(document["sources"]),
        payruns=tuple(document["payruns"]),
        max_payout=None if document["max_payout"] is None else Decimal(document["max_payout"]),
        account=Account.from_record(document["account"]),
        review=Review.from_record(document["review"]),
        approvals=document.get("approvals"),
    )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r:.40} is given twice")
        result[key] = value
    return result


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def _no_float(text: str) -> Any:
    raise ValueError(f"{text:.40} is a fraction, and a saved plan holds none")
