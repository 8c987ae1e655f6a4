"""The live account to desired-state file text: pure, and byte-identical for the same account.

Nothing here reads the clock, the environment or the disk, so the same live state always gives
the same bytes, and every decision (what is exported, what becomes a placeholder, how files are
named) can be tested with plain values.
"""

from __future__ import annotations

import functools
import re
import textwrap
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from reconciler import worker_fields
from reconciler.export.history import history_lines
from reconciler.export.model import (
    EXPORT_MARK,
    MODELINE,
    PLACEHOLDER,
    Conflict,
    Export,
    ExportedFile,
    ExportOptions,
    HeaderVariable,
    SplitBy,
    Unfinished,
)
from reconciler.export.pay import PaidBefore
from reconciler.export.webhook import header_variables, webhook_lines
from reconciler.export.yamltext import quoted, scalar
from reconciler.payee import payee_key
from reconciler.plan.model import LiveState
from reconciler.service.models import Webhook, Worker
from reconciler.words import plural as _count
from reconciler.worker_fields import (
    COUNTRY,
    LEGAL_NAME,
    TYPE_OF_WORKER,
    Compare,
    Exported,
    WorkerFields,
)

#: The file of a split export that holds everything but the workers.
SETTINGS_FILE = "00-settings.yaml"
_SLUG_LENGTH = 60
_COMMENT_WIDTH = 94
_UNANSWERED_NOTE = (
    "# The service does not show these values until the worker answers the invitation, so they\n"
    f"# are written as {PLACEHOLDER}: fill each one in (`reconciler validate` refuses the file\n"
    "# until then). Values the service does not show yet are never compared, so a plan stays\n"
    f"# empty whatever true value you write. {TYPE_OF_WORKER} is Worker, or Business (then add\n"
    f"# {LEGAL_NAME}).\n"
)
_UNMANAGED_NOTE = (
    "# Unmanaged: these open agreements have no externalId, so no file can own them and\n"
    "# reconciler never touches them. The service cannot give an existing agreement an\n"
    "# externalId: to bring a worker under management, end its agreement in the service, then\n"
    "# add the worker under `workers:` with an externalId and apply (it gets a new invitation).\n"
)
_CONFLICT_NOTE = (
    "# Several open agreements share these externalIds: a plan reports them as conflicts and\n"
    "# changes nothing. The first is exported; end the others in the service.\n"
)


@dataclass(frozen=True, slots=True)
class WorkerEntry:
    """One exported worker: its lines, the value it is grouped by, and what is unfinished."""

    external_id: str
    lines: tuple[str, ...]
    country_iso: str | None
    job_title: str | None
    unfinished: Unfinished | None


def render_export(
    live: LiveState, options: ExportOptions, pay: Mapping[str, PaidBefore] | None = None
) -> Export:
    """The desired-state file(s) that make a plan of `live` empty, and what needs a person;
    with `pay` (`export.pay.newest_pay`, by payee key), each paid worker's `pay` for review."""
    open_agreements = [worker for worker in live.workers if worker.status.is_open]
    unmanaged = tuple(
        sorted(
            (worker for worker in open_agreements if worker.external_id is None),
            key=lambda worker: worker.agreement_id,
        )
    )
    by_id: dict[str, list[Worker]] = defaultdict(list)
    outside_scope = 0
    for worker in open_agreements:
        if worker.external_id is None:
            continue
        if options.scope_prefix is not None and not worker.external_id.startswith(
            options.scope_prefix
        ):
            outside_scope += 1
            continue
        by_id[worker.external_id].append(worker)
    conflicts: list[Conflict] = []
    entries: list[WorkerEntry] = []
    for external_id in sorted(by_id):
        agreements = sorted(by_id[external_id], key=lambda worker: worker.agreement_id)
        if len(agreements) > 1:
            conflicts.append(Conflict(external_id, agreements[0], tuple(agreements[1:])))
        entry = worker_entry(external_id, agreements[0])
        paid = None if pay is None else pay.get(payee_key(agreements[0].email))
        entries.append(entry if paid is None else replace(entry, lines=(*entry.lines, paid.line())))
    variables = header_variables(live.webhook)
    settings = _settings_lines(options, live.webhook, variables)
    settings[1].extend(history_lines(live.money))  # the account's paylists: known history
    unmanaged_lines = _unmanaged_lines(unmanaged) if options.include_unmanaged else []
    conflict_lines = _conflict_lines(conflicts)
    if options.split_by is None:
        text = _file_text(
            options,
            entries,
            settings_before=settings[0],
            settings_after=unmanaged_lines + settings[1],
            notes=conflict_lines,
            with_workers_key=True,
            what=_scope_text(options),
        )
        files: tuple[ExportedFile, ...] = (ExportedFile("", text),)
    else:
        files = _split_files(
            options, options.split_by, entries, settings, unmanaged_lines, conflict_lines
        )
    return Export(
        files=files,
        workers=len(entries),
        unfinished=tuple(entry.unfinished for entry in entries if entry.unfinished),
        unmanaged=unmanaged,
        outside_scope=outside_scope,
        header_variables=variables,
        conflicts=tuple(conflicts),
        webhook=live.webhook is not None,
    )


