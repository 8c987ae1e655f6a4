"""The one interface every plan output implements, and the helpers they share."""

from __future__ import annotations

import json
from typing import Any, Protocol

from reconciler.plan.model import Plan
from reconciler.secrets import MASK, Secret
from reconciler.text_safety import escape_controls, escape_disguised, unicode_escape

FORMATS = ("text", "json", "markdown")


class Renderer(Protocol):
    """Turns a plan into the text of one output format."""

    def render(self, plan: Plan) -> str: ...


def show(value: Any) -> str:
    """A value as a plan shows it: JSON-like, secrets masked, control characters escaped, and
    so is every character that prints as nothing, reorders the text (a bidi override) or is
    white space other than a space (`_visible`): `text_safety.disguised`."""
    if isinstance(value, Secret):  # a header value is all mask; a URL shows its literal parts
        shown = str(value)
        return MASK if shown == MASK else _visible(json.dumps(shown, ensure_ascii=False))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(show(item) for item in value) + "]"
    return _visible(json.dumps(value, ensure_ascii=False))


def _visible(dumped: str) -> str:
    """JSON text with its hidden characters escaped as JSON escapes them (`\\u202e`): a
    worker's name holding U+202E or U+200B drew other text in a plan than the file holds."""
    return escape_disguised(dumped, _json_escape)


def _json_escape(char: str) -> str:
    return json.dumps(char)[1:-1]


def show_paid(text: str) -> str:
    """A payment's text (description, payee) as a plan shows it: a JSON string in ASCII, every
    other character escaped (`\\u00e9` for é, a backslash as `\\\\`), so a look-alike or an
    invisible character is seen, and no escape can be mistaken for the character it names."""
    return json.dumps(text, ensure_ascii=True)


def show_address(address: str) -> str:
    """A worker's address as a plan shows it: every non-ASCII character of its externalId
    escaped (`worker["\\u0410BC-1"]`) and a backslash doubled, as a payment's text is, so two
    ids that look alike (a Latin `ABC-1` and a Cyrillic `АВС-1`) read apart."""
    if address.isascii() and "\\" not in address:
        return address
    return "".join(
        "\\\\" if char == "\\" else char if char.isascii() else unicode_escape(char)
        for char in address
    )


def clean(text: str) -> str:
    """Free text (reasons, warnings) with control characters made visible instead of acted on,
    and every character that prints as nothing, reorders the text (a bidi override) or is white
    space other than a space escaped as `\\uXXXX`: a reason quoting a name or a description
    shows what the file or the service holds, as `show` does for values."""
    return escape_disguised(escape_controls(text))


def jsonable(value: Any) -> Any:
    """A resource ready for `json.dumps`, every secret replaced by the mask."""
    if isinstance(value, Secret):
        return str(value)
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value


def strict_headline(plan: Plan) -> str:
    """The headline under `drift --strict`, where unmanaged workers count as drift too."""
    return plan.headline_for(strict=True)
