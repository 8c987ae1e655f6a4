"""Values that must never be printed: tokens and webhook header values.

A `Secret` behaves like an opaque box: its repr and str are a fixed mask, it compares by value,
and the only way to read it is the explicit `reveal()`.
"""

from __future__ import annotations

import re
import urllib.parse

from reconciler import redaction

MASK = "(sensitive value)"
_REFERENCE = re.compile(r"(?<!\$)\$\{[A-Za-z_][A-Za-z0-9_]*\}")


class Secret:
    """A secret string. `template` keeps the file's `${VAR}` text when the value came from one."""

    __slots__ = ("_shown", "_template", "_value")

    def __init__(self, value: str, template: str | None = None, shown: str = MASK) -> None:
        self._value = value
        self._template = template
        self._shown = shown

    def reveal(self) -> str:
        """The secret itself, for the one place that must send it."""
        return self._value

    @property
    def template(self) -> str | None:
        """The unexpanded text from the file (such as `${WEBHOOK_TOKEN}`), or None for a literal."""
        return self._template

    def hmac(self, key: bytes) -> str:
        """A keyed digest of the value: comparable across runs, useless without the key."""
        import hashlib  # here: OpenSSL's start-up is not `validate`'s to pay
        import hmac

        return hmac.new(key, self._value.encode(), hashlib.sha256).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        import hmac

        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Secret({self._shown!r})"

    def __str__(self) -> str:
        return self._shown

    def __format__(self, spec: str) -> str:
        return self._shown

    def __reduce__(self) -> str | tuple[object, ...]:  # never pickled by accident
        raise TypeError("a Secret cannot be pickled")


def webhook_url(value: Secret | str) -> Secret | str:
    """A URL built around `${VAR}`: shown with each variable's part as `(sensitive value)`.

    A URL with no variable in it is in git already, and stays a plain string.
    """
    if isinstance(value, str) or value.template is None:
        return value
    return Secret(value.reveal(), value.template, shown=_REFERENCE.sub(MASK, value.template))


def reveal(value: Secret | str) -> str:
    """The text to send, whether or not it holds a secret."""
    return value.reveal() if isinstance(value, Secret) else value


def live_webhook_url(url: str, written: Secret | str) -> Secret | str:
    """The service's webhook URL as an output may show it.

    Incoming-webhook URLs are often the credential (a path segment, a query value). The URL is
    shown whole only when the files write exactly that URL literally (it is in git already) or
    when it has nothing beyond its scheme and host. Otherwise it shows as its scheme and host
    and a short fingerprint (which changes when the URL does), and what follows the host is
    registered with the redaction registry, so no log or error line prints it either.
    """
    if isinstance(written, str) and written == url:
        return url
    parts = urllib.parse.urlsplit(url)
    labels = (parts.hostname or "").split(".")
    # A host label can be the credential too (`https://eo1a2b3c4d5e6f7q.m.pipedream.net`).
    secret_labels = [label for label in labels if redaction.could_be_credential(label)]
    host = ".".join("\u2026" if label in secret_labels else label for label in labels)
    origin = f"{parts.scheme}://{host}" + (f":{_port(parts)}" if _port(parts) else "")
    hidden = url.split(parts.netloc, 1)[1] if parts.netloc else url
    if not parts.username and not parts.password and hidden in ("", "/") and not secret_labels:
        return url
    for secret in (hidden, parts.username, parts.password, *secret_labels):
        redaction.register_secret(secret)
    import hashlib  # here: OpenSSL's start-up is not `validate`'s to pay

    fingerprint = hashlib.sha256(url.encode()).hexdigest()[:8]
    return Secret(url, shown=f"{origin}/\u2026 (fingerprint {fingerprint})")


def _port(parts: urllib.parse.SplitResult) -> int | str | None:
    """The URL's port, or the text written for it when it is none (`:99999`, `:abc`)."""
    try:
        return parts.port
    except ValueError:
        return "\u2026"
