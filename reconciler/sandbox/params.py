"""Query and path parameters: integers only, anything else a 400 that names the parameter."""

from __future__ import annotations

import re
from collections.abc import Mapping

from starlette.requests import Request

from reconciler.sandbox.problems import FieldError, Problem, validation_problem

#: Up to 19 digits: every id and count SQLite holds, and no number Python would refuse to read.
_INTEGER = re.compile(r"-?[0-9]{1,19}")
_DIGITS = re.compile(r"-?[0-9]+")
_MAX_ID = 2**63 - 1  # SQLite's integer range


def query_integer(params: Mapping[str, str], name: str) -> int | None:
    """An optional integer query parameter; anything but an integer is a 400."""
    raw = params.get(name)
    if raw is None:
        return None
    text = raw.strip()
    if _DIGITS.fullmatch(text) and not _INTEGER.fullmatch(text):
        # Beyond any page or size, and never converted (4,300 digits would be refused): said
        # as the largest number, which each parameter's own range check then judges.
        return -(2**63) if text.startswith("-") else 2**63
    if not _INTEGER.fullmatch(text):
        raise validation_problem(
            [FieldError(f"must be an integer, got {raw[:40]!r}", field=name)], what="the query"
        )
    return int(text)


def path_id(request: Request, name: str, *, what: str) -> int:
    """An id from the path: 400 when not an integer, 404 when it cannot name anything."""
    raw = request.path_params[name]
    if _DIGITS.fullmatch(raw) and not _INTEGER.fullmatch(raw):
        raise Problem(404, f"{what} {raw[:40]}... not found")  # more digits than any id
    if not _INTEGER.fullmatch(raw):
        raise validation_problem(
            [FieldError(f"must be an integer, got {raw[:40]!r}", field=name)], what="the path"
        )
    value = int(raw)
    if not 0 < value <= _MAX_ID:
        raise Problem(404, f"{what} {raw[:40]} not found")
    return value
