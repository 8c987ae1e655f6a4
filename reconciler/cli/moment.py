"""A date or timestamp on the command line (`--since`, `--money-since`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from reconciler.service.decode import DecodeError, parse_timestamp


class Moment(click.ParamType):  # type: ignore[type-arg]  # generic in newer click only
    """An ISO 8601 date or timestamp; without an offset it is UTC."""

    name = "TIMESTAMP"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        try:
            moment = parse_timestamp(f"{text}T00:00:00Z" if len(text) == 10 else text)
        except DecodeError:
            self.fail(f"{value!r} is not an ISO 8601 date or timestamp", param, ctx)
        try:  # the service takes UTC: a moment whose UTC falls outside years 1 to 9999 has none
            return moment.astimezone(UTC)
        except OverflowError:
            self.fail(
                f"{value!r} is out of range: in UTC it falls outside the years 1 to 9999",
                param,
                ctx,
            )
