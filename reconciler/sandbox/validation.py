"""Reading the fields of a JSON object, collecting every error rather than stopping at the first."""

from __future__ import annotations

import re
from collections.abc import Collection
from decimal import Decimal
from functools import lru_cache
from typing import Any

import pycountry
from email_validator import EmailNotValidError, validate_email

from reconciler.sandbox.problems import FieldError

MAX_STRING = 255


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | Decimal):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@lru_cache(maxsize=512)
def country_name(alpha_2: str) -> str | None:
    """The iso-codes (pycountry) `name` of an alpha-2 code, or None when there is no such code."""
    country = pycountry.countries.get(alpha_2=alpha_2)
    return None if country is None else str(country.name)


def email_problem(address: str) -> str | None:
    """Why `address` is not a valid email address, or None when it is."""
    try:
        validate_email(address, check_deliverability=False)
    except EmailNotValidError as error:
        return f"is not a valid email address: {error}"
    return None


_WHOLE = re.compile(r"\s*-?[0-9]{1,19}\s*")
_DECIMAL = re.compile(r"\s*-?[0-9]{1,19}(\.[0-9]{1,20})?\s*")


def numeric_string(value: Any, *, whole: bool) -> Any:
    """A JSON string holding a number, read as that number, as a Jackson-based service reads
    it (`"100"`, `"10.50"`); anything else unchanged (a string that is no number stays one,
    and is refused by the type check as before)."""
    if not isinstance(value, str):
        return value
    if _WHOLE.fullmatch(value):
        return int(value)
    if not whole and _DECIMAL.fullmatch(value):
        return Decimal(value.strip())
    return value


class ObjectReader:
    """Reads one JSON object's fields; each check records an error and returns None on failure.

    `index` places the object in an array (for `errors[].index`); `prefix` names nested fields
    (`headers[2].name`).
    """

    def __init__(
        self,
        value: object,
        allowed: Collection[str],
        *,
        index: int | None = None,
        prefix: str = "",
    ) -> None:
        self.index = index
        self.prefix = prefix
        self.errors: list[FieldError] = []
        self.fields: dict[str, Any] = {}
        self.is_object = isinstance(value, dict)
        if not isinstance(value, dict):
            self.fail(None, f"must be a JSON object, got {_type_name(value)}")
            return
        self.fields = value
        for name in value:
            if name not in allowed:
                self.fail(name, f"unknown field (allowed: {', '.join(sorted(allowed))})")

    @property
    def ok(self) -> bool:
        return not self.errors

    def fail(self, name: str | None, message: str) -> None:
        if name is not None and not self.is_object:
            return  # the object itself is wrong: that one error says it
        field = None if name is None else f"{self.prefix}{name}"
        if field is None and self.prefix:
            field = self.prefix.rstrip(".")
        self.errors.append(FieldError(message, field=field, index=self.index))

    def string(
        self, name: str, *, required: bool = True, max_length: int = MAX_STRING
    ) -> str | None:
        """A string field; a required one that is missing, null or blank is an error."""
        value = self.fields.get(name)
        if value is None:
            if required:
                self.fail(name, "is required")
            return None
        if not isinstance(value, str):
            self.fail(name, f"must be a string, got {_type_name(value)}")
            return None
        if required and not value.strip():
            self.fail(name, "is required and must not be blank")
            return None
        if len(value) > max_length:
            self.fail(name, f"must be at most {max_length} characters, got {len(value)}")
            return None
        return value

    def email(self, name: str) -> str | None:
        value = self.string(name)
        if value is not None and (problem := email_problem(value)) is not None:
            self.fail(name, problem)
            return None
        return value

    def country(self, name: str, *, required: bool = True) -> str | None:
        value = self.string(name, required=required)
        if value is None:
            return None
        if len(value) != 2 or not value.isascii() or not value.isupper():
            self.fail(name, f"must be an upper-case ISO 3166-1 alpha-2 code, got {value[:40]!r}")
            return None
        if country_name(value) is None:
            self.fail(name, f"{value!r} is not an ISO 3166-1 alpha-2 country code")
            return None
        return value

    def choice(self, name: str, allowed: Collection[str], *, required: bool = True) -> str | None:
        value = self.string(name, required=required)
        if value is not None and value not in allowed:
            self.fail(name, f"must be one of {', '.join(allowed)}, got {value[:40]!r}")
            return None
        return value

    def boolean(self, name: str, *, default: bool) -> bool | None:
        value = self.fields.get(name, default)
        if not isinstance(value, bool):
            self.fail(name, f"must be true or false, got {_type_name(value)}")
            return None
        return value

    def integer(self, name: str, *, minimum: int, maximum: int) -> int | None:
        """An optional integer within [minimum, maximum]; None when absent or invalid."""
        value = numeric_string(self.fields.get(name), whole=True)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(name, f"must be an integer, got {_type_name(value)}")
            return None
        if not minimum <= value <= maximum:
            self.fail(name, f"must be between {minimum} and {maximum}, got {value}")
            return None
        return value

    def number(self, name: str, *, minimum: Decimal, maximum: Decimal) -> Decimal | None:
        """An optional number within [minimum, maximum], as a Decimal; None when absent."""
        value = numeric_string(self.fields.get(name), whole=False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            self.fail(name, f"must be a number, got {_type_name(value)}")
            return None
        number = Decimal(value)
        if not minimum <= number <= maximum:
            self.fail(name, f"must be between {minimum} and {maximum}, got {number}")
            return None
        return number

    def money(self, name: str) -> int | None:
        """An optional amount of 0 or more with at most two decimals, in cents."""
        number = self.number(name, minimum=Decimal(0), maximum=Decimal("1e15"))
        if number is None:
            return None
        cents = number * 100
        if cents != cents.to_integral_value():
            self.fail(name, f"must have at most two decimal places, got {number}")
            return None
        return int(cents)

    def array(self, name: str) -> list[Any] | None:
        value = self.fields.get(name)
        if value is None:
            self.fail(name, "is required")
            return None
        if not isinstance(value, list):
            self.fail(name, f"must be an array, got {_type_name(value)}")
            return None
        return value
