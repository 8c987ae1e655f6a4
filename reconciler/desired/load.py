"""`load_desired_state`: a file or a directory in, a validated `DesiredState` out.

The order of work keeps the common case fast: parse every file with the fast parser, run both
layers of checks on plain values, and only when something is wrong pay for a marked pass over
the files concerned to say where each problem was written.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import yaml_rs

from reconciler.desired.approvals_rules import approvals_problems, build_approvals
from reconciler.desired.fill import EveryName, FilledWebhook, fill_webhook
from reconciler.desired.history import build_history
from reconciler.desired.ignore import build_rules
from reconciler.desired.interpolate import Confined
from reconciler.desired.keys import NonTextKey, key_problems
from reconciler.desired.model import (
    DEFAULT_INACTIVATION_LIMIT,
    DesiredState,
    DesiredWebhook,
    DesiredWorker,
    InactivationLimit,
    Location,
    Policy,
)
from reconciler.desired.nodes import NodeBudget
from reconciler.desired.parse import UNPARSED, Marks, scan
from reconciler.desired.parse import parse as parse_yaml
from reconciler.desired.payruns import (
    EscapedText,
    NumberText,
    amount_paths,
    build_payruns,
    parse_amount,
    payrun_problems,
    with_number_texts,
)
from reconciler.desired.problems import (
    KEPT,
    InvalidDesiredState,
    PathProblem,
    Problem,
    YamlPath,
)
from reconciler.desired.rules import PLACEHOLDER, file_problems, merge_problems
from reconciler.desired.schema import schema_problems
from reconciler.desired.seeds import seed_problem
from reconciler.desired.source import SourceText, read_sources
from reconciler.desired.values import FileValues


def load_desired_state(
    path: str | Path,
    environ: Mapping[str, str] | None = None,
    *,
    read_variables: bool = True,
    credentials: Iterable[str] = (),
    digests: bool = False,
) -> DesiredState:
    """Read, validate and model the desired state at `path` (a file or a directory).

    `environ` fills `${VAR}` references (default: the process environment). With
    `read_variables` False (`validate --no-env`, the pre-commit hook) the references are checked
    by name only and no value is read: a webhook value built from one is then not checked, and
    the model keeps its template where the value would be, so such a state is for reporting
    only, never for a plan. `credentials` are values no variable may hold (the token, say). Raises
    `InvalidDesiredState` listing every problem, each with its file, line and column.
    With `digests` the state records the SHA-256 of each file's bytes as read (`digests`),
    which a saved plan's review is bound to.
    """
    environ = os.environ if environ is None else environ
    if not read_variables:
        environ = EveryName(environ if isinstance(environ, Confined) else None)
    sources, problems = read_sources(path, digests=digests)
    files: list[FileValues] = []
    pending: dict[str, list[PathProblem]] = defaultdict(list)
    budget = NodeBudget()  # YAML nodes, in all the files
    for source in sources:
        data, parse_problems = parse_yaml(source, budget)
        if data is UNPARSED:
            problems += parse_problems
            continue
        if (seed := seed_problem(source, data)) is not None:
            problems.append(seed)  # one problem for the file, not one per seed key
            continue
        try:
            pending[source.name] += schema_problems(data)
        except NonTextKey:  # nothing else can read such a file: say where each such key is
            problems += key_problems(source) or [_non_text_key(source)]
            continue
        if isinstance(data, dict):
            pending[source.name] += _read_number_texts(source, data)
            ascii_text = source.text.isascii() and "\\" not in source.text
            values = FileValues(source.name, data, ascii_text)
            files.append(values)
            pending[source.name] += file_problems(values, PLACEHOLDER in source.text)
            pending[source.name] += _approvals_problems(data)
    every_file_read = not problems and len(files) == len(sources)
    for name, problem in [*merge_problems(files, every_file_read), *payrun_problems(files)]:
        pending[name].append(problem)
    webhook, webhook_problems = fill_webhook(files, environ, credentials)
    for name, problem in webhook_problems:
        pending[name].append(problem)
    pending = {name: found for name, found in pending.items() if found}
    if problems or pending:
        total = len(problems) + sum(len(found) for found in pending.values())
        at_least = any(p.uncounted for found in pending.values() for p in found)
        at_least |= any(problem.uncounted for problem in problems)
        located = _locate(sources, _first(pending, KEPT))
        raise InvalidDesiredState([*problems, *located], total, at_least=at_least)
    return _build(files, webhook, tuple((source.name, source.sha256) for source in sources))


def _approvals_problems(data: dict[object, object]) -> list[PathProblem]:
    """`policy.approvals`, checked by its own rules (`reconciler.desired.approvals`)."""
    policy = data.get("policy")
    if not isinstance(policy, dict) or "approvals" not in policy:
        return []
    return list(approvals_problems(policy["approvals"], ("policy", "approvals")))


def _read_number_texts(source: SourceText, data: dict[object, object]) -> list[PathProblem]:
    """Amounts written as YAML numbers are read from their text (`0x10` is not 16.00), and a
    quoted amount written with escapes (`"1\\x30\\x30"`) is not taken for its digits: one marked
    pass, only over a file that writes an amount unquoted, or has a backslash anywhere.

    The text comes from the other parser's events: each is checked to read, as YAML 1.2, as the
    very value the values' parser made of it, so an amount cannot be one number to the plan and
    another in its text (the characters the two read differently are refused before; this
    makes sure no other way remains)."""
    paths = amount_paths(data, strings="\\" in source.text)
    if not paths:
        return []
    wanted = {prefix for path in paths for prefix in _prefixes(path)}
    marks = scan(source, wanted, everything=False).marks
    texts: dict[YamlPath, str] = {}
    problems: list[PathProblem] = []
    for path in paths:
        found = marks.get(path)
        if found is None or not found.text:
            continue  # a number the scan could not place keeps its value, which no rule accepts
        value = _value_at(data, path)
        if not _reads_as(found, value):
            problems.append(PathProblem(path, _TWO_READINGS))
        elif found.escaped:
            texts[path] = EscapedText(found.text)
        elif value.__class__ is not str:
            texts[path] = NumberText(found.text)
    with_number_texts(data, texts)
    return problems


_TWO_READINGS = (
    "this value reads one way to the YAML parser that reads values and another way to the one "
    "that reads its text: the file is refused rather than guessed at (rewrite the line plainly)"
)


def _reads_as(found: Marks, value: object) -> bool:
    """Whether the text PyYAML's events found is the value yaml-rs read (YAML 1.2)."""
    text = found.text or ""
    if isinstance(value, str):
        return text == value
    try:
        read = yaml_rs.loads(text)
    except yaml_rs.YAMLDecodeError:
        return False
    both_nan = read != read and value != value  # NaN is not itself
    return read.__class__ is value.__class__ and (read == value or both_nan)


