"""Payruns in the desired state: paylists kept in git, checked before any request.

Every check needs only the files: unique ids; each payment names exactly one of `worker` (an
externalId of the files, paid at that worker's email) and `email`; an amount above 0 with at most
two places and at most 1,000,000,000,000.00, written as a plain decimal; descriptions free of
white space at their ends and of control, format, unassigned, private-use or default-ignorable
characters; the same payment (as `reconciler.identity` compares them) twice in one payrun is an
error at one place naming the other (the service would fail the second as DUPLICATE_PAYMENT);
in two payruns it is the retry of a payment that FAILED, which the plan judges. Money is a
Decimal from the file's text on: a YAML number is read through the text it was written with,
never as a float.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from reconciler.desired.model import Payrun, PayrunPayment
from reconciler.desired.problems import PathProblem, YamlPath
from reconciler.desired.rules import email_problem
from reconciler.desired.values import FileValues
from reconciler.identity import payment_key, text_key
from reconciler.money import CENT, two_places
from reconciler.text_safety import hidden_text_problem
from reconciler.worker_fields import EMAIL, EXTERNAL_ID, PAY

MAX_AMOUNT = Decimal("1000000000000.00")
#: A plain decimal: ASCII digits without a leading zero (a YAML 1.1 reader takes `012` for the
#: octal 10), then optionally a point and one or two digits. Nothing else is money: no sign,
#: white space, exponent, underscore, other base, non-ASCII digit, `.5` or `5.`.
_PLAIN_DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]{1,2})?")
AMOUNT_FORM = (
    'a plain decimal such as "1500.00" or 250 (ASCII digits, then optionally a point and one or '
    "two digits)"
)


class NumberText(str):
    """The text a YAML number was written with (`0x10`, `12.3e1`, `250`): an amount is read
    from it, never from the number the parser made of it."""

    __slots__ = ()


class EscapedText(str):
    """A quoted amount written with escapes (`"1\\x30\\x30"`): its text is not its digits."""

    __slots__ = ()


def parse_amount(value: object) -> Decimal | None:
    """An amount written as a plain decimal (a string, or a number's text), or None."""
    if not isinstance(value, str) or isinstance(value, EscapedText):
        return None
    if not _PLAIN_DECIMAL.fullmatch(value):
        return None
    return Decimal(value)


def amount_problem(value: object, name: str = "amount") -> str | None:
    amount = parse_amount(value)
    if amount is None:
        hint = ""
        if isinstance(value, str) and re.fullmatch(r"0[0-9]+(\.[0-9]*)?", value):
            hint = f" (a leading zero reads as octal to some YAML readers: write {Decimal(value)})"
        return f"{name} must be {AMOUNT_FORM}; got {_written(value)}{hint}"
    if amount <= 0:
        return f"{name} must be above 0; got {value}"
    if amount > MAX_AMOUNT:
        return f"{name} must be at most {MAX_AMOUNT:,}; got {amount:,}"
    return None


def written_value(value: object) -> str:
    """How a message names a value the file wrote (`_written`), for the other blocks' checks."""
    return _written(value)


def _written(value: object) -> str:
    """The value as the file wrote it: a number's text as it is, anything else as YAML would."""
    if isinstance(value, NumberText):
        return f"the number {str(value)[:40]}"
    if isinstance(value, EscapedText):
        return f"the string {str(value)!r:.40} written with escapes (write the digits themselves)"
    if isinstance(value, str):
        return f"the string {value!r:.40}"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    return f"{value!r:.40} ({type(value).__name__})"


def amount_paths(data: Mapping[Any, Any], *, strings: bool = False) -> list[YamlPath]:
    """Where this file's values hold an amount written as a YAML number (and, with `strings`,
    as a string): their texts are read from the file (`with_number_texts`)."""
    found: list[YamlPath] = []

    def wanted(value: object) -> bool:
        return _is_number(value) or (strings and isinstance(value, str))

    policy = data.get("policy")
    if isinstance(policy, dict) and wanted(policy.get("maxPayout")):
        found.append(("policy", "maxPayout"))
    rules = policy.get("approvals") if isinstance(policy, dict) else None
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if isinstance(rule, dict) and wanted(rule.get("over")):
            found.append(("policy", "approvals", index, "over"))
    workers = data.get("workers")
    for index, worker in enumerate(workers if isinstance(workers, list) else []):
        if isinstance(worker, dict) and wanted(worker.get(PAY)):
            found.append(("workers", index, PAY))
    payruns = data.get("payruns")
    for run_index, payrun in enumerate(payruns if isinstance(payruns, list) else []):
        payments = payrun.get("payments") if isinstance(payrun, dict) else None
        for index, payment in enumerate(payments if isinstance(payments, list) else []):
            if isinstance(payment, dict) and wanted(payment.get("amount")):
                found.append(("payruns", run_index, "payments", index, "amount"))
    for index, known in enumerate(_known_paylists(data)):
        if isinstance(known, dict) and wanted(known.get("total")):
            found.append(("history", "paylists", index, "total"))
    return found


def _known_paylists(data: Mapping[Any, Any]) -> list[Any]:
    """The `history.paylists` items as the file wrote them (anything, before the schema)."""
    history = data.get("history")
    known = history.get("paylists") if isinstance(history, dict) else None
    return known if isinstance(known, list) else []


def with_number_texts(data: dict[Any, Any], texts: Mapping[YamlPath, str]) -> None:
    """Replace each amount by the text it was written with (a `NumberText` or `EscapedText`)."""
    for path, text in texts.items():
        parent: Any = data
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = text


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _payments(files: list[FileValues]) -> Iterator[tuple[str, YamlPath, dict[str, Any]]]:
    for values in files:
        payruns = values.data.get("payruns")
        for run_index, payrun in enumerate(payruns if isinstance(payruns, list) else []):
            payments = payrun.get("payments") if isinstance(payrun, dict) else None
            for index, payment in enumerate(payments if isinstance(payments, list) else []):
                if isinstance(payment, dict):
                    yield values.name, ("payruns", run_index, "payments", index), payment


def _emails_by_worker(files: list[FileValues]) -> dict[str, str]:
    found: dict[str, str] = {}
    for values in files:
        workers = values.data.get("workers")
        for worker in workers if isinstance(workers, list) else []:
            if isinstance(worker, dict):
                external_id, email = worker.get(EXTERNAL_ID), worker.get(EMAIL)
                if isinstance(external_id, str) and isinstance(email, str):
                    found.setdefault(external_id, email)
    return found


def payrun_problems(files: list[FileValues]) -> list[tuple[str, PathProblem]]:
    """Every payrun rule across the files, each located by file and path."""
    problems: list[tuple[str, PathProblem]] = []
    first_id: dict[str, tuple[str, YamlPath]] = {}
    for values in files:
        payruns = values.data.get("payruns")
        for index, payrun in enumerate(payruns if isinstance(payruns, list) else []):
            run_id = payrun.get("id") if isinstance(payrun, dict) else None
            description = payrun.get("description") if isinstance(payrun, dict) else None
            if isinstance(description, str) and (reason := hidden_text_problem(description)):
                where: YamlPath = ("payruns", index, "description")
                message = f"the payrun's description {reason}"
                problems.append((values.name, PathProblem(where, message)))
            if isinstance(run_id, str):
                here: YamlPath = ("payruns", index, "id")
                first = first_id.setdefault(text_key(run_id), (values.name, here))
                if first != (values.name, here):
                    message = f"payrun id {run_id!r} is given twice"
                    problems.append((values.name, PathProblem(here, message, other=first)))
    for values in files:
        policy = values.data.get("policy")
        limit = policy.get("maxPayout") if isinstance(policy, dict) else None
        if limit is not None and (reason := amount_problem(limit, "maxPayout")):
            problems.append((values.name, PathProblem(("policy", "maxPayout"), reason)))
        for index, known in enumerate(_known_paylists(values.data)):
            total = known.get("total") if isinstance(known, dict) else None
            if total is not None and (reason := amount_problem(total, "total")):
                where = ("history", "paylists", index, "total")
                problems.append((values.name, PathProblem(where, reason)))
    problems += _period_problems(files)
    emails: dict[str, str] | None = None  # the workers' emails are only worth it for payments
    checked = _Checked()
    seen: dict[tuple[object, ...], tuple[str, YamlPath]] = {}
    for name, path, payment in _payments(files):
        if emails is None:
            emails = _emails_by_worker(files)
        for problem in _payment_problems(payment, path, emails, checked):
            problems.append((name, problem))
        email = _payee(payment, emails)
        amount = checked.amount(payment.get("amount"))[0]
        description = payment.get("description")
        if email is None or amount is None or not isinstance(description, str):
            continue
        # One payrun pays a payment once; a later payrun may hold it again, as the retry of
        # a payment that FAILED (a plan pays it only when no paylist paid it or pays it now).
        key = (name, path[1], *payment_key(email, amount, description))
        first = seen.setdefault(key, (name, path))
        if first != (name, path):
            message = (
                f"the same payment ({two_places(amount)} to {email}, {description!r:.60}) is given "
                "twice in one payrun: the service would fail the second as DUPLICATE_PAYMENT"
            )
            problems.append((name, PathProblem(path, message, other=first)))
    return problems


class _Checked:
    """Each distinct amount text, email and description of the payments checked once: a
    payroll of 12,000 payments writes a few hundred emails and a few amounts, each many times."""

    def __init__(self) -> None:
        self._amounts: dict[tuple[type, str], tuple[Decimal | None, str | None]] = {}
        self._emails: dict[str, str | None] = {}
        self._descriptions: dict[str, str | None] = {}

    def amount(self, value: object) -> tuple[Decimal | None, str | None]:
        """The amount `value` is (`parse_amount`), and why it is not one (`amount_problem`)."""
        if not isinstance(value, str):  # None, a boolean, a list: not worth keeping
            return parse_amount(value), amount_problem(value)
        known = (type(value), value)  # a number's text is not the string of its digits
        found = self._amounts.get(known)
        if found is None:
            found = self._amounts[known] = (parse_amount(value), amount_problem(value))
        return found

    def email(self, address: str) -> str | None:
        if address not in self._emails:
            self._emails[address] = email_problem(address)
        return self._emails[address]

    def description(self, text: str) -> str | None:
        if text not in self._descriptions:
            self._descriptions[text] = hidden_text_problem(text)
        return self._descriptions[text]


def _period_problems(files: list[FileValues]) -> list[tuple[str, PathProblem]]:
    """A worker's `pay` is an amount; a payrun has `payments`, a `period`, or both; a period
    is paid by one payrun (the second named at its line, with the first's)."""
    problems: list[tuple[str, PathProblem]] = []
    first_period: dict[str, tuple[str, YamlPath]] = {}
    for values in files:
        workers = values.data.get("workers")
        for index, worker in enumerate(workers if isinstance(workers, list) else []):
            pay = worker.get(PAY) if isinstance(worker, dict) else None
            if pay is not None and (reason := amount_problem(pay, PAY)):
                problems.append((values.name, PathProblem(("workers", index, PAY), reason)))
        payruns = values.data.get("payruns")
        for index, payrun in enumerate(payruns if isinstance(payruns, list) else []):
            if not isinstance(payrun, dict):
                continue
            period = payrun.get("period")
            if "payments" not in payrun and period is None:
                message = "a payrun has `payments`, a `period` (YYYY-MM), or both"
                problems.append((values.name, PathProblem(("payruns", index), message)))
            if isinstance(period, str):
                here: YamlPath = ("payruns", index, "period")
                first = first_period.setdefault(period, (values.name, here))
                if first != (values.name, here):
                    message = (
                        f"period {period} is paid by two payruns: a period is paid once, "
                        "whatever its payrun's id (keep one payrun of the month)"
                    )
                    problems.append((values.name, PathProblem(here, message, other=first)))
    return problems


def _payee(payment: Mapping[str, Any], emails: Mapping[str, str]) -> str | None:
    worker, email = payment.get("worker"), payment.get("email")
    if isinstance(worker, str) and email is None:
        return emails.get(worker)
    if isinstance(email, str) and worker is None:
        return email
    return None


def _payment_problems(
    payment: Mapping[str, Any], path: YamlPath, emails: Mapping[str, str], checked: _Checked
) -> Iterator[PathProblem]:
    worker, email = payment.get("worker"), payment.get("email")
    if (worker is None) == (email is None):
        yield PathProblem(
            path, "a payment names exactly one of `worker` (an externalId) or `email`"
        )
    elif isinstance(worker, str) and worker not in emails:
        nearest = _nearest_external_id(worker, emails)
        step = (
            f"did you mean {nearest!r}? (a worker the files do not manage is paid by `email`)"
            if nearest
            else "pay a worker this file does not manage by `email`"
        )
        yield PathProblem(
            (*path, "worker"), f"worker {worker!r:.80} is not an externalId of the files: {step}"
        )
    elif isinstance(email, str) and (reason := checked.email(email)):
        yield PathProblem((*path, "email"), f"invalid email {email!r:.80}: {reason}")
    if "amount" in payment and (reason := checked.amount(payment["amount"])[1]):
        yield PathProblem((*path, "amount"), reason)
    description = payment.get("description")
    if isinstance(description, str) and (reason := checked.description(description)):
        yield PathProblem((*path, "description"), f"the description {reason}")


#: Up to this many externalIds, an unknown one is compared with all of them; beyond, only with
#: those of its length (an id scheme's ids share one: CW-9999 and CW-0999), so the work stays
#: bounded in a file of 100,000 workers.
_COMPARED_WITH_ALL = 2_000


def _nearest_external_id(worker: str, emails: Mapping[str, str]) -> str | None:
    """The externalId of the files `worker` most likely meant (a typo), or None."""
    import difflib  # only for a file with an unknown payee

    known = list(emails)
    if len(known) > _COMPARED_WITH_ALL:
        known = [external_id for external_id in known if len(external_id) == len(worker)]
    close = difflib.get_close_matches(worker[:80], known, n=1, cutoff=0.75)
    return close[0] if close else None


def build_payruns(files: list[FileValues]) -> tuple[Payrun, ...]:
    """The payruns of files that passed every check, in file order (a period's payments are
    the plan's to add, once the account is read: `reconciler.plan.periods`)."""
    if not any(values.data.get("payruns") for values in files):
        return ()
    emails = _emails_by_worker(files)
    amounts: dict[tuple[type, str], Decimal] = {}  # each amount text read once
    payruns = []
    for values in files:
        for payrun in values.data.get("payruns", ()):
            payments = []
            for item in payrun.get("payments", ()):
                written = item["amount"]
                amount = amounts.get((type(written), written))
                if amount is None:
                    amount = (parse_amount(written) or Decimal(0)).quantize(CENT)
                    amounts[type(written), written] = amount
                email = _payee(item, emails) or ""
                payments.append(
                    PayrunPayment(email, amount, item["description"], item.get("worker"))
                )
            period = payrun.get("period")
            payruns.append(Payrun(payrun["id"], payrun["description"], tuple(payments), period))
    return tuple(payruns)
