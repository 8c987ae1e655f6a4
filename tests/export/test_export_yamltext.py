"""Every string written as a scalar reads back as the same string, in both YAML versions."""

from __future__ import annotations

import pytest
import yaml
import yaml_rs
from hypothesis import given
from hypothesis import strategies as st

from reconciler.export.yamltext import quoted, scalar

# (value, how it must be written): the traps of YAML 1.1 and 1.2, and plain values kept plain.
CASES = [
    ("Ada", "Ada"),
    ("ENG-001", "ENG-001"),
    ("ENG-", "ENG-"),
    ("ada.lovelace+work@example.com", "ada.lovelace+work@example.com"),
    ("Staff Engineer (R and D)", "Staff Engineer (R and D)"),
    ("O'Brien", "O'Brien"),
    ("TODO(export)", "TODO(export)"),
    ("no", '"no"'),
    ("NO", '"NO"'),
    ("No", '"No"'),
    ("yes", '"yes"'),
    ("Y", '"Y"'),
    ("n", '"n"'),
    ("on", '"on"'),
    ("OFF", '"OFF"'),
    ("true", '"true"'),
    ("False", '"False"'),
    ("null", '"null"'),
    ("Null", '"Null"'),
    ("~", '"~"'),
    ("", '""'),
    ("1e3", '"1e3"'),
    ("0o14", '"0o14"'),
    ("0x1F", '"0x1F"'),
    ("1_000", '"1_000"'),
    ("12:30", '"12:30"'),
    ("2025-03-14", '"2025-03-14"'),
    (".inf", '".inf"'),
    ("-.5", '"-.5"'),
    ("007", '"007"'),
    ("a: b", '"a: b"'),
    ("a #b", '"a #b"'),
    ("*alias", '"*alias"'),
    ("&anchor", '"&anchor"'),
    ("!tag", '"!tag"'),
    ("- item", '"- item"'),
    ("? key", '"? key"'),
    ("[list]", '"[list]"'),
    ("{map}", '"{map}"'),
    ("|", '"|"'),
    (">", '">"'),
    ("%YAML", '"%YAML"'),
    ("@at", '"@at"'),
    ("`tick", '"`tick"'),
    ("<<", '"<<"'),
    ("=", '"="'),
    ("trailing ", '"trailing "'),
    (" leading", '" leading"'),
    ('say "hi"', '"say \\"hi\\""'),
    ("back\\slash", '"back\\\\slash"'),
    ("two\nlines", '"two\\nlines"'),
    ("tab\there", '"tab\\there"'),
    ("Zoë", '"Zoë"'),
    ("Łukasz", '"Łukasz"'),
    ("東京", '"東京"'),
    ("emoji 😀", '"emoji 😀"'),
    ("nel\x85", '"nel\\x85"'),
    ("line\u2028sep", '"line\\u2028sep"'),
    ("bom\ufeff", '"bom\\ufeff"'),
    ("bell\x07", '"bell\\a"'),
    ("del\x7f", '"del\\x7f"'),
    ("${WEBHOOK_TOKEN}", '"${WEBHOOK_TOKEN}"'),
]


@pytest.mark.parametrize(("value", "written"), CASES)
def test_scalar_is_written_as_expected(value: str, written: str) -> None:
    assert scalar(value) == written


@pytest.mark.parametrize(("value", "written"), CASES)
def test_scalar_reads_back_the_same_in_yaml_1_1_and_1_2(value: str, written: str) -> None:
    document = f"key: {scalar(value)}\nnext: 1\n"
    assert yaml.safe_load(document) == {"key": value, "next": 1}
    assert yaml_rs.loads(document, parse_datetime=False) == {"key": value, "next": 1}


@given(st.text())
def test_any_text_round_trips_quoted_and_as_scalar(value: str) -> None:
    for text in (quoted(value), scalar(value)):
        document = f"- {text}\n# a comment after it\n- after\n"
        assert yaml.safe_load(document) == [value, "after"]
        assert yaml_rs.loads(document, parse_datetime=False) == [value, "after"]


@given(st.text())
def test_a_scalar_never_spans_two_lines(value: str) -> None:
    """What keeps a value from breaking out of a comment or into the next key."""
    assert "\n" not in scalar(value) and "\r" not in scalar(value)
