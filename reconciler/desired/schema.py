"""The first layer: the JSON Schema, checked by a compiled validator, explained in plain words.

`jsonschema_rs` (Rust) checks a document of 100,000 workers in a tenth of a second, and lists
its errors as fast: each is turned into one message a person can act on. The schema's local
references are inlined first, so an error's schema path leads straight to the keyword that
failed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs

from reconciler import worker_fields
from reconciler.desired.countries import suggested_code
from reconciler.desired.keys import NonTextKey
from reconciler.desired.problems import PathProblem, YamlPath
from reconciler.words import counted
from reconciler.worker_fields import COUNTRY, WorkerFields

_TWO_LETTERS = re.compile("[A-Z]{2}")  # anything else is the pattern's to refuse
_SHARE = re.compile(r"[0-9]+(\.[0-9]+)?%")

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


def _inline(schema: Any, definitions: dict[str, Any]) -> Any:
    """`schema` with each local `$ref` replaced by its definition. The schema's references
    carry only annotations beside them (description, examples), so merging keeps the meaning."""
    if isinstance(schema, list):
        return [_inline(item, definitions) for item in schema]
    if not isinstance(schema, dict):
        return schema
    inlined = {key: _inline(value, definitions) for key, value in schema.items()}
    inlined.pop("$defs", None)
    reference = inlined.pop("$ref", None)
    if reference is None:
        return inlined
    target = _inline(definitions[reference.removeprefix("#/$defs/")], definitions)
    return {**target, **inlined}


def worker_definition(table: WorkerFields) -> dict[str, Any]:
    """The schema of a worker for the fields of `table` (`reconciler.worker_fields`): its keys,
    the required ones and those `ignoreChanges` may name are the table's; each key's schema is
    the shipped file's (with its description and examples) or, for a key it lacks, the
    table's. The shipped file equals it for the package's own table (a test says so)."""
    shipped: dict[str, Any] = desired_state_schema()["$defs"]["worker"]
    known = shipped["properties"]
    ignore = known["ignoreChanges"]
    compared = [item.key for item in table.compared]
    properties = {item.key: known.get(item.key, dict(item.schema)) for item in table}
    properties["ignoreChanges"] = {**ignore, "items": {**ignore["items"], "enum": compared}}
    return {**shipped, "required": list(table.required), "properties": properties}


@cache
def _validator(table: WorkerFields) -> tuple[Any, dict[str, Any]]:
    schema = desired_state_schema()
    definitions = {**schema["$defs"], "worker": worker_definition(table)}
    inlined: dict[str, Any] = _inline(schema, definitions)
    return jsonschema_rs.validator_for(inlined), inlined


@dataclass(frozen=True, slots=True)
class _Failure:
    """One schema error: the keyword that failed, its value, and the instance it failed on."""

    keyword: str
    expected: Any  # the keyword's value in the schema
    schema: Mapping[str, Any]  # the subschema holding the keyword
    schema_path: tuple[str | int, ...]
    path: YamlPath
    instance: Any
    message: str


#: Schema errors read at most: each costs the validator a copy of its instance, so 100,000
#: broken workers would take seconds and gigabytes for messages nobody reads past the first.
MAX_FAILURES = 5000


def schema_problems(data: object) -> list[PathProblem]:
    """Every way `data` (one file's values) breaks the schema, or the first few thousand and
    a last problem saying that there are more; nothing when it is valid. Raises `NonTextKey`
    for a key that is not text, which the schema cannot name (keys.py locates it)."""
    try:
        return _schema_problems(data)
    except (ValueError, TypeError):  # the validator takes text keys only
        raise NonTextKey from None


def _schema_problems(data: object) -> list[PathProblem]:
    table = worker_fields.WORKER_FIELDS
    validator, schema = _validator(table)
    if validator.is_valid(data):
        return []
    workers = data.get("workers") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(workers, list) or len(workers) <= MAX_FAILURES:
        return _problems(_failures(validator, schema, data))
    # A long list of workers is checked one worker at a time, so the checking stops after the
    # first few thousand broken ones (the validator would build every error of the document).
    failures = list(_failures(validator, schema, {**data, "workers": []}))
    item_validator, item_schema = _worker_validator(table)
    broken = 0
    for index, worker in enumerate(workers):
        if item_validator.is_valid(worker):
            continue
        broken += 1
        if broken > MAX_FAILURES:
            message = f"and more workers that break the schema after the first {MAX_FAILURES:,}"
            more = PathProblem(("workers", index), message, uncounted=True)
            return [*_problems(iter(failures)), more]
        failures += (
            replace(failure, path=("workers", index, *failure.path))
            for failure in _failures(item_validator, item_schema, worker)
        )
    return _problems(iter(failures))


@cache
def _worker_validator(table: WorkerFields) -> tuple[Any, dict[str, Any]]:
    """The validator of one item of `workers`, for checking a long list item by item."""
    _, schema = _validator(table)
    item: dict[str, Any] = schema["properties"]["workers"]["items"]
    return jsonschema_rs.validator_for(item), item


def _failures(validator: Any, schema: dict[str, Any], data: object) -> Iterator[_Failure]:
    for error in validator.iter_errors(data):
        *parent_path, keyword = tuple(error.schema_path)
        parent: Any = schema
        for step in parent_path:
            parent = parent[step]
        yield _Failure(
            keyword=str(keyword),
            expected=parent[keyword],
            schema=parent,
            schema_path=tuple(error.schema_path),
            path=tuple(error.instance_path),
            instance=_value_at(data, tuple(error.instance_path), error.instance),
            message=error.message,
        )


def _value_at(data: object, path: tuple[str | int, ...], fallback: object) -> object:
    """The value as parsed (a JSON conversion shows `.inf` and `.nan` as null)."""
    value = data
    for step in path:
        try:
            value = value[step]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return fallback
    return value


def _problems(failures: Iterator[_Failure]) -> list[PathProblem]:
    seen: dict[tuple[YamlPath, str], PathProblem] = {}
    missing: dict[YamlPath, list[str]] = {}  # one message per mapping, naming every key
    for failure in failures:
        if failure.path[:2] == ("policy", "approvals"):
            continue  # said by its own rules (reconciler.desired.approvals_rules), once
        if failure.keyword == "required" and "then" not in failure.schema_path:
            keys = missing.setdefault(failure.path, [])
            keys += [key for key in failure.expected if key not in failure.instance]
            continue
        for problem in _explain(failure):
            seen.setdefault((problem.path, problem.message), problem)
    for path, keys in missing.items():
        names = ", ".join(repr(key) for key in dict.fromkeys(keys))
        plural = "s" if len(keys) > 1 else ""
        message = f"missing required key{plural} {names} in {_name(path)}"
        seen.setdefault((path, message), PathProblem(path, message))
    return list(seen.values())


def _explain(failure: _Failure) -> Iterator[PathProblem]:
    path, instance, expected = failure.path, failure.instance, failure.expected
    name = _name(path)
    match failure.keyword:
        case "additionalProperties":
            known = list(failure.schema.get("properties", {}))
            for key in instance:
                if key not in known:
                    close = _close_matches(str(key), known, n=1, cutoff=0.75)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    expected = ", ".join(known)
                    message = f"unknown key {key!r} in {name}{hint}; known keys: {expected}"
                    yield PathProblem((*path, str(key)), message, at_key=True)
        case "required":  # only the Business rule's: the others are gathered by _problems
            for key in expected:
                if key not in instance:
                    yield PathProblem(path, f"a Business needs {key!r} (its legal name)")
        case "type":
            wanted = _TYPE_NAMES.get(str(expected), str(expected))
            yield PathProblem(path, f"{name} must be {wanted}, not {_describe(instance)}")
        case "enum" if path[-1:] == (COUNTRY,):
            if isinstance(instance, str) and _TWO_LETTERS.fullmatch(instance):
                yield PathProblem(path, unknown_country(instance))
            # otherwise the pattern's (or the type's) message says it already
        case "enum":
            allowed = ", ".join(str(value) for value in expected)
            yield PathProblem(path, f"{name} must be one of {allowed}; got {instance!r}")
        case "const":
            yield PathProblem(path, f"{name} must be {expected!r}; got {instance!r}")
        case "minLength" | "pattern" if expected in (1, r"\S"):
            yield PathProblem(path, f"{name} must not be empty or blank")
        case "maxLength":
            count = len(instance)
            yield PathProblem(
                path, f"{name} is longer than {counted(expected)} characters ({counted(count)})"
            )
        case "pattern" if path[-1:] == (COUNTRY,):
            message = f"{COUNTRY} must be two upper-case letters (ISO 3166-1); got {instance!r}"
            yield PathProblem(path, message + _did_you_mean(instance))
        case "pattern" if path[-1:] == ("name",):
            message = f"header name {instance!r} is not an HTTP token (letters, digits, -, _, ...)"
            yield PathProblem(path, message)
        case "pattern" if path[-1:] in (("moneyWindow",), ("moneyStuckAfter",)):
            message = (
                f"{path[-1]} must be a whole number of days or hours, such as '35d' or '24h'; "
                f"got {instance!r}"
            )
            yield PathProblem(path, message)
        case "oneOf" if path[-1:] == ("maxInactivations",) and _is_share(instance):
            yield PathProblem(path, f"maxInactivations {instance!r} is more than 100%")
        case "oneOf" if path[-1:] == ("prune",):
            message = f"prune must be true or false, not {_describe(instance)} (or all, to prune "
            message += "what the service made too)"
            yield PathProblem(path, message)
        case "oneOf" if path[-1:] == ("maxInactivations",):
            message = (
                "maxInactivations must be a non-negative integer (10) or a percentage "
                f"string ('25%'); got {instance!r}"
            )
            yield PathProblem(path, message)
        case "anyOf" if path[-1:] in (("amount",), ("maxPayout",), ("pay",)) or path[:1] == (
            "history",
        ):
            pass  # said by the payrun rules (payruns.amount_problem), from the text as written
        case "pattern" if path[-1:] == ("url",):
            pass  # said after interpolation, with the URL filled in (rules.webhook_url_problem)
        case "not" if path[-1:] == ("name",):
            pass  # said by the header rules (rules.REFUSED_HEADER_NAMES), with their other checks
        case "dependentRequired":
            for key, needed in expected.items():
                if key in instance:
                    for missing in needed:
                        if missing not in instance:
                            message = (
                                f"this file gives {key!r} but not {missing!r}: add `version: 1`"
                            )
                            yield PathProblem(path, message)
                    break
        case "maxItems":
            count = len(instance)
            yield PathProblem(
                path, f"{name} may hold at most {counted(expected)} items; it has {counted(count)}"
            )
        case "minItems":
            yield PathProblem(path, f"{name} must not be empty")
        case "uniqueItems":
            yield PathProblem(path, f"{name} holds the same item twice")
        case _:
            yield PathProblem(path, f"{name}: {failure.message}")


def unknown_country(code: str) -> str:
    """The message for two upper-case letters that are no ISO 3166-1 alpha-2 code."""
    return f"{code!r} is not an ISO 3166-1 alpha-2 country code" + _did_you_mean(code)


def _did_you_mean(text: object) -> str:
    code = suggested_code(text) if isinstance(text, str) else None
    return "" if code is None else f" (did you mean {code!r}?)"


def _is_share(value: object) -> bool:
    """A percentage the pattern refused only for being above 100%."""
    return isinstance(value, str) and _SHARE.fullmatch(value) is not None


def _name(path: YamlPath) -> str:
    """The field a path ends in, as a person would call it."""
    if not path:
        return "the top level"
    *parent, last = path
    if isinstance(last, int):
        return f"item {counted(last + 1)} of {_name(tuple(parent))}"
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


def _close_matches(key: str, known: list[str], **options: Any) -> list[str]:
    """difflib's suggestions, imported only for a file with an unknown key."""
    import difflib

    return difflib.get_close_matches(key, known, **options)
