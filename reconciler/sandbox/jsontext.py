"""JSON answers whose numbers are written exactly: money as `10000.00`, times to the nanosecond.

The standard encoder knows no Decimal and would turn one into a float (`10000.0`, or worse, a
rounded `1698708987.5446339`). Here a Decimal is written as its own digits, and a `RawJSON` is
written as the JSON text it already is (an event body stored as sent).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from starlette.responses import Response


@dataclass(frozen=True, slots=True)
class RawJSON:
    """JSON text to be written as it is."""

    text: str


def dumps(value: Any) -> str:
    """`value` as compact JSON text; Decimals keep their digits, `RawJSON` goes in verbatim."""
    parts: list[str] = []
    _write(value, parts.append)
    return "".join(parts)


def _write(value: Any, out: Callable[[str], object]) -> None:
    if isinstance(value, RawJSON):
        out(value.text)
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} cannot be written as JSON")
        out(format(value, "f"))
    elif isinstance(value, Mapping):
        out("{")
        for position, (key, item) in enumerate(value.items()):
            out(("," if position else "") + json.dumps(str(key), ensure_ascii=False) + ":")
            _write(item, out)
        out("}")
    elif isinstance(value, list | tuple):
        out("[")
        for position, item in enumerate(value):
            if position:
                out(",")
            _write(item, out)
        out("]")
    else:  # str, int, bool, None (floats never reach here: money is Decimal)
        out(json.dumps(value, ensure_ascii=False))


class JSONText(Response):
    """A JSON answer written by `dumps`."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content).encode("utf-8")