# --- one worker ------------------------------------------------------------------------------


def worker_entry(external_id: str, worker: Worker) -> WorkerEntry:
    """A worker's lines under `workers:`, with placeholders where the service shows nothing;
    its fields in the table's order (`reconciler.worker_fields`), each as its `Exported` says."""
    missing: list[str] = []
    note = None
    exported, names, legal_name = _exported(worker_fields.WORKER_FIELDS)

    def known(field: str, value: str | None) -> str:
        if value:
            return scalar(value)
        missing.append(field)
        return PLACEHOLDER

    if legal_name(worker):
        kind = "Business"
    elif any(name(worker) for name in names):
        kind = "Worker"
    else:
        kind = None  # nobody has answered yet: a Business cannot be told from a person
    values: list[tuple[str, str]] = []
    for key, how, get in exported:
        value: Any = kind if how is Exported.KIND else get(worker)
        if how is Exported.ALWAYS:
            values.append((key, scalar(value)))
        elif how is Exported.WHEN_SET:
            if value:
                values.append((key, scalar(value)))
        else:
            values.append((key, known(key, value)))
    if worker.country and not worker.country_iso:
        note = f"the service shows the country as {quoted(worker.country)}, which has no ISO code"
    lines = [
        f"{'  - ' if index == 0 else '    '}{name}: {value}"
        for index, (name, value) in enumerate(values)
    ]
    unfinished = None
    if missing:
        unfinished = Unfinished(external_id, worker.email, str(worker.status), tuple(missing), note)
    return WorkerEntry(external_id, tuple(lines), worker.country_iso, worker.job_title, unfinished)


_Read = Callable[[Worker], Any]


@functools.cache
def _exported(
    table: WorkerFields,
) -> tuple[tuple[tuple[str, Exported, _Read], ...], tuple[_Read, ...], _Read]:
    """The fields export writes (key, how, what reads the live value), what reads the names
    the service shows once a worker answers, and what reads the legal name."""
    exported = tuple(
        (item.key, item.export, item.live_getter())
        for item in table
        if item.export is not Exported.NEVER
    )
    names = tuple(
        item.live_getter() for item in table if item.compare in (Compare.SHOWN, Compare.LEGAL_NAME)
    )
    return exported, names, table.by_key[LEGAL_NAME].live_getter()


# --- comment blocks --------------------------------------------------------------------------


def _unfinished_lines(entries: Iterable[WorkerEntry]) -> list[str]:
    unfinished = [entry.unfinished for entry in entries if entry.unfinished]
    if not unfinished:
        return []
    lines = [
        "#",
        f"# {PLACEHOLDER}: {_count(len(unfinished), 'worker')} to finish by hand:",
    ]
    for item in unfinished:
        line = (
            f"#   - {scalar(item.external_id)} {scalar(item.email)} ({item.status}): "
            + ", ".join(item.fields)
        )
        lines.append(line)
        if item.note:
            lines.append(f"#     ({item.note})")
    lines += _UNANSWERED_NOTE.rstrip("\n").split("\n")
    return lines


def _unmanaged_lines(unmanaged: Sequence[Worker]) -> list[str]:
    if not unmanaged:
        return []
    lines = ["", *_UNMANAGED_NOTE.rstrip("\n").split("\n")]
    for worker in unmanaged:
        lines += [
            f"#   - email: {scalar(worker.email)}",
            f"#     agreementId: {worker.agreement_id}",
            f"#     status: {scalar(str(worker.status))}",
        ]
    return lines


def _conflict_lines(conflicts: Sequence[Conflict]) -> list[str]:
    if not conflicts:
        return []
    lines = ["#", *_CONFLICT_NOTE.rstrip("\n").split("\n")]
    for conflict in conflicts:
        others = ", ".join(
            f"agreementId {other.agreement_id} ({other.status}, {scalar(other.email)})"
            for other in conflict.others
        )
        lines.append(
            f"#   - {scalar(conflict.external_id)}: exported agreementId "
            f"{conflict.exported.agreement_id}; also {others}"
        )
    return lines