def _value_at(data: object, path: YamlPath) -> object:
    for step in path:
        data = data[step]  # type: ignore[index]
    return data


def _first(pending: dict[str, list[PathProblem]], most: int) -> dict[str, list[PathProblem]]:
    """At most `most` problems, in file order, to locate (a file of 100,000 broken workers
    would otherwise cost a mark for each)."""
    kept: dict[str, list[PathProblem]] = {}
    for name, found in pending.items():
        if most <= 0:
            break
        if len(found) > most:  # the first in the file: paths in order, numbers as numbers
            found = sorted(found, key=lambda problem: _path_order(problem.path))[:most]
        kept[name] = found
        most -= len(found)
    return kept


def _path_order(path: YamlPath) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, part) if isinstance(part, int) else (1, part) for part in path)


def _locate(sources: list[SourceText], pending: dict[str, list[PathProblem]]) -> list[Problem]:
    """Turn paths into lines and columns: one marked pass over each file concerned."""
    wanted: dict[str, set[YamlPath]] = defaultdict(set)
    for name, found in pending.items():
        for problem in found:
            wanted[name].update(_prefixes(problem.path))
            if problem.other is not None:
                wanted[problem.other[0]].update(_prefixes(problem.other[1]))
    by_name = {source.name: source for source in sources}
    marks = {
        name: scan(by_name[name], paths, everything=False).marks for name, paths in wanted.items()
    }

    def where(name: str, path: YamlPath, at_key: bool = False) -> Location:
        found = marks.get(name, {})
        key = found[path].key if path in found else None
        if at_key and key is not None:
            return Location(name, *key)
        while path and path not in found:
            path = path[:-1]
        line, column = found[path].value if path in found else (1, 1)
        return Location(name, line, column)

    located = []
    for name, found in pending.items():
        for problem in found:
            message = problem.message
            if problem.other is not None:
                other = where(*problem.other, at_key=problem.at_key)
                place = f"line {other.line}" if other.file == name else str(other)
                message = f"{message}: first at {place}"
            located.append(Problem(where(name, problem.path, problem.at_key), message))
    return located


