"""The second layer: what the schema cannot say (real countries and emails, duplicates, scope).

Every check reads plain values (the parsed file) and answers `PathProblem`s; nothing here knows
where a value was written, so the checks stay small and the locating happens once, at the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from reconciler import worker_fields
from reconciler.desired.ignore import parse_day
from reconciler.desired.lookalikes import look_alike_problems
from reconciler.desired.problems import PathProblem, YamlPath
from reconciler.desired.values import FileValues
from reconciler.hosts import is_loopback
from reconciler.identity import email_key, text_key
from reconciler.text_safety import control_problem, external_id_problem
from reconciler.worker_fields import EMAIL, ENDED, EXTERNAL_ID, REHIRE, Check, WorkerFields

PLACEHOLDER = "TODO(export)"
#: The most characters the schema lets a text field of a worker hold.
_MAX_TEXT = 255
#: Header names the service refuses (its own framing headers), in lower case.
REFUSED_HEADER_NAMES = frozenset({"host", "content-length", "content-type", "transfer-encoding"})
#: Keys that may appear in one file only when a directory is merged.
SINGLE_FILE_KEYS = ("version", "scope", "policy", "webhook")

# An unquoted local part of plain characters: email-validator checks nothing more in it than
# its length, so only the domain needs the (slower) full check, once per domain.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_PLAIN_LOCAL_PART = re.compile(rf"{_ATEXT}(?:\.{_ATEXT})*")
_MAX_LOCAL_PART = 64
_MAX_ADDRESS = 254

# A domain email-validator accepts as it is, known without loading it (a sixth of a small file's
# `validate`): dot-separated labels of ASCII letters and digits with single inner hyphens (no
# Punycode or other reserved "ab--" label), a top-level label of letters, "a@" and the domain
# within the address's 254 characters, and no special-use name (email-validator's own list, kept
# equal to it by tests/desired/test_desired_rules.py). Any other domain is email-validator's.
_PLAIN_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PLAIN_DOMAIN = re.compile(rf"(?:{_PLAIN_LABEL}\.)+[A-Za-z]{{2,63}}")
_MAX_PLAIN_DOMAIN = _MAX_ADDRESS - len("a@")
SPECIAL_USE_DOMAINS = frozenset({"arpa", "invalid", "local", "localhost", "onion", "test"})


def file_problems(values: FileValues, has_placeholder: bool) -> list[PathProblem]:
    """The meaning checks that need one file only."""
    data = values.data
    problems: list[PathProblem] = []
    workers = data.get("workers")
    if isinstance(workers, list):
        checks = _checks(worker_fields.WORKER_FIELDS)
        for index, worker in enumerate(workers):
            if isinstance(worker, dict):
                problems += _worker_problems(worker, ("workers", index), checks)
    webhook = data.get("webhook")
    if isinstance(webhook, dict):
        problems += _header_problems(values.name, webhook.get("headers"))
    problems += _number_problems(data)
    problems += ignore_problems(data)
    if has_placeholder:
        problems += [
            PathProblem(path, f"an unfilled {PLACEHOLDER} placeholder: write the real value")
            for path in _placeholder_paths(data, ())
        ]
    return problems


#: Larger than any account: a count above it is a typo, and a number with thousands of
#: digits would only cost time to read.
MAX_COUNT = 10**9


def _number_problems(data: dict[Any, Any]) -> Iterator[PathProblem]:
    """Numbers written as fractions where a whole number belongs, and counts beyond reason."""
    version = data.get("version")
    if isinstance(version, float):
        yield PathProblem(("version",), f"version must be the whole number 1; got {version!r}")
    policy = data.get("policy")
    limit = policy.get("maxInactivations") if isinstance(policy, dict) else None
    path = ("policy", "maxInactivations")
    if isinstance(limit, float) and limit.is_integer():
        yield PathProblem(path, f"maxInactivations must be a whole number; got {limit!r}")
    elif isinstance(limit, int) and not isinstance(limit, bool) and limit > MAX_COUNT:
        yield PathProblem(path, f"maxInactivations is more than {MAX_COUNT:,}: write a count")


def ignore_problems(data: dict[Any, Any]) -> Iterator[PathProblem]:
    """An ignore rule's `until` that is no day of the calendar (the schema checked its shape)."""
    rules = data.get("ignore")
    for index, rule in enumerate(rules if isinstance(rules, list) else ()):
        until = rule.get("until") if isinstance(rule, dict) else None
        if isinstance(until, str):
            try:
                parse_day(until)
            except ValueError:
                message = f"until {until!r} is not a day of the calendar"
                yield PathProblem(("ignore", index, "until"), message)


@cache
def _checks(table: WorkerFields) -> dict[Check, tuple[str, ...]]:
    """The keys each text rule (`worker_fields.Check`) applies to."""
    return {check: tuple(item.key for item in table if item.check is check) for check in Check}


