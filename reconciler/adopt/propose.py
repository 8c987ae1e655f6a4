"""What the account has that the files do not say, made into edits of the files: pure.

Each kind of drift `adopt` takes has its own small function: a managed worker's drifted field
(the live value, on its own line), an open agreement in scope that no file lists (a new item,
written as the export writes one), a worker whose agreement the service closed (its item
removed), the webhook's url, enabled flag, event types and headers (values as `${VAR}`
references only). Everything else the plan reports is listed with the reason it stays.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import yaml

from reconciler.adopt.model import (
    ADDED,
    CHANGED,
    REMOVED,
    Adopted,
    Adoption,
    FileChange,
    NotAdopted,
    Variable,
    selects,
)
from reconciler.adopt.yamledit import YamlDocument, like
from reconciler.export.render import worker_entry
from reconciler.export.webhook import header_variables, may_hold_a_secret
from reconciler.export.yamltext import quoted, scalar
from reconciler.identity import email_key
from reconciler.money import grouped
from reconciler.plan.changes import FieldChange, WebhookCreate, WebhookUpdate, worker_address
from reconciler.plan.model import LiveState, Plan
from reconciler.service.models import Webhook, Worker, WorkerStatus

_CLOSED = frozenset({WorkerStatus.ENDED, WorkerStatus.INACTIVATED})
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class AdoptOptions:
    """`--only` patterns, and `--into`: the file new workers go to (its name as loaded)."""

    only: tuple[str, ...] = ()
    into: str | None = None


@dataclass(slots=True)
class _Item:
    """A worker item of a file: its document, its sequence, its place in it, its node."""

    document: YamlDocument
    sequence: yaml.SequenceNode
    key: yaml.Node
    index: int
    node: yaml.MappingNode


@dataclass(slots=True)
class _Proposal:
    documents: list[YamlDocument]
    options: AdoptOptions
    adopted: list[Adopted] = field(default_factory=list)
    not_adopted: list[NotAdopted] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    created: dict[str, list[list[str]]] = field(default_factory=dict)
    # The items to remove, by sequence: removed together, so an emptied list is written `[]`.
    removals: dict[int, tuple[YamlDocument, yaml.SequenceNode, yaml.Node, list[int]]] = field(
        default_factory=dict
    )

    def remove(
        self, document: YamlDocument, sequence: yaml.SequenceNode, key: yaml.Node, index: int
    ) -> None:
        self.removals.setdefault(id(sequence), (document, sequence, key, []))[3].append(index)

    def take(self, address: str, kind: str, detail: str, edit: Callable[[], None]) -> None:
        """Make `edit` and record it, when `--only` selects the address."""
        if selects(self.options.only, address):
            edit()
            self.adopted.append(Adopted(address, kind, detail))

    def leave(self, address: str, why: str) -> None:
        if selects(self.options.only, address):
            self.not_adopted.append(NotAdopted(address, why))


def propose(
    sources: Iterable[tuple[str, str]],
    plan: Plan,
    live: LiveState,
    scope_prefix: str | None,
    options: AdoptOptions | None = None,
) -> Adoption:
    """The edits that make the files `sources` ((name, text), already valid) say what the
    account `live` has, for the drift `plan` (made of them against it) found."""
    options = options or AdoptOptions()
    documents = [YamlDocument.parse(name, text) for name, text in sources]
    proposal = _Proposal(documents, options)
    items = _items(documents)
    _drifted_fields(proposal, plan, items)
    _closed_workers(proposal, live, items)
    _new_workers(proposal, live, items, scope_prefix)
    _webhook(proposal, plan, documents)
    for document, sequence, key, indexes in proposal.removals.values():
        document.delete_items(sequence, indexes, key)
    for conflict in plan.conflicts:
        if conflict.external_id is not None:
            proposal.leave(worker_address(conflict.external_id), f"conflict: {conflict.reason}")
    if plan.money is not None:
        for paylist in plan.money.untraced:
            proposal.leave(
                f"paylist[{paylist.paylist_id}]",
                f"money is never adopted: {plural_payments(paylist.payments)} "
                f"({grouped(paylist.total)}) paid outside the files' payruns; record them in a "
                "payrun by hand if they are to be traced",
            )
    files = [
        FileChange(document.name, document.text, document.result())
        for document in documents
        if document.changed
    ]
    files += [
        FileChange(name, None, _new_file(items_lines))
        for name, items_lines in proposal.created.items()
    ]
    return Adoption(
        files=tuple(files),
        adopted=tuple(proposal.adopted),
        not_adopted=tuple(proposal.not_adopted),
        variables=tuple(proposal.variables),
        ignored=len(plan.ignored),
    )


def plural_payments(count: int) -> str:
    return f"{count} payment" + ("" if count == 1 else "s")


def _items(documents: list[YamlDocument]) -> dict[str, _Item]:
    found: dict[str, _Item] = {}
    for document in documents:
        sequence, key = _workers(document)
        if sequence is None or key is None:
            continue
        for index, node in enumerate(sequence.value):
            external_id = YamlDocument.get(node, "externalId")
            if isinstance(node, yaml.MappingNode) and isinstance(external_id, yaml.ScalarNode):
                found[external_id.value] = _Item(document, sequence, key, index, node)
    return found


def _workers(document: YamlDocument) -> tuple[yaml.SequenceNode | None, yaml.Node | None]:
    root = document.root
    if not isinstance(root, yaml.MappingNode):
        return None, None
    for key, value in root.value:
        if key.value == "workers" and isinstance(value, yaml.SequenceNode):
            return value, key
    return None, None


# --- workers ------------------------------------------------------------------------------


def _drifted_fields(proposal: _Proposal, plan: Plan, items: dict[str, _Item]) -> None:
    for drift in plan.drift:
        item = items.get(drift.worker.external_id)
        if item is None:
            continue
        for change in drift.fields:
            _field(proposal, item, drift.agreement, change)


def _field(proposal: _Proposal, item: _Item, agreement: Worker, change: FieldChange) -> None:
    address = f"{worker_address(agreement.external_id or '')}.{change.name}"
    document, node = item.document, item.node
    value = change.before
    if change.name == "countryIso" and agreement.country_iso is None:
        proposal.leave(
            address,
            f"the service shows the country as {quoted(str(agreement.country))}, which has no "
            "ISO 3166-1 code to write",
        )
        return
    shown = _shown(change.after) + " -> " + _shown(value)
    if value in (None, ""):
        if YamlDocument.get(node, change.name) is None:
            return

        def remove() -> None:
            document.delete_pair(node, change.name)
            if change.name == "workerLegalName":
                _set_type(document, node, "Worker")

        proposal.take(address, REMOVED, shown, remove)
        return

    def write() -> None:
        document.set_key(node, change.name, str(value))
        if change.name == "workerLegalName":
            _set_type(document, node, "Business")

    proposal.take(address, CHANGED, shown, write)


def _set_type(document: YamlDocument, node: yaml.MappingNode, kind: str) -> None:
    """A Business is recognised by its legal name: the type follows the adopted one."""
    found = YamlDocument.get(node, "typeOfWorker")
    if isinstance(found, yaml.ScalarNode) and found.value != kind:
        document.set_scalar(found, kind)


def _shown(value: object) -> str:
    return "(none)" if value in (None, "") else quoted(str(value))


def _closed_workers(proposal: _Proposal, live: LiveState, items: dict[str, _Item]) -> None:
    """A listed worker whose every agreement the service closed: its item goes."""
    by_id: dict[str, list[Worker]] = defaultdict(list)
    for agreement in live.workers:
        if agreement.external_id is not None and agreement.external_id in items:
            by_id[agreement.external_id].append(agreement)
    for external_id, agreements in by_id.items():
        if not all(agreement.status in _CLOSED for agreement in agreements):
            continue
        item = items[external_id]
        last = max(agreements, key=lambda agreement: agreement.agreement_id)
        detail = f"agreement {last.agreement_id} is {last.status} in the service"

        def remove(item: _Item = item) -> None:
            proposal.remove(item.document, item.sequence, item.key, item.index)

        proposal.take(worker_address(external_id), REMOVED, detail, remove)


def _new_workers(
    proposal: _Proposal, live: LiveState, items: dict[str, _Item], scope_prefix: str | None
) -> None:
    """An open agreement in scope that no file lists: a new item, as the export writes it."""
    open_by_id: dict[str, list[Worker]] = defaultdict(list)
    for agreement in live.workers:
        external_id = agreement.external_id
        if external_id is None or external_id in items or not agreement.status.is_open:
            continue
        if scope_prefix is None or external_id.startswith(scope_prefix):
            open_by_id[external_id].append(agreement)
    emails = {}  # a new worker may not take an email the files already give
    for listed, item in items.items():
        email = YamlDocument.get(item.node, "workerEmail")
        if isinstance(email, yaml.ScalarNode):
            emails[email_key(email.value)] = listed
    for external_id in sorted(open_by_id):
        address = worker_address(external_id)
        agreements = open_by_id[external_id]
        if len(agreements) > 1:
            continue  # a conflict: the plan's reason is listed
        holder = emails.get(email_key(agreements[0].email))
        if holder is not None:
            proposal.leave(
                address,
                f"its email is the one the files give {worker_address(holder)}: settle which "
                "externalId is right by hand (the files cannot hold an email twice)",
            )
            continue
        entry = worker_entry(external_id, agreements[0])
        if entry.unfinished is not None:
            missing = ", ".join(entry.unfinished.fields)
            proposal.leave(
                address,
                f"the service does not show its {missing} until the worker answers the "
                f"invitation ({entry.unfinished.status}): adopt it then, or add it by hand",
            )
            continue
        lines = [line.strip().removeprefix("- ") for line in entry.lines]
        detail = f"open agreement {agreements[0].agreement_id} ({agreements[0].status})"

        def add(lines: list[str] = lines) -> None:
            _add_item(proposal, items, lines)

        proposal.take(address, ADDED, detail, add)


def _add_item(proposal: _Proposal, items: dict[str, _Item], lines: list[str]) -> None:
    into = proposal.options.into
    documents = {document.name: document for document in proposal.documents}
    if into is not None and into not in documents:
        proposal.created.setdefault(into, []).append(lines)
        return
    document = documents[into] if into is not None else _home(proposal.documents, items)
    sequence, key = _workers(document)
    if sequence is not None:
        document.append_item(sequence, lines, key)
    elif isinstance(document.root, yaml.MappingNode):
        document.insert_pair(document.root, "workers", [lines])


def _home(documents: list[YamlDocument], items: dict[str, _Item]) -> YamlDocument:
    """The file that holds the scope's workers: the one listing the most, else the one
    holding `scope`, else the first."""
    counts: dict[str, int] = defaultdict(int)
    for item in items.values():
        counts[item.document.name] += 1
    if counts:
        most = max(counts.values())
        return next(d for d in documents if counts.get(d.name) == most)
    for document in documents:
        if YamlDocument.get(document.root, "scope") is not None:
            return document
    return documents[0]


def _new_file(items: list[list[str]]) -> str:
    lines = ["workers:"]
    for item in items:
        lines.append(f"  - {item[0]}")
        lines += [f"    {line}" for line in item[1:]]
    return "\n".join(lines) + "\n"


# --- the webhook --------------------------------------------------------------------------


def _webhook(proposal: _Proposal, plan: Plan, documents: list[YamlDocument]) -> None:
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
    names = {variable.header.lower(): variable.variable for variable in header_variables(live)}
    for field_change in change.fields:
        if field_change.name == "url":
            _url(proposal, document, node, live)
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
    proposal: _Proposal, document: YamlDocument, node: yaml.MappingNode, live: Webhook
) -> None:
    url = YamlDocument.get(node, "url")
    assert isinstance(url, yaml.ScalarNode)
    written = _REFERENCE.search(url.value)
    if written is not None:
        holds = "the webhook URL the service has"
        proposal.variables.append(Variable(written.group(1), holds))
        proposal.leave("webhook.url", f"the file reads it from ${{{written.group(1)}}}: set that")
        return
    if may_hold_a_secret(live.url):
        variable = "WEBHOOK_URL"
        proposal.variables.append(Variable(variable, "the webhook URL the service has"))
        detail = f"written as ${{{variable}}} (its path or query may be a credential)"
        text = "${" + variable + "}"
        proposal.take("webhook.url", CHANGED, detail, lambda: document.set_scalar(url, text))
        return
    text = live.url.replace("${", "$${")
    proposal.take("webhook.url", CHANGED, scalar(text), lambda: document.set_scalar(url, text))


def _event_types(
    proposal: _Proposal, document: YamlDocument, node: yaml.MappingNode, live: Webhook
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
        if sequence.flow_style or len(gone) == len(written):
            kept = [scalar(kind) for kind in written if kind in wanted]
            document.replace_node(sequence, "[" + ", ".join(kept + list(map(scalar, added))) + "]")
            return
        for index in gone:
            proposal.remove(document, sequence, key, index)
        for kind in added:
            document.append_item(sequence, [scalar(kind)])

    proposal.take("webhook.event_types", CHANGED, detail, edit)


def _header(
    proposal: _Proposal,
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

        proposal.variables.append(Variable(variable, holds))
        proposal.take(address, ADDED, f"value read from ${{{variable}}}", add)
        return
    value = YamlDocument.get(written, "value")
    assert isinstance(value, yaml.ScalarNode)
    found = _REFERENCE.search(value.value)
    if found is not None:  # the reference stays: the variable must hold the new value
        proposal.variables.append(Variable(found.group(1), holds))
        return
    proposal.variables.append(Variable(variable, holds))
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
