"""Reading a request's JSON body: bounded, strict, and every failure a 400 that says why."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from starlette.requests import Request

from reconciler.sandbox.problems import Problem

#: Far above any valid body (1,000 payments of 255-character fields), far below a memory risk.
MAX_BODY_BYTES = 4 * 1024 * 1024


#: Far more digits than any id, count or amount (whose own checks say what is too large), and
#: below the 4,300 digits Python refuses to convert: a longer number is refused unread.
MAX_DIGITS = 1000


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a number of {len(text)} digits is larger than any the service takes")
    return int(text)


def _fraction(text: str) -> Decimal:
    if len(text) > MAX_DIGITS + 10:
        raise ValueError(f"a number of {len(text)} characters is larger than any the service takes")
    return Decimal(text)


def _lone_surrogate(value: Any) -> bool:
    """Whether any string in the body holds half of a UTF-16 pair (`\\ud800`): not text."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii() and any("\ud800" <= char <= "\udfff" for char in item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


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
        value = json.loads(
            text, parse_float=_fraction, parse_int=_integer, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as error:
        raise Problem(
            400, f"malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except ValueError as error:
        raise Problem(400, f"malformed JSON: {error}") from None
    except RecursionError:
        raise Problem(400, "malformed JSON: nested too deeply") from None
    if _lone_surrogate(value):
        raise Problem(400, "malformed JSON: a string holds a lone UTF-16 surrogate, not text")
    return value