def _worker_problems(
    worker: dict[Any, Any], path: YamlPath, checks: dict[Check, tuple[str, ...]]
) -> list[PathProblem]:
    # the country: the schema's enum of every ISO 3166-1 code says it (desired/schema.py)
    problems: list[PathProblem] = []
    get = worker.get
    external_id = get(EXTERNAL_ID)
    if isinstance(external_id, str) and (reason := external_id_problem(external_id)):
        problems.append(PathProblem((*path, EXTERNAL_ID), f"externalId {external_id!r} {reason}"))
    for field in checks[Check.LINE]:  # shown as it is: no control character may hide in it
        text = get(field)
        if type(text) is str and text.isascii() and text.isprintable():
            continue  # nearly every value: checked in C, without a call
        if isinstance(text, str) and (reason := control_problem(text)):
            problems.append(PathProblem((*path, field), f"{field} {reason}"))
    for field in checks[Check.BODY]:  # an e-mail's body: lines and tabs are its own
        text = get(field)
        if isinstance(text, str) and (reason := control_problem(text, allowed="\n\t")):
            problems.append(PathProblem((*path, field), f"{field} {reason}"))
    if get(ENDED) is not None or get(REHIRE) is not None:
        problems += _day_problems(worker, path)
    for field in checks[Check.EMAIL]:
        email = get(field)
        if isinstance(email, str) and email.strip() and PLACEHOLDER not in email:
            reason = email_problem(email)
            if reason is not None:
                problems.append(PathProblem((*path, field), f"invalid email {email!r}: {reason}"))
    return problems


def _day_problems(worker: dict[Any, Any], path: YamlPath) -> Iterator[PathProblem]:
    """A worker's `ended` or `rehire` that is no day of the calendar (the schema checked its
    shape), or both: a worker hired again has no end (its `ended:` is removed)."""
    for key in (ENDED, REHIRE):
        day = worker.get(key)
        if isinstance(day, str):
            try:
                parse_day(day)
            except ValueError:
                yield PathProblem((*path, key), f"{key} {day!r} is not a day of the calendar")
    if worker.get(ENDED) is not None and worker.get(REHIRE) is not None:
        yield PathProblem(
            (*path, REHIRE),
            "a worker says both ended and rehire: a worker hired again has no end; remove "
            "`ended:` to invite it again, or `rehire:` to keep it ended",
        )


def worker_value_problem(field: str, value: str) -> str | None:
    """Why a worker's `field` in a file cannot hold `value` (what the schema and `validate`
    refuse in it), or None: `adopt` asks before writing a value the service's screens took."""
    if not value.strip():
        return "is empty or blank"
    if len(value) > _MAX_TEXT:
        return f"is longer than {_MAX_TEXT} characters"
    item = worker_fields.WORKER_FIELDS.by_key.get(field)
    check = Check.NONE if item is None else item.check
    if check is Check.LINE and (reason := control_problem(value)):
        return reason
    if check is Check.EMAIL and (reason := email_problem(value)):
        return f"is not a valid email: {reason}"
    return None


def email_problem(address: str) -> str | None:
    """Why `address` is not a valid email (no DNS look-up), or None when it is."""
    local, at, domain = address.rpartition("@")
    plain = (
        at
        and len(local) <= _MAX_LOCAL_PART
        and len(address) <= _MAX_ADDRESS
        and _PLAIN_LOCAL_PART.fullmatch(local)
    )
    if plain:
        return _domain_problem(domain)
    return _address_problem(address)


@cache
def _domain_problem(domain: str) -> str | None:
    if plain_domain(domain):
        return None
    return _address_problem(f"a@{domain}")


def plain_domain(domain: str) -> bool:
    """Whether `domain` is one email-validator accepts without a doubt (see `_PLAIN_DOMAIN`)."""
    return (
        len(domain) <= _MAX_PLAIN_DOMAIN
        and "--" not in domain
        and _PLAIN_DOMAIN.fullmatch(domain) is not None
        and domain.rpartition(".")[2].lower() not in SPECIAL_USE_DOMAINS
    )


def _address_problem(address: str) -> str | None:
    from email_validator import EmailNotValidError, validate_email

    try:
        validate_email(address, check_deliverability=False)
    except EmailNotValidError as error:
        return str(error)
    return None


def _header_problems(name_of_file: str, headers: object) -> Iterator[PathProblem]:
    if not isinstance(headers, list):
        return
    first_by_name: dict[str, int] = {}
    for index, header in enumerate(headers):
        name = header.get("name") if isinstance(header, dict) else None
        if not isinstance(name, str):
            continue
        path = ("webhook", "headers", index, "name")
        if name.lower() in REFUSED_HEADER_NAMES:
            yield PathProblem(path, f"the service sets the {name} header itself: remove it")
        first = first_by_name.setdefault(name.lower(), index)
        if first != index:
            other = (name_of_file, ("webhook", "headers", first, "name"))
            yield PathProblem(path, f"header {name!r} is given twice (ignoring case)", other=other)


