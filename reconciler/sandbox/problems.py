"""Errors as RFC 9457 `application/problem+json` answers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus

from starlette.responses import Response

PROBLEM_JSON = "application/problem+json"


@dataclass(frozen=True, slots=True)
class FieldError:
    """One thing wrong in a body: where (item index, field) and what."""

    message: str
    field: str | None = None
    index: int | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.index is not None:
            out["index"] = self.index
        if self.field is not None:
            out["field"] = self.field
        out["message"] = self.message
        return out


class Problem(Exception):
    """Raised anywhere in a request to answer with a problem+json body."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        errors: Sequence[FieldError] = (),
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = tuple(errors)
        self.headers = dict(headers or {})


def title_of(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def problem_response(
    status: int,
    detail: str,
    *,
    errors: Sequence[FieldError] = (),
    headers: Mapping[str, str] | None = None,
) -> Response:
    """The problem+json answer for `status`."""
    body: dict[str, object] = {
        "type": "about:blank",
        "title": title_of(status),
        "status": status,
        "detail": detail,
    }
    if errors:
        body["errors"] = [error.to_json() for error in errors]
    return Response(
        json.dumps(body, ensure_ascii=False),
        status_code=status,
        headers=dict(headers or {}),
        media_type=PROBLEM_JSON,
    )


def validation_problem(errors: Sequence[FieldError], what: str = "the request body") -> Problem:
    """A 400 listing every error found, with a detail that names the first."""
    first = errors[0]
    where = []
    if first.index is not None:
        where.append(f"item {first.index}")
    if first.field is not None:
        where.append(first.field)
    place = f" ({', '.join(where)})" if where else ""
    more = f"; {len(errors) - 1} more in errors" if len(errors) > 1 else ""
    return Problem(400, f"{what} is invalid: {first.message}{place}{more}", errors=errors)