# --- whole files -----------------------------------------------------------------------------


def _settings_lines(
    options: ExportOptions,
    webhook: Webhook | None,
    variables: Sequence[HeaderVariable],
) -> tuple[list[str], list[str]]:
    """The lines before `workers:` (version, scope) and after it (the webhook)."""
    before = ["version: 1"]
    if options.scope_prefix is not None:
        before += ["scope:", f"  externalIdPrefix: {scalar(options.scope_prefix)}"]
    after = webhook_lines(webhook, variables) if webhook is not None else []
    return before, after


def _preamble(options: ExportOptions, what: str) -> list[str]:
    modeline = [] if options.schema_ref is None else [f"{MODELINE}{options.schema_ref}"]
    return [
        *modeline,
        f"{EXPORT_MARK} from the live account.",
        *(f"# {line}" for line in textwrap.wrap(what, _COMMENT_WIDTH, break_long_words=False)),
    ]


def _scope_text(options: ExportOptions, which: str = "") -> str:
    """'Every open agreement with an externalId [starting "ENG-"][ whose ...], sorted ...'."""
    scope = "" if options.scope_prefix is None else f" starting {quoted(options.scope_prefix)}"
    return f"Every open agreement with an externalId{scope}{which}, sorted by externalId."


def _file_text(
    options: ExportOptions,
    entries: Sequence[WorkerEntry],
    *,
    settings_before: list[str],
    settings_after: list[str],
    notes: list[str],
    with_workers_key: bool,
    what: str,
) -> str:
    lines = _preamble(options, what) + _unfinished_lines(entries) + notes
    lines += settings_before
    if with_workers_key:
        lines.append("workers:" if entries else "workers: []")
        for entry in entries:
            lines += entry.lines
    lines += settings_after
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class _Grouping:
    """How `--split-by` groups workers: the value, and how files and comments name it."""

    field: str
    prefix: str  # of the file names
    key: Callable[[WorkerEntry], str | None]
    unset_slug: str
    unset_text: str


_GROUPINGS = {
    SplitBy.COUNTRY: _Grouping(
        COUNTRY, "country", lambda entry: entry.country_iso, "unknown", "is not shown yet"
    ),
    SplitBy.JOB_TITLE: _Grouping(  # the field's own name
        str(SplitBy.JOB_TITLE), "job-title", lambda entry: entry.job_title, "none", "is not set"
    ),
}


def _split_files(
    options: ExportOptions,
    split_by: SplitBy,
    entries: Sequence[WorkerEntry],
    settings: tuple[list[str], list[str]],
    unmanaged_lines: list[str],
    conflict_lines: list[str],
) -> tuple[ExportedFile, ...]:
    """`00-settings.yaml` (version, scope, webhook) and one file of workers per group."""
    settings_text = _file_text(
        options,
        (),
        settings_before=settings[0],
        settings_after=settings[1] + unmanaged_lines,
        notes=conflict_lines,
        with_workers_key=False,
        what="The settings; the workers are in the other files of this directory.",
    )
    files = [ExportedFile(SETTINGS_FILE, settings_text)]
    grouping = _GROUPINGS[split_by]
    groups: dict[str | None, list[WorkerEntry]] = defaultdict(list)
    for entry in entries:
        groups[grouping.key(entry)].append(entry)
    for name, value in _group_file_names(grouping, groups):
        shown = grouping.unset_text if value is None else f"is {quoted(value)}"
        text = _file_text(
            options,
            groups[value],
            settings_before=[],
            settings_after=[],
            notes=[],
            with_workers_key=True,
            what=_scope_text(options, f" whose {grouping.field} {shown}"),
        )
        files.append(ExportedFile(name, text))
    return tuple(files)


def _group_file_names(
    grouping: _Grouping, groups: dict[str | None, list[WorkerEntry]]
) -> list[tuple[str, str | None]]:
    """A distinct, stable file name for each group: the unset value first, then sorted."""
    taken = {SETTINGS_FILE}
    named: list[tuple[str, str | None]] = []
    values: list[str | None] = [None] if None in groups else []
    values += sorted(value for value in groups if value is not None)
    for value in values:
        slug = grouping.unset_slug if value is None else _slug(value)
        stem, number = f"{grouping.prefix}-{slug}", 1
        name = f"{stem}.yaml"
        while name in taken:  # "Engineer" and "engineer" slug alike
            number += 1
            name = f"{stem}-{number}.yaml"
        taken.add(name)
        named.append((name, value))
    return named


def _slug(value: str) -> str:
    """A file-name-safe form of a value: ASCII letters and digits joined by hyphens."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:_SLUG_LENGTH].rstrip("-") or "other"
