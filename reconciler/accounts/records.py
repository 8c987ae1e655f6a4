"""The evidence of dual control: one signed record per paylist an apply sent, that outlives the
run's artifacts and logs (issue 46, "The evidence").

`apply --records-out DIR` writes `DIR/<account>/<paylist key>.json` for each paylist it sent
(paid, or failed after it was sent): the account, the payrun and its period, the pull request,
its head, the merge commit (the checkout's `HEAD`), its author, who merged it, each approval
that counted (login, id, commit, time, request), the rule, the run, when, and every payment
(payee, agreement, email, amount, description, paylist id, payment id, status). It is signed
with the plan key (HMAC over the canonical JSON, `reconciler.plan.signing.sign_record`) and
names the key's check as its key id, so a rotated key does not orphan it: a reader holding the
old key still verifies it. `DIR/approvals.json` holds the verdicts of each account applied
(the outcome note's: `read_approvals`). The CI flow keeps the record files (`record_files`)
on the branch `reconciler/records` (`RECORDS_BRANCH`), as `records/<account>/<key>.json`,
where an auditor reads them a year later: `reconciler report --records REF_OR_DIR` reads them
back, trusting only those that verify. Job logs and artifacts expire.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reconciler.accounts.saved_view import read_document
from reconciler.apply import Ledger
from reconciler.apply.ledger import PAY, Entry
from reconciler.errors import ReconcilerError
from reconciler.git import GitFailed, run_git
from reconciler.identity import payment_key
from reconciler.money import two_places
from reconciler.plan import Plan
from reconciler.plan.approvals import Approvals, RequestFacts
from reconciler.plan.payruns import TO_PAY, PayrunDecision
from reconciler.plan.register import MergeRecord, Register
from reconciler.plan.signing import PlanKey, canonical, record_problem, sign_record

FORMAT = "reconciler-record"
APPROVALS_FILE = "approvals.json"
#: The branch the CI flow keeps the records on, and the folder they are in there.
RECORDS_BRANCH = "reconciler/records"
RECORDS_FOLDER = "records"
_SHARED = threading.Lock()  # accounts applied side by side write approvals.json in turn


@dataclass(frozen=True, slots=True)
class Written:
    """Where an apply's records went (relative to `--records-out`), for its caller."""

    records: tuple[str, ...]


def merge_commit(files: Path | None) -> str | None:
    """The commit the checkout is at (`git rev-parse HEAD` where the files are): the merge."""
    if files is None:
        return None
    folder = files.resolve() if files.is_dir() else files.resolve().parent
    try:
        return run_git(folder, "rev-parse", "HEAD").strip() or None
    except GitFailed:
        return None


def write_records(
    folder: Path,
    account: str,
    plan: Plan,
    ledger: Ledger,
    *,
    key: PlanKey,
    run_url: str | None,
    files: Path | None,
) -> Written:
    """Write the record of each paylist `ledger` says was sent, and the verdicts, under
    `folder`; a record that cannot be written is an error naming it (the money was sent)."""
    applied_at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    merge = merge_commit(files)
    written = []
    entries = ledger.entries
    for decision in plan.payruns:
        if decision.state != TO_PAY:
            continue
        rows = _rows_of(decision, entries)
        if not any(row.paylist_id is not None for row in rows):
            continue  # nothing of it was sent: nothing to prove
        document = record_of(account, decision, rows, plan.approvals, run_url, merge, applied_at)
        document["key"] = {"setting": key.setting, "check": key.check}
        document["mac"] = sign_record(document, key)
        name = f"{account}/{decision.key}.json"
        _write(folder / name, document)
        written.append(name)
    _write_verdicts(folder, account, plan)
    return Written(tuple(written))


def record_of(
    account: str,
    decision: PayrunDecision,
    rows: Sequence[Entry],
    approvals: Approvals | None,
    run_url: str | None,
    merge: str | None,
    applied_at: str,
) -> dict[str, Any]:
    """One paylist's record, unsigned."""
    verdict = approvals.verdict(decision.payrun_id) if approvals is not None else None
    facts = approvals.facts if approvals is not None else ()
    counted = verdict.approvals if verdict is not None else ()
    primary = _primary(facts, counted[0].request if counted else None)
    agreements = {
        payment_key(p.email, p.amount, p.description): agreement
        for p, agreement in zip(decision.payments, decision.agreements, strict=False)
    }
    return {
        "format": FORMAT,
        "format_version": 1,
        "account": account,
        "payrun": decision.payrun_id,
        "part": decision.part,
        "period": decision.period,
        "paylist_key": decision.key,
        "description": decision.description,
        "pull_request": primary.number if primary is not None else None,
        "requests": [request.number for request in facts],
        "head": primary.head if primary is not None else None,
        "merge_commit": merge,
        "author": primary.author.login if primary is not None else None,
        "merged_by": (
            primary.merged_by.login if primary is not None and primary.merged_by else None
        ),
        "approvals": [approval.as_dict() for approval in counted],
        "rule": verdict.rule.as_dict() if verdict is not None and verdict.rule else None,
        "policy": approvals.policy.as_list() if approvals and approvals.policy else None,
        "run_url": run_url,
        "applied_at": applied_at,
        "payments": [_payment(row, agreements) for row in rows],
    }


