"""A payrun's checks over many payments: each distinct email, amount text and description is
checked once (`desired.payruns`), and every payment that holds a wrong one is still reported at
its own line, in the same words, as are the duplicates among them."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.desired import InvalidDesiredState, load_desired_state

WORKER = (
    "  - {externalId: W-1, typeOfWorker: Worker, workerName: Ada, workerSurname: Byron, "
    "workerEmail: ada@example.com, countryIso: GB}"
)
#: The payments of the first payrun that differ from `pay N` of 100.00 to p{N % 40}: a wrong
#: email, amount or description written more than once, and payments the identity rule finds
#: again (the same text, two spaces for one, `l` for `1`, a Cyrillic `а`, the email's case).
ODD: dict[int, tuple[str, str, str]] = {
    7: ("bad@@example.com", '"100.00"', "pay 7"),
    77: ("bad@@example.com", '"100.00"', "pay 77"),
    140: ("bad@@example.com", '"100.00"', "pay 140"),
    9: ("p9@example.com", "012", "pay 9"),
    10: ("p10@example.com", '"012"', "pay 10"),
    99: ("p19@example.com", "012", "pay 99"),
    11: ("p11@example.com", '"100.00"', "pay x "),
    111: ("p31@example.com", '"100.00"', "pay x "),
    200: ("p0@example.com", '"100.00"', "pay 0"),
    201: ("p1@example.com", "100.00", "pay  1"),
    202: ("p12@example.com", "100", "pay l2"),
    203: ("p2@example.com", '"100.00"', "p\u0430y 2"),  # a Cyrillic а
    204: ("P3@Example.com", '"100.00"', "pay 3"),
}


def _payroll(folder: Path) -> Path:
    lines = ["version: 1", "workers:", WORKER, "payruns:"]
    for run in (1, 2):  # the second payrun pays the same: a retry, no error
        lines += [f"  - id: run-{run}", f"    description: run {run}", "    payments:"]
        for n in range(300):
            email, amount, description = f"p{n % 40}@example.com", '"100.00"', f"pay {n}"
            if run == 1:
                email, amount, description = ODD.get(n, (email, amount, description))
            line = f'      - {{email: {email}, amount: {amount}, description: "{description}"}}'
            lines.append(line)
        lines.append('      - {worker: W-1, amount: "5.00", description: "by worker"}')
    path = folder / "payroll.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


FORM = (
    'amount must be a plain decimal such as "1500.00" or 250 (ASCII digits, then optionally a '
    "point and one or two digits); got the {} (a leading zero reads as octal to some YAML "
    "readers: write 12)"
)
EMAIL = (
    "invalid email 'bad@@example.com': The part after the @-sign contains invalid characters: '@'."
)
EDGE = "the description has white space at its start or end, which no one sees in a plan"
TWICE = (
    "the same payment (100.00 to {}, {!r}) is given twice in one payrun: the service would "
    "fail the second as DUPLICATE_PAYMENT: first at line {}"
)


def test_every_wrong_payment_among_many_is_reported_at_its_line(tmp_path: Path) -> None:
    path = _payroll(tmp_path)
    with pytest.raises(InvalidDesiredState) as raised:
        load_desired_state(path, {})
    found = [str(problem).removeprefix(f"{path}:") for problem in raised.value.problems]
    line = 8  # of payment 0
    assert found == [
        f"{line + 7}:17: {EMAIL}",
        f"{line + 9}:41: {FORM.format('number 012')}",
        f"{line + 10}:42: {FORM.format('string ' + repr('012'))}",
        f"{line + 11}:65: {EDGE}",
        f"{line + 77}:17: {EMAIL}",
        f"{line + 99}:42: {FORM.format('number 012')}",
        f"{line + 111}:65: {EDGE}",
        f"{line + 140}:17: {EMAIL}",
        f"{line + 200}:9: {TWICE.format('p0@example.com', 'pay 0', line)}",
        # (a message shows a run of white space as one: `redaction.shown`)
        f"{line + 201}:9: {TWICE.format('p1@example.com', 'pay 1', line + 1)}",
        f"{line + 202}:9: {TWICE.format('p12@example.com', 'pay l2', line + 12)}",
        f"{line + 203}:9: {TWICE.format('p2@example.com', ODD[203][2], line + 2)}",
        f"{line + 204}:9: {TWICE.format('P3@Example.com', 'pay 3', line + 3)}",
    ]
    assert str(raised.value).endswith("\n13 problems found")
