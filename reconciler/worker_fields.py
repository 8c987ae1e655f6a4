"""A worker's fields, declared once: the one table the model, the rules, the diff, the
fingerprint, export, adopt, the encoders and the saved plan's schema are driven by.

Each row says how a field is spelt in the file (the invitation item's own name, interface
§2.2), which attribute holds it in the typed models, what the worker list calls it (§2.1) and
where it stands there, how a plan compares it, which text rules `validate` applies, whether a
plan shows it, whether export (and so adopt) writes it, and whether the invitation sends it.
A field no code reads by name needs no attribute: the models carry it in `more`, as text.

Pure data, below every layer: `desired` and `service`, peers, both read it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any


class Compare(enum.Enum):
    """How a plan compares a field with the live agreement (product spec, "What a plan
    decides"); drift is reported, never fixed in place."""

    NEVER = "never"  #: not compared: the identity, or a field the service never shows
    SHOWN = "shown"  #: once the service shows it (null while an invitation is unanswered)
    LEGAL_NAME = "legal name"  #: once it or any name shows: a Business is known by it
    EMAIL = "email"  #: by mailbox, ignoring case (`identity.email_key`)
    COUNTRY = "country"  #: by ISO code (the service answers names), once shown
    TEXT = "text"  #: always, an empty text as none


class Exported(enum.Enum):
    """What `export` writes for a field (and `adopt`, which writes a new worker as export
    does and a drifted field's live value)."""

    ALWAYS = "always"  #: the value the service shows, which it always shows
    KNOWN = "known"  #: the shown value, a placeholder until the service shows it
    WHEN_SET = "when set"  #: only when the service shows a value
    KIND = "kind"  #: Business when a legal name shows, Worker when a name does, else unknown
    NEVER = "never"  #: not shown, so not exported


class Check(enum.Enum):
    """The text rules `validate` applies beyond the schema."""

    NONE = "none"  #: the schema's own (an enum, a pattern), or the identity's rules
    LINE = "line"  #: shown as it is: no control character may hide in it
    BODY = "body"  #: an e-mail's body: lines and tabs are its own
    EMAIL = "email"  #: a valid address (no DNS look-up), unique across the files


class Value(enum.Enum):
    """How a field's value in the file becomes the model's: the reader that builds a worker
    (`DesiredWorker.from_fields`) converts it once, as it reads it (the rules validated it)."""

    TEXT = "text"  #: as written
    AMOUNT = "amount"  #: a plain decimal's text (or number), as a Decimal of two places
    DAY = "day"  #: YYYY-MM-DD (or the date YAML reads it as), as a date


_TEXT_SCHEMA: Mapping[str, Any] = {"$ref": "#/$defs/text"}


@dataclass(frozen=True, slots=True, eq=False)
class WorkerField:
    """One field of a worker.

    `key`: the file's and the invitation's name. `attribute`: the typed models' attribute
    (`DesiredWorker`, `Invitation`), None for a text carried in their `more`. `live`: the
    worker list's name, None when the service never shows it; `live_attribute` the live
    `Worker`'s, None for a text carried in its `more`; `live_rank`: its place in the list
    (§2.1), the order `ignoreChanges` names and the fingerprint read them in.
    `schema`: the JSON Schema of its value in a desired-state file; `saved`: in a saved plan.
    `value`: how the reader converts the file's value (a field without an attribute is text).
    """

    key: str
    attribute: str | None
    live: str | None
    live_attribute: str | None = None
    live_rank: int = 0
    required: bool = False
    compare: Compare = Compare.NEVER
    check: Check = Check.LINE
    export: Exported = Exported.WHEN_SET
    shown: bool = True  #: in a plan's before and after
    sent: bool = True  #: in the invitation item
    schema: Mapping[str, Any] = field(default_factory=lambda: _TEXT_SCHEMA)
    saved: Mapping[str, Any] | None = None  #: None: text
    value: Value = Value.TEXT

    def __post_init__(self) -> None:
        for name in (self.attribute, self.live_attribute):
            if name is not None and not name.isidentifier():  # compiled into readers
                raise ValueError(f"{self.key}: {name!r} is not an attribute's name")
        if self.attribute is None and self.value is not Value.TEXT:
            raise ValueError(f"{self.key}: a field without an attribute is text (`more`)")

    @property
    def compared(self) -> bool:
        return self.compare is not Compare.NEVER

    def getter(self) -> Callable[[Any], Any]:
        """Reads this field of a `DesiredWorker` or an `Invitation` (from `more` when it has
        no attribute)."""
        return _getter(self.attribute, self.key)

    def live_getter(self) -> Callable[[Any], Any]:
        """Reads this field of a live `Worker` (None when the service never shows it)."""
        if self.live is None:
            return lambda _: None
        return _getter(self.live_attribute, self.key)


def _getter(attribute: str | None, key: str) -> Callable[[Any], Any]:
    if attribute is not None:
        return attrgetter(attribute)
    return lambda holder: more_value(holder.more, key)


def more_value(more: tuple[tuple[str, Any], ...], key: str) -> Any:
    """The value of `key` among a model's `more` (its fields without an attribute), or None."""
    for name, value in more:
        if name == key:
            return value
    return None


class WorkerFields:
    """The table: the fields in the file's order (the schema's, a plan's and export's), with
    the names of the few a rule of its own is about. Hashed by identity, so what each user
    derives from it is made once per table (`functools.cache`)."""

    __slots__ = ("by_key", "fields")

    def __init__(self, fields: tuple[WorkerField, ...]) -> None:
        self.fields = fields
        self.by_key = {item.key: item for item in fields}

    def __iter__(self) -> Iterator[WorkerField]:
        return iter(self.fields)

    def adding(self, *fields: WorkerField) -> WorkerFields:
        """This table with `fields` added after its own."""
        return WorkerFields((*self.fields, *fields))

    @property
    def compared(self) -> tuple[WorkerField, ...]:
        """The fields a plan compares, in the order the service lists them (§2.1): the ones
        `ignoreChanges` may name."""
        return tuple(
            sorted((item for item in self.fields if item.compared), key=lambda f: f.live_rank)
        )

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(item.key for item in self.fields if item.required)


#: The fields a rule of its own is about: the identity, the kind, the mailbox, the legal name
#: a Business is known by, and the country the service answers by name.
EXTERNAL_ID = "externalId"
TYPE_OF_WORKER = "typeOfWorker"
EMAIL = "workerEmail"
LEGAL_NAME = "workerLegalName"
COUNTRY = "countryIso"
#: What a period payrun pays the worker (`desired.payruns`, `plan.periods`): never sent.
PAY = "pay"
#: The days a worker's contract ended and it is hired again (product spec, "The service's
#: screens"): the plan decides with them; never sent, shown or compared.
ENDED = "ended"
REHIRE = "rehire"
_DAY_SCHEMA: Mapping[str, Any] = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}

