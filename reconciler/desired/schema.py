"""The first layer: the JSON Schema, checked fast, with a clear message for each failure.

`jsonschema_rs` (compiled) answers whether a document is valid in a few milliseconds per
thousand workers; only when it is not does the reference validator, `jsonschema`, run to name
every error, and then only over the top level and the workers that failed.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import jsonschema_rs

from reconciler.desired.problems import PathProblem, YamlPath

SCHEMA_NAME = "desired-state.schema.json"

_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "boolean": "true or false",
}


@cache
def desired_state_schema() -> dict[str, Any]:
    """The schema shipped with the package (`reconciler/schemas/`, a link to `schemas/`)."""
    text = resources.files("reconciler").joinpath("schemas", SCHEMA_NAME).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _ecma_pattern(
    validator: Any, pattern: str, instance: object, schema: object
) -> Iterator[jsonschema.ValidationError]:
    """`pattern` as editors and jsonschema-rs read it: a final `$` is the very end of the
    string (Python's `$` also matches before a final newline, so `"GB\\n"` would pass)."""
    if isinstance(instance, str) and not _end_anchored(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _end_anchored(pattern: str) -> re.Pattern[str]:
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


_Full = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


@cache
def _validators() -> tuple[Any, Any, Any, Any]:
    schema = desired_state_schema()
    worker = {**schema["$defs"]["worker"], "$defs": schema["$defs"]}
    return (
        jsonschema_rs.validator_for(schema),
        jsonschema_rs.validator_for(worker),
        _Full(schema),
        _Full(worker),
    )


def schema_problems(data: object) -> list[PathProblem]:
    """Every way `data` (one file's values) breaks the schema; nothing when it is valid."""
    fast, fast_worker, full, full_worker = _validators()
    if _is_valid(fast, data):
        return []
    workers = data.get("workers") if isinstance(data, dict) else None
    if not isinstance(workers, list):
        return _problems(full.iter_errors(data), ())
    problems = _problems(full.iter_errors({**data, "workers": []}), ())  # type: ignore[dict-item]
    for index, worker in enumerate(workers):
        if not _is_valid(fast_worker, worker):
            problems += _problems(full_worker.iter_errors(worker), ("workers", index))
    return problems


def _is_valid(validator: Any, instance: object) -> bool:
    try:
        return bool(validator.is_valid(instance))
    except (ValueError, TypeError):  # keys that are not strings: let jsonschema name them
        return False


def _problems(errors: Iterator[jsonschema.ValidationError], prefix: YamlPath) -> list[PathProblem]:
    seen: dict[tuple[YamlPath, str], PathProblem] = {}
    missing: dict[YamlPath, list[str]] = {}  # one message per mapping, naming every key
    for error in errors:
        if error.validator == "required" and "then" not in error.schema_path:
            path = (*prefix, *error.absolute_path)
            keys = missing.setdefault(path, [])
            keys += [key for key in error.validator_value if key not in error.instance]
            continue
        for problem in _explain(error, prefix):
            seen.setdefault((problem.path, problem.message), problem)
    for path, keys in missing.items():
        names = ", ".join(repr(key) for key in dict.fromkeys(keys))
        plural = "s" if len(keys) > 1 else ""
        message = f"missing required key{plural} {names} in {_name(path)}"
        seen.setdefault((path, message), PathProblem(path, message))
    return list(seen.values())


def _explain(error: jsonschema.ValidationError, prefix: YamlPath) -> Iterator[PathProblem]:
    path: YamlPath = (*prefix, *error.absolute_path)
    instance = error.instance
    name = _name(path)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    match error.validator:
        case "additionalProperties":
            known = list(schema.get("properties", {}))
            for key in instance:
                if key not in known:
                    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    expected = ", ".join(known)
                    message = f"unknown key {key!r} in {name}{hint}; known keys: {expected}"
                    yield PathProblem((*path, str(key)), message, at_key=True)
        case "required":  # only the Business rule's: the others are gathered by _problems
            for key in error.validator_value:
                if key not in instance:
                    yield PathProblem(path, f"a Business needs {key!r} (its legal name)")
        case "type":
            wanted = _TYPE_NAMES.get(str(error.validator_value), str(error.validator_value))
            yield PathProblem(path, f"{name} must be {wanted}, not {_describe(instance)}")
        case "enum":
            allowed = ", ".join(str(value) for value in error.validator_value)
            yield PathProblem(path, f"{name} must be one of {allowed}; got {instance!r}")
        case "const":
            yield PathProblem(path, f"{name} must be {error.validator_value!r}; got {instance!r}")
        case "minLength" | "pattern" if error.validator_value in (1, r"\S"):
            yield PathProblem(path, f"{name} must not be empty or blank")
        case "maxLength":
            limit = error.validator_value
            count = len(instance)
            yield PathProblem(path, f"{name} is longer than {limit} characters ({count})")
        case "pattern" if path[-1:] == ("countryIso",):
            message = f"countryIso must be two upper-case letters (ISO 3166-1); got {instance!r}"
            yield PathProblem(path, message)
        case "pattern" if path[-1:] == ("name",):
            message = f"header name {instance!r} is not an HTTP token (letters, digits, -, _, ...)"
            yield PathProblem(path, message)
        case "oneOf" if path[-1:] == ("maxInactivations",):
            message = (
                "maxInactivations must be a non-negative integer (10) or a percentage "
                f"string ('25%'); got {instance!r}"
            )
            yield PathProblem(path, message)
        case "maxItems":
            limit = error.validator_value
            count = len(instance)
            yield PathProblem(path, f"{name} may hold at most {limit} items; it has {count}")
        case "minItems":
            yield PathProblem(path, f"{name} must not be empty")
        case "uniqueItems":
            yield PathProblem(path, f"{name} holds the same item twice")
        case _:
            yield PathProblem(path, f"{name}: {error.message}")


def _name(path: YamlPath) -> str:
    """The field a path ends in, as a person would call it."""
    if not path:
        return "the top level"
    *parent, last = path
    if isinstance(last, int):
        return f"item {last + 1} of {_name(tuple(parent))}"
    return str(last)


def _describe(value: object) -> str:
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    kind = {int: "an integer", float: "a number", str: "a string"}.get(type(value), "a value")
    return f"{value!r} ({kind})"
