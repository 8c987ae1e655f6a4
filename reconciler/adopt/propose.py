"""What the account has that the files do not say, made into edits of the files: pure.

Each kind of drift `adopt` takes has its own small function: a managed worker's drifted field
(the live value, on its own line), an open agreement in scope that no file lists (a new item,
written as the export writes one), a worker whose agreement the service closed (`ended:`
written on its item), and the webhook (`adopt.webhook`: headers as `${VAR}` references
only). Everything else the plan reports is listed with the reason it stays.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import yaml

from reconciler import worker_fields
from reconciler.adopt.model import (
    ADDED,
    CHANGED,
    REMOVED,
    Adoption,
    FileChange,
)
from reconciler.adopt.proposal import AdoptOptions, Proposal
from reconciler.adopt.webhook import adopt_webhook
from reconciler.adopt.yamledit import YamlDocument
from reconciler.desired.rules import worker_value_problem
from reconciler.export.render import worker_entry
from reconciler.export.yamltext import quoted
from reconciler.identity import email_key
from reconciler.money import grouped
from reconciler.plan.changes import FieldChange, worker_address
from reconciler.plan.model import LiveState, Plan
from reconciler.service.models import Worker, WorkerStatus
from reconciler.text_safety import external_id_problem
from reconciler.worker_fields import (
    EMAIL,
    ENDED,
    EXTERNAL_ID,
    LEGAL_NAME,
    REHIRE,
    TYPE_OF_WORKER,
    Check,
    Compare,
    Exported,
    WorkerFields,
)

_CLOSED = frozenset({WorkerStatus.ENDED, WorkerStatus.INACTIVATED})
_UNHELD = ", which a file cannot hold: correct it in the service"


@dataclass(slots=True)
class _Item:
    """A worker item of a file: its document, its sequence, its place in it, its node."""

    document: YamlDocument
    sequence: yaml.SequenceNode
    key: yaml.Node
    index: int
    node: yaml.MappingNode


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
    proposal = Proposal(documents, options)
    items = _items(documents)
    _drifted_fields(proposal, plan, items)
    _closed_workers(proposal, live, items)
    _new_workers(proposal, live, items, scope_prefix)
    adopt_webhook(proposal, plan, documents)
    for document in documents:
        if document.name in proposal.new_lists and isinstance(document.root, yaml.MappingNode):
            document.insert_pair(document.root, "workers", proposal.new_lists[document.name])
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
        passed_over=proposal.passed_over,
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
            external_id = YamlDocument.get(node, EXTERNAL_ID)
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


def _drifted_fields(proposal: Proposal, plan: Plan, items: dict[str, _Item]) -> None:
    for drift in plan.drift:
        item = items.get(drift.worker.external_id)
        if item is None:
            continue
        for change in drift.fields:
            _field(proposal, item, drift.agreement, change)


def _field(proposal: Proposal, item: _Item, agreement: Worker, change: FieldChange) -> None:
    address = f"{worker_address(agreement.external_id or '')}.{change.name}"
    document, node = item.document, item.node
    value = change.before
    item_field = worker_fields.WORKER_FIELDS.by_key.get(change.name)
    if (
        item_field is not None
        and item_field.compare is Compare.COUNTRY
        and not agreement.country_iso
    ):
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
            if change.name == LEGAL_NAME:
                _set_type(document, node, "Worker")

        proposal.take(address, REMOVED, shown, remove)
        return

    reason = worker_value_problem(change.name, str(value))
    if reason is not None:
        proposal.leave(address, f"the service's value {_shown(value)} {reason}{_UNHELD}")
        return

    def write() -> None:
        document.set_key(node, change.name, str(value))
        if change.name == LEGAL_NAME:
            _set_type(document, node, "Business")

    proposal.take(address, CHANGED, shown, write)


def _set_type(document: YamlDocument, node: yaml.MappingNode, kind: str) -> None:
    """A Business is recognised by its legal name: the type follows the adopted one."""
    found = YamlDocument.get(node, TYPE_OF_WORKER)
    if isinstance(found, yaml.ScalarNode) and found.value != kind:
        document.set_scalar(found, kind)


def _shown(value: object) -> str:
    return "(none)" if value in (None, "") else quoted(str(value))


def _closed_workers(proposal: Proposal, live: LiveState, items: dict[str, _Item]) -> None:
    """A listed worker whose every agreement the service closed (HR ended it in the
    service's screens): `ended:` is written on its item, one line, the day adopt saw the
    closure (the service shows no end date). The item stays, so the paid payruns that name
    it stay valid; a leaver's item is removed by hand once no payrun names it."""
    by_id: dict[str, list[Worker]] = defaultdict(list)
    for agreement in live.workers:
        if agreement.external_id is not None and agreement.external_id in items:
            by_id[agreement.external_id].append(agreement)
    today = proposal.options.today or datetime.now(UTC).date()
    for external_id, agreements in by_id.items():
        if not all(agreement.status in _CLOSED for agreement in agreements):
            continue
        item = items[external_id]
        if YamlDocument.get(item.node, ENDED) is not None:
            continue  # the files say so already
        last = max(agreements, key=lambda agreement: agreement.agreement_id)
        address = worker_address(external_id)
        if YamlDocument.get(item.node, REHIRE) is not None:
            proposal.leave(
                address,
                f"agreement {last.agreement_id} is {last.status} in the service, but the "
                "entry says rehire:; remove it and write ended: by hand if the worker left "
                "again",
            )
            continue
        detail = (
            f"agreement {last.agreement_id} is {last.status} in the service: ended: "
            f"{today.isoformat()}"
        )

        def write(item: _Item = item) -> None:
            item.document.set_key(item.node, ENDED, today.isoformat())

        proposal.take(address, CHANGED, detail, write)


def _new_workers(
    proposal: Proposal, live: LiveState, items: dict[str, _Item], scope_prefix: str | None
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
        email = YamlDocument.get(item.node, EMAIL)
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
        unheld = _unheld(external_id, agreements[0])
        if unheld is not None:
            proposal.leave(address, unheld)
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


def _unheld(external_id: str, agreement: Worker) -> str | None:
    """Why a file cannot hold what the service shows of a new worker, or None."""
    reason = external_id_problem(external_id)
    if reason is not None:
        return f"the service's externalId {reason}{_UNHELD}"
    for name, get in _held_texts(worker_fields.WORKER_FIELDS):
        value = get(agreement)
        reason = None if not value else worker_value_problem(name, value)
        if reason is not None:
            return f"the service's {name} {_shown(value)} {reason}{_UNHELD}"
    return None


@cache
def _held_texts(table: WorkerFields) -> tuple[tuple[str, Callable[[Worker], Any]], ...]:
    """The texts of a new worker a file must be able to hold (`rules.worker_value_problem`):
    those the service shows that export writes and `validate` has a text rule for."""
    return tuple(
        (item.key, item.live_getter())
        for item in table
        if item.live and item.export is not Exported.NEVER and item.check in _TEXT_RULES
    )


_TEXT_RULES = (Check.LINE, Check.EMAIL)


def _add_item(proposal: Proposal, items: dict[str, _Item], lines: list[str]) -> None:
    into = proposal.options.into
    documents = {document.name: document for document in proposal.documents}
    if into is not None and into not in documents:
        proposal.created.setdefault(into, []).append(lines)
        return
    document = documents[into] if into is not None else _home(proposal.documents, items)
    sequence, key = _workers(document)
    if sequence is not None:
        document.append_item(sequence, lines, key)
    else:  # a file with no `workers:` yet: one list, written once every item is known
        proposal.new_lists.setdefault(document.name, []).append(lines)


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