def _placeholder_paths(value: object, path: YamlPath) -> Iterator[YamlPath]:
    """The paths of the strings holding the placeholder, under a mapping or a list."""
    if isinstance(value, dict):
        items: Iterable[tuple[str | int, object]] = (
            (str(key), item) for key, item in value.items()
        )
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        if isinstance(item, str):  # strings inline: a call per string would double the cost
            if PLACEHOLDER in item:
                yield (*path, key)
        elif isinstance(item, dict | list):
            yield from _placeholder_paths(item, (*path, key))


def webhook_url_problem(url: str, shown: str | None = None) -> str | None:
    """Why the service would refuse this webhook URL, or None (saying it as `shown`, masked)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as error:
        return f"not a valid URL: {error}"
    if not host or parts.scheme not in ("https", "http"):
        return f"the webhook url must be an absolute https:// URL; got {shown or url!r}"
    if parts.scheme == "http" and not is_loopback(host):
        return (
            "plain http:// is allowed only to a loopback host (localhost, 127.0.0.1, ::1): "
            "use https"
        )
    return None


def merge_problems(
    files: list[FileValues], every_file_read: bool = True
) -> list[tuple[str, PathProblem]]:
    """The checks across every file of a directory: each answer names the file it is in.

    When some file could not be read, a missing `version` may be in it: that goes unsaid.
    """
    owner: dict[str, str] = {}  # single-file key -> the file that gives it
    problems: list[tuple[str, PathProblem]] = []
    for values in files:
        for key in SINGLE_FILE_KEYS:
            if key not in values.data:
                continue
            owner_name = owner.setdefault(key, values.name)
            if owner_name != values.name:
                other = (owner_name, (key,))
                message = f"{key!r} may be given in one file only"
                problems.append((values.name, PathProblem((key,), message, True, other)))
    # A file with settings but no version is the schema's to say (dependentRequired).
    settings_given = any(key in owner for key in SINGLE_FILE_KEYS)
    if files and every_file_read and not settings_given:
        message = "no file gives the format version: add `version: 1`"
        problems.append((files[0].name, PathProblem((), message)))
    problems += look_alike_problems(files)
    return problems + _worker_merge_problems(files, _scope_prefix(files, owner.get("scope")))


def _worker_merge_problems(
    files: list[FileValues], prefix: str | None
) -> list[tuple[str, PathProblem]]:
    """Duplicate externalIds and emails across all files, and workers outside the scope."""
    problems: list[tuple[str, PathProblem]] = []
    # The first place of each externalId and email, as the file's number and the worker's index
    # in one int (`_SPAN`): no tuple is made per worker; places are only made for a repeat.
    first_ids: dict[str, int] = {}
    first_emails: dict[str, int] = {}

    def place(first: int, field: str) -> tuple[str, YamlPath]:
        number, index = divmod(first, _SPAN)
        return files[number].name, ("workers", index, field)

    for number, values in enumerate(files):
        name = values.name
        workers = values.data.get("workers")
        for index, worker in enumerate(workers if isinstance(workers, list) else []):
            if not isinstance(worker, dict):
                continue
            here = number * _SPAN + index
            external_id, email = worker.get(EXTERNAL_ID), worker.get(EMAIL)
            if isinstance(external_id, str):
                first = first_ids.setdefault(text_key(external_id), here)
                if first != here:
                    message = f"externalId {external_id!r} is given twice"
                    path: YamlPath = ("workers", index, "externalId")
                    other = place(first, "externalId")
                    problems.append((name, PathProblem(path, message, other=other)))
                if prefix is not None and not external_id.startswith(prefix):
                    message = (
                        f"externalId {external_id!r} is outside the scope: "
                        f"scope.externalIdPrefix is {prefix!r}"
                    )
                    problems.append((name, PathProblem(("workers", index, "externalId"), message)))
            if isinstance(email, str):
                first = first_emails.setdefault(email_key(email), here)
                if first != here:
                    message = f"{EMAIL} {email!r} is given twice (as one mailbox)"
                    other = place(first, EMAIL)
                    path = ("workers", index, EMAIL)
                    problems.append((name, PathProblem(path, message, other=other)))
    return problems


#: More workers than one file holds: a worker's place is `file number * _SPAN + index`.
_SPAN = 1 << 40


def _scope_prefix(files: list[FileValues], name: str | None) -> str | None:
    for values in files:
        if values.name == name:
            scope = values.data.get("scope")
            prefix = scope.get("externalIdPrefix") if isinstance(scope, dict) else None
            return prefix if isinstance(prefix, str) and prefix else None
    return None
