"""Amounts are money, not YAML numbers: a table of how amounts are written, run through
`reconciler validate` and through the editor schema, which must agree.

One `validate` reads a directory of one file per row (a file per row keeps each verdict at its
own file and line). The schema reads each file's values as an editor's YAML 1.2 parser gives
them. Where the file writes a number in another form (`0x10`, `12.3e1`), the schema sees only
the value the parser made of it (16, 123.0) and cannot refuse it: those rows are marked, and
the test holds that validate refuses them with the form to write and the schema lets them by.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema_rs
import yaml_rs

from tests.cli import ROOT, reconciler

SCHEMA = json.loads((ROOT / "schemas" / "desired-state.schema.json").read_text("utf-8"))

FORM = "must be a plain decimal"
OK, FORM_REFUSED, ABOVE_0, AT_MOST, TAG = "ok", FORM, "must be above 0", "must be at most", "tag"

#: (the amount as written in YAML, what validate says, whether only the text tells it wrong)
TABLE: list[tuple[str, str, bool]] = [
    ('"1500.00"', OK, False),
    ("1500.00", OK, False),
    ("250", OK, False),
    ('"250"', OK, False),
    ("19.99", OK, False),
    ("0.07", OK, False),
    ('"0.5"', OK, False),
    ("0.01", OK, False),
    ('"1000000000000.00"', OK, False),
    ("1000000000000", OK, False),
    ("0x10", FORM, True),
    ("0o17", FORM, True),
    ("0b101", FORM, True),
    ("12.3e1", FORM, True),
    ("1e3", FORM, True),
    ("1_000", FORM, True),
    ("012", FORM, True),
    ('"012"', FORM, False),
    (".5", FORM, True),
    ("5.", FORM, True),
    ("+5", FORM, True),
    ("1500.0000000000001", FORM, True),
    ("!!float 12", TAG, True),
    ('"١٢"', FORM, False),
    ('"１２"', FORM, False),
    ('"  12.00"', FORM, False),
    ('"12.00 "', FORM, False),
    ('"12.345"', FORM, False),
    ("12.345", FORM, False),
    ('"abc"', FORM, False),
    ('"1,000.00"', FORM, False),
    ('"1e3"', FORM, False),
    ('"+5"', FORM, False),
    ('"-5"', FORM, False),
    ("-5", FORM, False),
    ("1e400", FORM, False),
    ("inf", FORM, False),
    (".inf", FORM, False),
    (".nan", FORM, False),
    ("true", FORM, False),
    ("null", FORM, False),
    ("[12]", FORM, False),
    ("0", ABOVE_0, False),
    ("0.00", ABOVE_0, False),
    ('"0.00"', ABOVE_0, False),
    ("1000000000000.01", AT_MOST, False),
    ('"1000000000000.01"', AT_MOST, False),
    # Escapes in a double-quoted string: the value is digits, the text is not.
    ('"1\\x30\\x30"', FORM, True),
    ('"2\\u0030"', FORM, True),
    ('"\\x31\\x32.00"', FORM, True),
    ("'100'", OK, False),
]

AMOUNT_LINE = 6  # the line of `amount:` in each row's file


def _row_file(folder: Path, number: int, amount: str) -> Path:
    path = folder / f"row{number:02d}.yaml"
    path.write_text(
        "payruns:\n"
        f"  - id: row-{number}\n"
        "    description: Row\n"
        "    payments:\n"
        "      - email: ada@example.com\n"
        f"        amount: {amount}\n"
        f"        description: row {number}\n",
        encoding="utf-8",
    )
    return path


def _schema_accepts(path: Path) -> bool:
    values = yaml_rs.loads(path.read_text("utf-8"), parse_datetime=False)
    document = {"version": 1, **values}
    return bool(jsonschema_rs.validator_for(SCHEMA).is_valid(document))


def test_validate_and_the_schema_agree_on_a_table_of_amounts(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("version: 1\n")
    rows = {
        _row_file(tmp_path, n, amount): (amount, said, text_only)
        for n, (amount, said, text_only) in enumerate(TABLE)
    }

    validated = reconciler("validate", str(tmp_path))

    assert "Traceback" not in validated.stderr, validated.stderr
    said_at: dict[str, list[tuple[int, str]]] = {}
    for line in (validated.stdout + validated.stderr).splitlines():
        found = re.match(r"(?:.*/)?(row\d+\.yaml):(\d+):\d+: (.*)", line)
        if found:
            said_at.setdefault(found[1], []).append((int(found[2]), found[3]))
    disagreements = []
    for path, (amount, said, text_only) in rows.items():
        messages = said_at.get(path.name, [])
        validate_accepts = not messages
        if said == OK:
            assert validate_accepts, (amount, messages)
        elif said == TAG:
            assert any("YAML tag !!float is not allowed" in m for _, m in messages), (
                amount,
                messages,
            )
        else:
            # One problem, at the amount's own line, saying what to write.
            assert [line for line, _ in messages] == [AMOUNT_LINE], (amount, messages)
            assert said in messages[0][1], (amount, messages)
        schema_accepts = _schema_accepts(path)
        if text_only:
            # The schema sees 16 for 0x10: only validate, reading the text, can refuse it.
            assert not validate_accepts and schema_accepts, amount
        elif schema_accepts != validate_accepts:
            disagreements.append((amount, validate_accepts, schema_accepts))
    assert disagreements == []
    assert validated.returncode == 1


def test_the_form_message_names_what_was_written(tmp_path: Path) -> None:
    path = _row_file(tmp_path, 1, "0x10")
    (tmp_path / "base.yaml").write_text("version: 1\npolicy:\n  maxPayout: 1e4\n")
    validated = reconciler("validate", str(tmp_path))
    out = validated.stdout + validated.stderr
    assert f'{path.name}:6:17: amount must be a plain decimal such as "1500.00" or 250' in out
    assert "got the number 0x10" in out
    assert "base.yaml:3:14: maxPayout must be a plain decimal" in out
    assert "got the number 1e4" in out
    leading = _row_file(tmp_path, 1, "012")
    out = reconciler("validate", str(leading)).stdout
    assert "a leading zero reads as octal to some YAML readers: write 12" in out
