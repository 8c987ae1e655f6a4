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
