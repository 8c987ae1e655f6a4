"""Query and path parameters: integers only, anything else a 400 that names the parameter."""

from __future__ import annotations

import re
from collections.abc import Mapping

from starlette.requests import Request

from reconciler.sandbox.problems import FieldError, Problem, validation_problem

_INTEGER = re.compile(r"-?[0-9]+")
_MAX_ID = 2**63 - 1  # SQLite's integer range


def query_integer(params: Mapping[str, str], name: str) -> int | None:
    """An optional integer query parameter; anything but an integer is a 400."""
    raw = params.get(name)
    if raw is None:
        return None
    if not _INTEGER.fullmatch(raw.strip()):
        raise validation_problem(
            [FieldError(f"must be an integer, got {raw[:40]!r}", field=name)],
            what="the query",
        )
    return int(raw)


def path_id(request: Request, name: str, *, what: str) -> int:
    """An id from the path: 400 when not an integer, 404 when it cannot name anything."""
    raw = request.path_params[name]
    if not _INTEGER.fullmatch(raw):
        raise validation_problem(
            [FieldError(f"must be an integer, got {raw[:40]!r}", field=name)], what="the path"
        )
    value = int(raw)
    if not 0 < value <= _MAX_ID:
        raise Problem(404, f"{what} {raw[:40]} not found")
    return value
