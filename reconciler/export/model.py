"""What an export is asked for, and what it produced: file texts and what needs a person."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from reconciler.service.models import Worker

#: Written where the service does not show a value yet; `reconciler validate` refuses it.
PLACEHOLDER = "TODO(export)"
#: The line every file export writes carries near its top: what `--force` may replace.
EXPORT_MARK = "# Written by `reconciler export`"
#: The first line of an exported file, before the schema's path: editors read it.
MODELINE = "# yaml-language-server: $schema="
#: The schema's `$id`: how a copy written by `reconciler schema` is recognised.
SCHEMA_ID = "https://reconciler.example/schemas/desired-state.schema.json"


class SplitBy(enum.StrEnum):
    """How `--split-by` groups workers into files (the desired-state field's own name)."""

    COUNTRY = "country"
    JOB_TITLE = "jobTitle"


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What to export and how to lay it out."""

    scope_prefix: str | None = None
    include_unmanaged: bool = False
    split_by: SplitBy | None = None
    schema_ref: str | None = None  # the modeline's `$schema=`; None: no modeline


@dataclass(frozen=True, slots=True)
class ExportedFile:
    """One file of the export: its name (inside the output directory when split) and text."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Unfinished:
    """An exported worker with fields the service does not show yet, left as placeholders."""

    external_id: str
    email: str
    status: str
    fields: tuple[str, ...]
    note: str | None = None  # why, when it is not simply an unanswered invitation


@dataclass(frozen=True, slots=True)
class HeaderVariable:
    """A webhook header value, or the webhook's URL, exported as `${variable}`: its value must
    be set to use the file (export cannot tell which part of a live value is a secret)."""

    variable: str
    header: str  # the header's name, or "url" for the URL
    in_url: bool = False


@dataclass(frozen=True, slots=True)
class Conflict:
    """An externalId with several open agreements: the first is exported, the rest listed."""

    external_id: str
    exported: Worker
    others: tuple[Worker, ...]


@dataclass(frozen=True, slots=True)
class Export:
    """The rendered file(s) and everything the command must tell the person running it."""

    files: tuple[ExportedFile, ...]
    workers: int
    unfinished: tuple[Unfinished, ...]
    unmanaged: tuple[Worker, ...]  # open agreements with no externalId
    outside_scope: int  # open agreements whose externalId is outside the scope prefix
    header_variables: tuple[HeaderVariable, ...]
    conflicts: tuple[Conflict, ...]
    webhook: bool

    @property
    def needs_placeholders(self) -> bool:
        """Whether a person must fill `TODO(export)` placeholders before the file can be used."""
        return bool(self.unfinished)
