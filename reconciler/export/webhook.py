"""The webhook as an export writes it: every header value and URL query value as a variable.

No secret the service holds is written to a file: each header value becomes
`${WEBHOOK_HEADER_<NAME>}` and each URL query value `${WEBHOOK_URL_<NAME>}`, named uniquely.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reconciler.export.model import HeaderVariable
from reconciler.export.yamltext import quoted, scalar
from reconciler.service.models import Webhook


def header_variables(webhook: Webhook | None) -> tuple[HeaderVariable, ...]:
    """Each header's `WEBHOOK_HEADER_<NAME>` variable, then each URL query value's
    `WEBHOOK_URL_<NAME>`, made unique in that order."""
    if webhook is None:
        return ()
    taken: set[str] = set()

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
    for name, value in _query(webhook.url):
        if value:
            result.append(HeaderVariable(unique("WEBHOOK_URL_" + name), name, in_url=True))
    return tuple(result)


def _query(url: str) -> list[tuple[str, str]]:
    """The URL's query as written: (name, value) pairs, unparsed."""
    query = url.partition("#")[0].partition("?")[2]
    return [item.partition("=")[::2] for item in query.split("&")] if query else []


def _url_text(url: str, variables: Sequence[HeaderVariable]) -> str:
    """The URL with each query value as its `${variable}`; any other `${` written as `$${`."""
    by_name = iter(variable for variable in variables if variable.in_url)
    head, _, fragment = url.partition("#")
    base, has_query, _ = head.partition("?")
    text = base.replace("${", "$${")
    if has_query:
        items = []
        for name, value in _query(url):
            escaped = name.replace("${", "$${")
            items.append(f"{escaped}=${{{next(by_name).variable}}}" if value else escaped)
        text += "?" + "&".join(items)
    return text + ("#" + fragment.replace("${", "$${") if "#" in url else "")


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