def _prefixes(path: YamlPath) -> Iterable[YamlPath]:
    return (path[:length] for length in range(len(path) + 1))


def _build(
    files: list[FileValues], filled: FilledWebhook | None, digests: tuple[tuple[str, str], ...]
) -> DesiredState:
    """The model of values that passed every check.

    Locations stay unset: finding them costs a second, marked parse that only a file with
    problems pays for (the plan identifies workers by externalId, not by line).
    """
    workers: list[DesiredWorker] = []
    webhook = None
    scope_prefix = None
    policy = Policy()
    for values in files:
        data = values.data
        ascii_text = values.ascii_text
        workers += [
            DesiredWorker.from_fields(item, ascii_text=ascii_text)
            for item in data.get("workers", ())
        ]
        if "scope" in data:
            scope_prefix = data["scope"].get("externalIdPrefix")
        if "policy" in data:
            max_payout = data["policy"].get("maxPayout")
            policy = Policy(
                prune=bool(data["policy"].get("prune", True)),
                prune_all=data["policy"].get("prune") == "all",
                max_inactivations=_limit(data["policy"].get("maxInactivations")),
                max_payout=None if max_payout is None else parse_amount(max_payout),
                money_window=duration(data["policy"].get("moneyWindow")),
                money_stuck_after=duration(data["policy"].get("moneyStuckAfter")),
                approvals=build_approvals(data["policy"].get("approvals")),
            )
        if filled is not None and filled.name == values.name:
            webhook = DesiredWebhook(
                url=filled.url,
                headers=filled.headers,
                event_types=frozenset(data["webhook"]["event_types"]),
                enabled=data["webhook"].get("enabled", True),
            )
    return DesiredState(
        workers=tuple(workers),
        webhook=webhook,
        scope_prefix=scope_prefix,
        policy=policy,
        sources=tuple(values.name for values in files),
        payruns=build_payruns(files),
        digests=digests,
        ignore=build_rules(values.data for values in files),
        history=build_history(values.data for values in files),
    )


def _limit(value: object) -> InactivationLimit:
    if value is None:
        return DEFAULT_INACTIVATION_LIMIT
    if isinstance(value, str):
        return InactivationLimit(Decimal(value.removesuffix("%")), is_share=True)
    return InactivationLimit(Decimal(str(value)), is_share=False)


def duration(text: str | None) -> timedelta | None:
    """`35d` or `12h` (the schema's pattern checked it) as a timedelta; None stays None."""
    if text is None:
        return None
    count = int(text[:-1])
    return timedelta(days=count) if text.endswith("d") else timedelta(hours=count)


def _non_text_key(source: SourceText) -> Problem:
    """The fallback when no event pass finds the key the fast parser read as not text."""
    message = "a key that is not text: every key of a desired-state file is a field name"
    return Problem(Location(source.name, 1, 1), message)
