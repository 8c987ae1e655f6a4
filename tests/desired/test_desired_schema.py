"""The JSON Schema itself: valid for its metaschema, documented everywhere, shipped once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reconciler.desired.schema import SCHEMA_NAME, _inline, desired_state_schema

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA = REPOSITORY / "schemas" / SCHEMA_NAME
PACKAGED = REPOSITORY / "reconciler" / "schemas" / SCHEMA_NAME


def _check_jsonschema(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_schema_passes_its_metaschema_in_a_second_validator() -> None:
    completed = _check_jsonschema("--check-metaschema", str(SCHEMA))
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_examples_pass_the_schema_in_a_second_validator() -> None:
    files = [
        str(path)
        for path in sorted((REPOSITORY / "examples").rglob("*.yaml"))
        if path.name != "sandbox-seed.yaml"
    ]
    completed = _check_jsonschema("--schemafile", str(SCHEMA), *files)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_a_broken_file_fails_the_schema_in_the_second_validator_too() -> None:
    broken = REPOSITORY / "tests" / "corpus" / "desired" / "unknown-worker-key" / "desired.yaml"
    completed = _check_jsonschema("--schemafile", str(SCHEMA), str(broken))
    assert completed.returncode == 1


def test_the_package_ships_the_same_schema() -> None:
    assert PACKAGED.read_bytes() == SCHEMA.read_bytes()
    assert desired_state_schema() == json.loads(SCHEMA.read_text())


def _properties(schema: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        for name, subschema in schema.get("properties", {}).items():
            yield f"{path}.{name}", subschema
        for key, value in schema.items():
            if key != "if":  # a condition's properties are tests, not fields to document
                yield from _properties(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _properties(value, f"{path}[{index}]")


PROPERTIES = list(_properties(json.loads(SCHEMA.read_text()), "#"))


@pytest.mark.parametrize(("where", "subschema"), PROPERTIES, ids=[p[0] for p in PROPERTIES])
def test_every_property_has_a_description_and_examples(
    where: str, subschema: dict[str, Any]
) -> None:
    assert subschema.get("description"), where
    assert subschema.get("examples"), where


def test_the_schema_is_strict() -> None:
    schema = json.loads(SCHEMA.read_text())
    objects = [schema, *(d for d in schema["$defs"].values() if d.get("type") == "object")]
    assert all(o["additionalProperties"] is False for o in objects)


def test_the_inlined_schema_means_the_same() -> None:
    """Inlining references changes no verdict (checked by the reference implementation)."""
    schema = json.loads(SCHEMA.read_text())
    inlined = _inline(schema, schema["$defs"])
    assert "$ref" not in json.dumps(inlined)
    worker = {"externalId": "A", "typeOfWorker": "Worker", "workerName": "A"}
    samples = [
        *schema["examples"],
        {"workers": [{"externalId": "", "typeOfWorker": "Business", "colour": 1}]},
        {"workers": [{**worker, "workerSurname": " ", "countryIso": "gb"}], "version": 2},
        {"webhook": {"url": 1, "event_types": [], "headers": [{"name": "a b", "value": 1}]}},
        {"policy": {"maxInactivations": "x", "prune": "yes"}, "scope": {}},
    ]
    for sample in samples:
        verdicts = [
            sorted(
                (list(error.absolute_path), error.validator)
                for error in jsonschema.Draft202012Validator(candidate).iter_errors(sample)
            )
            for candidate in (schema, inlined)
        ]
        assert verdicts[0] == verdicts[1]


# --- the schema says what validate checks, where JSON Schema can ---------------------------


def _schema_accepts(document: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(desired_state_schema()).is_valid(document)


def _with_webhook(url: str = "https://hooks.example.com/x", header: str = "X-Token") -> Any:
    return {
        "version": 1,
        "webhook": {
            "url": url,
            "headers": [{"name": header, "value": "v"}],
            "event_types": ["KYC"],
        },
    }


def test_every_iso_country_code_is_in_the_enum_for_completion() -> None:
    import pycountry

    worker = desired_state_schema()["$defs"]["worker"]["properties"]["countryIso"]
    assert worker["enum"] == sorted(country.alpha_2 for country in pycountry.countries)


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://hooks.example.com/workforce", True),
        ("HTTPS://hooks.example.com/workforce", True),
        ("http://localhost:8080/hook", True),
        ("http://127.0.0.1/hook", True),
        ("http://[::1]:9000/", True),
        ("${WEBHOOK_URL}", True),
        ("https://hooks.example.com/x?t=${TOKEN}", True),
        ("http://hooks.example.com/workforce", False),
        ("http://localhost.evil.example/hook", False),
        ("ftp://hooks.example.com/", False),
        ("/relative/path", False),
        ("https://", False),
        ("https://hooks.example.com/" + "a" * 2048, False),
    ],
)
def test_the_url_pattern_matches_the_rule(url: str, accepted: bool) -> None:
    from reconciler.desired.rules import webhook_url_problem

    assert _schema_accepts(_with_webhook(url=url)) is accepted
    if "${" not in url and len(url) <= 2048:  # the rule checks the filled-in URL
        assert (webhook_url_problem(url) is None) is accepted


@pytest.mark.parametrize(
    "name", ["Host", "host", "CONTENT-LENGTH", "Content-Type", "transfer-encoding"]
)
def test_reserved_header_names_are_refused_by_the_schema(name: str) -> None:
    from reconciler.desired.rules import REFUSED_HEADER_NAMES

    assert name.lower() in REFUSED_HEADER_NAMES
    assert not _schema_accepts(_with_webhook(header=name))
    assert _schema_accepts(_with_webhook(header=f"X-{name}"))


@pytest.mark.parametrize(
    ("limit", "accepted"),
    [
        ("25%", True),
        ("0%", True),
        ("100%", True),
        ("100.0%", True),
        ("99.5%", True),
        ("100.5%", False),
        ("150%", False),
        ("NaN%", False),
        ("-1%", False),
        ("25", False),
        (10, True),
        (-1, False),
    ],
)
def test_the_share_pattern_stops_at_100_percent(limit: object, accepted: bool) -> None:
    document = {"version": 1, "policy": {"maxInactivations": limit}}
    assert _schema_accepts(document) is accepted


def test_a_file_with_settings_needs_the_version_but_a_workers_file_does_not() -> None:
    assert not _schema_accepts({"scope": {"externalIdPrefix": "ENG-"}})
    assert not _schema_accepts({"webhook": _with_webhook()["webhook"]})
    assert _schema_accepts({"workers": []})
