"""The webhook adopted: url, enabled flag, event types and headers, each on its own lines;
a header's value only ever as a `${VAR}` reference (an existing one kept, a new header's named
after it as the export names it), with the variable that must hold what the service has."""

from __future__ import annotations

import re

import yaml

from reconciler.adopt.model import ADDED, CHANGED, REMOVED, Variable
from reconciler.adopt.proposal import REFERENCE, Proposal
from reconciler.adopt.risks import host_of
from reconciler.adopt.yamledit import YamlDocument, like
from reconciler.export.webhook import header_variables, may_hold_a_secret
from reconciler.export.yamltext import quoted, scalar
from reconciler.plan.changes import FieldChange, WebhookCreate, WebhookUpdate
from reconciler.plan.model import Plan
from reconciler.service.models import Webhook

_REFERENCE = re.compile(REFERENCE)


def adopt_webhook(proposal: Proposal, plan: Plan, documents: list[YamlDocument]) -> None:
    change = next((c for c in plan.changes if isinstance(c, WebhookUpdate | WebhookCreate)), None)
    if change is None:
        return
    if isinstance(change, WebhookCreate):
        proposal.leave(
            "webhook",
            "the service has no webhook: adopt does not stop managing the file's (remove "
            "`webhook:` by hand for that, or apply to create it)",
        )
        return
    document = next(d for d in documents if YamlDocument.get(d.root, "webhook") is not None)
    node = YamlDocument.get(document.root, "webhook")
    assert isinstance(node, yaml.MappingNode)
    live = change.live
    # A new variable is never one the files already read: that would give it two values.
    taken = {found.group(1) for d in documents for found in _REFERENCE.finditer(d.text)}
    variables = header_variables(live, taken)
    names = {v.header.lower(): v.variable for v in variables if not v.in_url}
    url_variable = next((v.variable for v in variables if v.in_url), "WEBHOOK_URL")
    for field_change in change.fields:
        if field_change.name == "url":
            _url(proposal, document, node, live, url_variable)
        elif field_change.name == "enabled":
            detail = f"{like(None, not live.enabled)} -> {like(None, live.enabled)}"
            proposal.take(
                "webhook.enabled",
                CHANGED,
                detail,
                lambda: document.set_key(node, "enabled", live.enabled),
            )
        elif field_change.name == "event_types":
            _event_types(proposal, document, node, live)
        else:
            _header(proposal, document, node, live, field_change, names)


def _url(
    proposal: Proposal,
    document: YamlDocument,
    node: yaml.MappingNode,
    live: Webhook,
    variable: str,
) -> None:
    url = YamlDocument.get(node, "url")
    assert isinstance(url, yaml.ScalarNode)
    written = _REFERENCE.search(url.value)
    if written is not None:
        holds = "the webhook URL the service has"
        proposal.need("webhook.url", Variable(written.group(1), holds))
        proposal.leave("webhook.url", f"the file reads it from ${{{written.group(1)}}}: set that")
        return
    if may_hold_a_secret(live.url):
        proposal.need("webhook.url", Variable(variable, "the webhook URL the service has"))
        detail = (
            f"written as ${{{variable}}}: the service has {host_of(live.url)} (its path or "
            "query, which may be a credential, is not shown)"
        )
        text = "${" + variable + "}"
        proposal.take("webhook.url", CHANGED, detail, lambda: document.set_scalar(url, text))
        return
    text = live.url.replace("${", "$${")
    proposal.take("webhook.url", CHANGED, scalar(text), lambda: document.set_scalar(url, text))


def _event_types(
    proposal: Proposal, document: YamlDocument, node: yaml.MappingNode, live: Webhook
) -> None:
    sequence = YamlDocument.get(node, "event_types")
    assert isinstance(sequence, yaml.SequenceNode)
    written = [item.value for item in sequence.value]
    wanted = set(live.event_types)
    added = [kind for kind in live.event_types if kind not in written]
    gone = [index for index, kind in enumerate(written) if kind not in wanted]
    detail = ", ".join([*(f"+{k}" for k in added), *(f"-{written[i]}" for i in gone)])
    key = next(k for k, v in node.value if v is sequence)

    def edit() -> None:
        if sequence.flow_style:
            kept = [scalar(kind) for kind in written if kind in wanted]
            document.replace_node(sequence, "[" + ", ".join(kept + list(map(scalar, added))) + "]")
            return
        fresh = list(added)
        if len(gone) == len(written):  # a block list keeps its first line, given a new kind
            document.set_scalar(sequence.value[gone.pop(0)], fresh.pop(0))
        for index in gone:
            proposal.remove(document, sequence, key, index)
        for kind in fresh:
            document.append_item(sequence, [scalar(kind)])

    proposal.take("webhook.event_types", CHANGED, detail, edit)


def _header(
    proposal: Proposal,
    document: YamlDocument,
    node: yaml.MappingNode,
    live: Webhook,
    change: FieldChange,
    names: dict[str, str],
) -> None:
    name = change.name[len('headers["') : -len('"]')]
    address = f"webhook.{change.name}"
    headers = YamlDocument.get(node, "headers")
    written = _written_header(headers, name)
    holds = f'the value of the webhook header "{name}" the service has'
    if change.before is None:  # the service no longer sends it
        if written is None or not isinstance(headers, yaml.SequenceNode):
            return
        index = headers.value.index(written)
        key = next(k for k, v in node.value if v is headers)
        proposal.take(
            address,
            REMOVED,
            "no longer sent",
            lambda: proposal.remove(document, headers, key, index),
        )
        return
    variable = names.get(name.lower(), "WEBHOOK_HEADER")
    reference = quoted("${" + variable + "}")
    if written is None:
        item = [f"name: {scalar(name)}", f"value: {reference}"]

        def add() -> None:
            if isinstance(headers, yaml.SequenceNode):
                document.append_item(headers, item)
            else:
                document.insert_pair(node, "headers", [item])

        proposal.need(address, Variable(variable, holds))
        proposal.take(address, ADDED, f"value read from ${{{variable}}}", add)
        return
    value = YamlDocument.get(written, "value")
    assert isinstance(value, yaml.ScalarNode)
    found = [reference.group(1) for reference in _REFERENCE.finditer(value.value)]
    if found:  # the references stay: the variables must make the new value
        if not _REFERENCE.fullmatch(value.value):  # `Bearer ${TOKEN}`: TOKEN is a part
            holds = (
                f'its part of the value of the webhook header "{name}" the service has (the '
                "file writes text around it)"
            )
        for reference in dict.fromkeys(found):
            proposal.need(address, Variable(reference, holds))
        return
    proposal.need(address, Variable(variable, holds))
    proposal.take(
        address,
        CHANGED,
        f"value read from ${{{variable}}}",
        lambda: document.set_scalar(value, "${" + variable + "}"),
    )


def _written_header(headers: yaml.Node | None, name: str) -> yaml.MappingNode | None:
    if not isinstance(headers, yaml.SequenceNode):
        return None
    for item in headers.value:
        found = YamlDocument.get(item, "name")
        if isinstance(found, yaml.ScalarNode) and found.value.lower() == name.lower():
            return item if isinstance(item, yaml.MappingNode) else None
    return None