WORKER_FIELDS = WorkerFields(
    (
        WorkerField(
            EXTERNAL_ID,
            "external_id",
            "externalId",
            "external_id",
            live_rank=7,
            required=True,
            check=Check.NONE,  # `identity.external_id_problem`
            export=Exported.ALWAYS,
        ),
        WorkerField(
            TYPE_OF_WORKER,
            "type_of_worker",
            None,
            required=True,
            check=Check.NONE,
            export=Exported.KIND,
            schema={"enum": ["Worker", "Business"]},
        ),
        WorkerField(
            "workerName",
            "worker_name",
            "firstName",
            "first_name",
            live_rank=1,
            required=True,
            compare=Compare.SHOWN,
            export=Exported.KNOWN,
        ),
        WorkerField(
            "workerSurname",
            "worker_surname",
            "lastName",
            "last_name",
            live_rank=2,
            required=True,
            compare=Compare.SHOWN,
            export=Exported.KNOWN,
        ),
        WorkerField(
            LEGAL_NAME,
            "worker_legal_name",
            "legalName",
            "legal_name",
            live_rank=3,
            compare=Compare.LEGAL_NAME,
        ),
        WorkerField(
            EMAIL,
            "worker_email",
            "email",
            "email",
            live_rank=4,
            required=True,
            compare=Compare.EMAIL,
            check=Check.EMAIL,
            export=Exported.ALWAYS,
        ),
        WorkerField(
            COUNTRY,
            "country_iso",
            "country",
            "country_iso",  # mapped back from the name the service answers (`country`)
            live_rank=6,
            required=True,
            compare=Compare.COUNTRY,
            check=Check.NONE,
            export=Exported.KNOWN,
            schema={"type": "string", "pattern": "^[A-Z]{2}$"},  # and the codes' enum
        ),
        WorkerField(
            "jobTitle",
            "job_title",
            "jobTitle",
            "job_title",
            live_rank=5,
            compare=Compare.TEXT,
        ),
        WorkerField(
            "workerEmailText",
            "worker_email_text",
            None,
            check=Check.BODY,
            export=Exported.NEVER,
            shown=False,
        ),
        # --- pay (issue 47): the file's alone, read by the period payruns ---
        WorkerField(
            PAY,
            "pay",
            None,
            check=Check.NONE,  # `desired.payruns.amount_problem`, from the text as written
            export=Exported.NEVER,  # `export --with-pay` writes it from the payments made
            shown=False,
            sent=False,
            schema={"$ref": "#/$defs/amount"},
            saved={"type": "string", "pattern": "^(0|[1-9][0-9]*)\\.[0-9]{2}$"},
            value=Value.AMOUNT,
        ),
        WorkerField(
            ENDED,
            "ended",
            None,
            check=Check.NONE,  # a day of the calendar: `rules`
            export=Exported.NEVER,  # adopt writes it for a worker closed in the service
            shown=False,
            sent=False,
            schema=_DAY_SCHEMA,
            saved=_DAY_SCHEMA,
            value=Value.DAY,
        ),
        WorkerField(
            REHIRE,
            "rehire",
            None,
            check=Check.NONE,
            export=Exported.NEVER,
            shown=False,
            sent=False,
            schema=_DAY_SCHEMA,
            saved=_DAY_SCHEMA,
            value=Value.DAY,
        ),
    )
)
