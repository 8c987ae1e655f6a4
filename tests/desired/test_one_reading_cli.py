"""Through the command line: a file its readers would read two ways is refused at the place.

Each of these files read one way to the parser that makes values and another to the one that
reads texts and places (or to a person reading the diff): a comment holding U+2028 hid a
`maxPayout: 100` the reviewer saw, and the policy read 1,000,000.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import reconciler

WORKERS = (
    "version: 1\n"
    "workers:\n"
    "  - externalId: ENG-1\n"
    "    typeOfWorker: Worker\n"
    "    workerName: Ada\n"
    "    workerSurname: Lovelace\n"
    "    workerEmail: ada@example.com\n"
    "    countryIso: GB\n"
)
PAYRUN = (
    "payruns:\n"
    "  - id: 2026-12-retainers\n"
    "    description: December retainers\n"
    "    payments:\n"
    "      - worker: ENG-1\n"
    "        amount: 9999 # a note{c}        amount: 100\n"
    "        description: December retainer\n"
)


@pytest.mark.parametrize(
    ("break_", "name"),
    [("\u2028", "LINE SEPARATOR"), ("\u2029", "PARAGRAPH SEPARATOR"), ("\x85", "NEXT LINE")],
)
def test_a_line_break_of_yaml_1_1_in_a_comment_is_refused_at_its_place(
    tmp_path: Path, break_: str, name: str
) -> None:
    (tmp_path / "team.yaml").write_text(
        WORKERS + f"policy:\n  maxPayout: 1000000 # reviewed{break_}  maxPayout: 100\n",
        encoding="utf-8",
    )
    (tmp_path / "pay.yaml").write_text(PAYRUN.format(c=break_), encoding="utf-8")

    result = reconciler("validate", str(tmp_path))

    assert result.returncode == 1, result.stdout + result.stderr
    said = result.stdout + result.stderr
    code = f"U+{ord(break_):04X}"
    assert f"team.yaml:10:32: the character {code} ({name}) is a line break" in said, said
    assert f"pay.yaml:6:30: the character {code} ({name})" in said, said
    assert "Traceback" not in said


@pytest.mark.parametrize(
    ("text", "place", "words"),
    [
        (WORKERS + "policy:\n  maxPayout: 100 # x\r  maxPayout: 9\n", "10:21", "carriage return"),
        (WORKERS + "policy:\n\ufeff  maxPayout: 100\n", "10:1", "U+FEFF (a byte order mark)"),
        ("%YAML 2.0\n---\n" + WORKERS, "1:1", "the directive '%YAML 2.0' is not supported"),
        ("%YAML 1.1\n---\n" + WORKERS, "1:1", "the directive '%YAML 1.1' is not supported"),
    ],
)
def test_text_read_two_ways_is_refused(tmp_path: Path, text: str, place: str, words: str) -> None:
    path = tmp_path / "team.yaml"
    path.write_bytes(text.encode())

    result = reconciler("validate", str(path))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert f"team.yaml:{place}: " in said and words in said, said


def test_keys_one_and_true_are_reported_as_written(tmp_path: Path) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(WORKERS + "    1: one\n    true: two\n", encoding="utf-8")

    result = reconciler("validate", str(path))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "team.yaml:9:5: the key 1 is not text" in said, said
    assert "team.yaml:10:5: the key true is not text" in said, said
    assert "True" not in said
