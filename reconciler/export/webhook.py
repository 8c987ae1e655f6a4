"""The webhook as an export writes it: every header value, and a URL that may hold a
credential, as a variable.

No secret the service holds is written to a file: each header value becomes
`${WEBHOOK_HEADER_<NAME>}`, and a URL with anything past its host (a path, a query, a user)
becomes `${WEBHOOK_URL}`: incoming-webhook URLs are often the credential themselves.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence

from reconciler.export.model import HeaderVariable
from reconciler.export.yamltext import quoted, scalar
from reconciler.service.models import Webhook


def header_variables(
    webhook: Webhook | None, taken: Iterable[str] = ()
) -> tuple[HeaderVariable, ...]:
    """Each header's `WEBHOOK_HEADER_<NAME>` variable, then `WEBHOOK_URL` for a URL that may
    hold a credential, made unique in that order and apart from the names `taken` (those the
    files already read, which another value holds)."""
    if webhook is None:
        return ()
    taken = set(taken)

    def unique(base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9]", "_", base).upper()
        variable, number = base, 1
        while variable in taken:  # `X-Token` and `X_Token` would otherwise share one
            number += 1
            variable = f"{base}_{number}"
        taken.add(variable)
        return variable

    result = [
        HeaderVariable(unique("WEBHOOK_HEADER_" + header.name), header.name)
        for header in webhook.headers
    ]
    if may_hold_a_secret(webhook.url):
        result.append(HeaderVariable(unique("WEBHOOK_URL"), "url", in_url=True))
    return tuple(result)


def may_hold_a_secret(url: str) -> bool:
    """Anything past the scheme and host: a path, a query, a fragment, or a user."""
    parts = urllib.parse.urlsplit(url)
    return bool(parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc)


def _url_text(url: str, variables: Sequence[HeaderVariable]) -> str:
    """`${WEBHOOK_URL}` (or its unique name) for a URL that may hold a credential; else the
    URL itself, any `${` written as `$${` so it is not read as a reference."""
    for variable in variables:
        if variable.in_url:
            return "${" + variable.variable + "}"
    return url.replace("${", "$${")


def webhook_lines(webhook: Webhook, variables: Sequence[HeaderVariable]) -> list[str]:
    """The webhook with every header value and URL query value replaced by its variable: no
    secret is written. `${` in a URL would be read as a reference: `$${` writes it literally."""
    lines = ["webhook:", f"  url: {scalar(_url_text(webhook.url, variables))}"]
    lines.append(f"  enabled: {'true' if webhook.enabled else 'false'}")
    headers = [variable for variable in variables if not variable.in_url]
    if headers:
        lines.append("  headers:")
        for variable in headers:
            lines.append(f"    - name: {scalar(variable.header)}")
            lines.append(f"      value: {quoted('${' + variable.variable + '}')}")
    if webhook.event_types:
        lines.append("  event_types:")
        lines += [f"    - {scalar(event_type)}" for event_type in webhook.event_types]
    else:
        lines.append("  event_types: []")
    return lines
