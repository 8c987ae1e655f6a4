"""Reading a request's JSON body: bounded, strict, and every failure a 400 that says why."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from starlette.requests import Request

from reconciler.sandbox.problems import Problem

#: Far above any valid body (1,000 payments of 255-character fields), far below a memory risk.
MAX_BODY_BYTES = 4 * 1024 * 1024


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_json(request: Request, *, optional: bool = False) -> Any:
    """The parsed body; numbers with a fraction come back as `Decimal`, never float.

    An empty body is a 400, or `{}` when the body is `optional`.
    """
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise Problem(413, f"the request body is larger than {MAX_BODY_BYTES} bytes")
    if not body.strip():
        if optional:
            return {}
        raise Problem(400, "the request body is empty; a JSON body is required")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Problem(400, f"the request body is not UTF-8 (byte {error.start})") from None
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise Problem(
            400, f"malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except ValueError as error:
        raise Problem(400, f"malformed JSON: {error}") from None
    except RecursionError:
        raise Problem(400, "malformed JSON: nested too deeply") from None