def _primary(facts: Sequence[RequestFacts], number: int | None) -> RequestFacts | None:
    """The request the record names first: the one an approval that counted was given on,
    else the last of the range (the merge)."""
    for request in facts:
        if request.number == number:
            return request
    return facts[-1] if facts else None


def _rows_of(decision: PayrunDecision, entries: Sequence[Entry]) -> list[Entry]:
    """The ledger rows of one paylist: its payments (`address.payments[N]`), or its row."""
    prefix = f"{decision.address}.payments["
    return [
        entry
        for entry in entries
        if entry.action == PAY
        and (entry.address.startswith(prefix) or entry.address == decision.address)
    ]


def _payment(row: Entry, agreements: dict[Any, int | None]) -> dict[str, Any]:
    agreement = None
    if row.email is not None and row.amount is not None and row.description is not None:
        agreement = agreements.get(payment_key(row.email, row.amount, row.description))
    return {
        "payee": row.payee,
        "agreement_id": agreement,
        "email": row.email,
        "amount": None if row.amount is None else two_places(row.amount),
        "description": row.description,
        "paylist_id": row.paylist_id,
        "payment_id": row.payment_id,
        "status": row.status or str(row.outcome),
        "outcome": str(row.outcome),
        "detail": row.detail,
    }


def _write(path: Path, document: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    except OSError as error:
        raise ReconcilerError(
            f"the evidence record {path} could not be written ({error.strerror}): the money "
            "was sent; keep this run's log"
        ) from None


def _write_verdicts(folder: Path, account: str, plan: Plan) -> None:
    """`approvals.json`: the account's verdicts and the payruns that wait."""
    view = plan.approvals
    mine = {
        **(view.as_dict() if view is not None else {"policy": None, "verdicts": []}),
        "waiting": sorted({d.payrun_id for d in plan.payruns if d.state == "waiting"}),
    }
    write_verdicts(folder, account, mine)


def write_verdicts(folder: Path, account: str, view: dict[str, Any]) -> None:
    """Merge one account's verdicts into `folder/approvals.json`: `verdicts`, every account's
    (each naming its `account`: the outcome note reads them), and `accounts`, each one's view.
    A change of the policy waiting for its approvals is a verdict of `policy.approvals`."""
    path = folder / APPROVALS_FILE
    with _SHARED:
        known: dict[str, Any] = {"format": "reconciler-approvals", "accounts": {}}
        if path.is_file():
            with contextlib.suppress(OSError, ValueError):  # unreadable: written afresh
                known = json.loads(path.read_text("utf-8"))
        accounts = known.setdefault("accounts", {})
        accounts[account] = view
        known["verdicts"] = [
            {**verdict, "account": name}
            for name, one in accounts.items()
            for verdict in one.get("verdicts", ())
        ]
        _write(path, known)


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Read:
    """One record as read back: its name, its document, and why it is not trusted (None:
    its signature verifies with this key)."""

    name: str
    document: dict[str, Any]
    problem: str | None


@dataclass(frozen=True, slots=True)
class VerdictsTold:
    """What the verdicts say: each payrun paid with its approvers, each payrun waiting with
    what it needs and has, and the policy change waiting (if any)."""

    approved: tuple[str, ...] = ()  # 'paylist["2027-01"] approved by alice, bob'
    waiting: tuple[str, ...] = ()  # 'paylist["2027-01"] needs 2 of alice, bob, dave: 1 (...)'
    policy: str | None = None  # 'needs 2 of alice, bob: has 1'
    #: Why each approval of a payrun waiting did not count ('carol (#31): the author's ...').
    not_counted: tuple[str, ...] = ()

    def parts(self) -> list[str]:
        """'waiting for approvals: ...', 'approved: ...': what the outcome says first (a forge
        may cut it: GitHub keeps 140 characters of a status), what waits before who approved."""
        parts = []
        if self.waiting:
            parts.append(f"waiting for approvals: {'; '.join(self.waiting)}")
        if self.approved:
            parts.append(f"approved: {', '.join(self.approved)}")
        return parts

    def why(self) -> list[str]:
        """'not counted: ...', what the outcome says last (the longest, and the least read)."""
        return [f"not counted: {'; '.join(self.not_counted)}"] if self.not_counted else []


def read_approvals(folder: Path) -> VerdictsTold:
    """The verdicts `apply` wrote in `folder` (none written: nothing to say)."""
    path = folder / APPROVALS_FILE
    if not path.exists():
        return VerdictsTold()
    document = read_document(path)
    found = _verdicts(document)
    if found is None:
        raise ReconcilerError(f"{path}: not the verdicts of an apply's approvals")
    approved, waiting, policy, why = [], [], None, []
    for verdict in found:
        payrun = str(verdict.get("payrun") or "")
        needs_has = str(verdict.get("needs_has") or verdict.get("missing") or "")
        if payrun.startswith("policy"):  # the change of the policy itself (`policy.approvals`)
            policy = needs_has if verdict.get("missing") else None
            continue
        missing = verdict.get("missing")
        if missing:
            unread = "" if str(missing).startswith("needs") else f" ({missing})"
            waiting.append(f'paylist["{payrun}"] {needs_has}{unread}')
            why += [str(line) for line in verdict.get("not_counted") or [] if line not in why]
            continue
        logins = [str(a.get("login")) for a in verdict.get("approvals") or []
                  if isinstance(a, Mapping)]  # fmt: skip
        if logins:
            approved.append(f'paylist["{payrun}"] by {", ".join(logins)}')
    return VerdictsTold(tuple(approved), tuple(waiting), policy, tuple(why))


def _verdicts(document: Any) -> list[Mapping[str, Any]] | None:
    """The verdicts, a list of `Verdict.as_dict()` (alone, under `verdicts`, or by payrun)."""
    if isinstance(document, Mapping):
        listed = document.get("verdicts")
        if listed is None and all(isinstance(v, Mapping) for v in document.values()):
            listed = list(document.values())
        document = listed
    if not isinstance(document, list) or not all(isinstance(v, Mapping) for v in document):
        return None
    return document


def record_files(folder: Path) -> dict[str, str]:
    """The records `apply` wrote in `folder`, by their path on the records branch."""
    files = {}
    for path in sorted(folder.glob("*/*.json")):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ReconcilerError(f"{path}: cannot be read: {error}") from None
        files[f"{RECORDS_FOLDER}/{path.parent.name}/{path.name}"] = text
    return files


def read_records(source: str, key: PlanKey, cwd: Path | None = None) -> list[Read]:
    """Every record in `source`: a folder of them, or a git ref (`origin/reconciler/records`)
    whose `records/` tree holds them, read with `git show`; each verified with `key`."""
    folder = Path(source)
    if folder.is_dir():
        found = list(_from_folder(folder))
    else:
        found = list(_from_ref(source, cwd or Path.cwd()))
    return [_verified(name, text, key) for name, text in found]


def _from_folder(folder: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(folder.rglob("*.json")):
        if path.name != APPROVALS_FILE and path.is_file():
            yield str(path.relative_to(folder)), path.read_text("utf-8", errors="replace")


def _from_ref(ref: str, cwd: Path) -> Iterator[tuple[str, str]]:
    try:
        listed = run_git(cwd, "ls-tree", "-r", "-z", "--name-only", ref, "--", RECORDS_FOLDER)
    except GitFailed as failed:
        raise ReconcilerError(
            f"{ref} is neither a folder of records nor a git ref here ({failed.reason})",
            hint=f"fetch the records branch first: git fetch origin {RECORDS_BRANCH}",
        ) from None
    for name in sorted(n for n in listed.split("\0") if n.endswith(".json")):
        if name.rsplit("/", 1)[-1] == APPROVALS_FILE:
            continue
        try:
            yield name, run_git(cwd, "show", f"{ref}:{name}")
        except GitFailed as failed:
            yield name, f"(unreadable: {failed.reason})"


def _verified(name: str, text: str, key: PlanKey) -> Read:
    try:
        document = json.loads(text)
    except ValueError:
        return Read(name, {}, "it is not JSON")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return Read(name, {}, "it is not an evidence record")
    try:
        canonical(document)
    except (TypeError, ValueError):
        return Read(name, {}, "it holds values no record holds")
    return Read(name, document, record_problem(document, key))


def merges_of(source: str, environ: Mapping[str, str]) -> tuple[dict[int, MergeRecord], list[str]]:
    """The merge record of each paylist the trusted records of `source` name (by paylist id),
    and a line for each record that is not trusted, naming it and why."""
    from reconciler.session.plankey import offline_plan_key

    key = offline_plan_key(environ)
    merges: dict[int, MergeRecord] = {}
    said = []
    for read in read_records(source, key):
        if read.problem is not None:
            said.append(f"record {read.name}: not trusted: {read.problem}")
            continue
        document = read.document
        number = document.get("pull_request")
        merge = MergeRecord(
            commit=str(document.get("merge_commit") or document.get("head") or ""),
            pull_request=None if number is None else f"#{number}",
            author=document.get("author"),
            approvers=tuple(str(a.get("login")) for a in document.get("approvals", ())),
        )
        for payment in document.get("payments", ()):
            if isinstance(payment.get("paylist_id"), int):
                merges[payment["paylist_id"]] = merge
    return merges, said


def without_record(register: Register) -> list[str]:
    """A line for each paylist the files' payruns made that no trusted record names."""
    if not register.files:
        return []
    missing = {
        (row.paylist_id, row.payrun_id)
        for month in register.months
        for row in month.paylists
        if row.payrun_id is not None and row.merge is None
    }
    return [
        f'paylist {paylist_id} (payrun["{payrun}"]) has no record'
        for paylist_id, payrun in sorted(missing)
    ]
