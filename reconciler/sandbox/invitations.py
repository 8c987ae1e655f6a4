"""Invitation items as the sandbox reads them (interface §2.2): every error in a batch at once,
and nothing created unless the whole batch is valid."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.sandbox.emails import email_key as mailbox_key
from reconciler.sandbox.problems import FieldError, Problem, validation_problem
from reconciler.sandbox.validation import ObjectReader

MAX_BATCH = 100
WORKER_TYPES = ("Worker", "Business")

INVITATION_FIELDS = (
    "workerName",
    "workerSurname",
    "typeOfWorker",
    "workerLegalName",
    "workerEmail",
    "countryIso",
    "jobTitle",
    "workerEmailText",
    "externalId",
)


@dataclass(frozen=True, slots=True)
class Invitation:
    """One valid invitation item (interface §2.2)."""

    name: str
    surname: str
    type_of_worker: str
    email: str
    country_iso: str
    legal_name: str | None = None
    job_title: str | None = None
    email_text: str | None = None
    external_id: str | None = None

    @property
    def email_key(self) -> str:
        return mailbox_key(self.email)


def read_invitation(
    value: object, index: int | None = None
) -> tuple[Invitation | None, list[FieldError]]:
    """One invitation item, or every error in it."""
    reader = ObjectReader(value, INVITATION_FIELDS, index=index)
    if not isinstance(value, dict):
        return None, reader.errors
    name = reader.string("workerName")
    surname = reader.string("workerSurname")
    type_of_worker = reader.choice("typeOfWorker", WORKER_TYPES)
    legal_name = reader.string("workerLegalName", required=type_of_worker == "Business")
    email = reader.email("workerEmail")
    country_iso = reader.country("countryIso")
    job_title = reader.string("jobTitle", required=False)
    email_text = reader.string("workerEmailText", required=False)
    external_id = reader.string("externalId", required=False)
    if external_id is not None and not external_id.strip():
        reader.fail("externalId", "must not be blank (omit it or send null)")
    if not reader.ok:
        return None, reader.errors
    assert name and surname and type_of_worker and email and country_iso
    return Invitation(
        name=name,
        surname=surname,
        type_of_worker=type_of_worker,
        email=email,
        country_iso=country_iso,
        legal_name=legal_name,
        job_title=job_title,
        email_text=email_text,
        external_id=external_id,
    ), []


def duplicates_within(indexed: Sequence[tuple[int, Invitation]]) -> list[FieldError]:
    """The same email (ignoring case) or the same externalId twice in one batch."""
    errors = []
    first_email: dict[str, int] = {}
    first_external: dict[str, int] = {}
    for index, item in indexed:
        if (seen := first_email.setdefault(item.email_key, index)) != index:
            errors.append(FieldError(f"repeats the email of item {seen}", "workerEmail", index))
        external_id = item.external_id
        if (
            external_id is not None
            and (seen := first_external.setdefault(external_id, index)) != index
        ):
            errors.append(FieldError(f"repeats the externalId of item {seen}", "externalId", index))
    return errors


def read_batch(body: object) -> list[Invitation]:
    """A whole valid batch, or a Problem that lists every error (nothing is created)."""
    if not isinstance(body, list):
        raise Problem(400, "the request body must be a JSON array of invitation items")
    if not body:
        raise Problem(400, "the batch is empty: send 1 to 100 invitation items")
    if len(body) > MAX_BATCH:
        raise Problem(413, f"the batch holds {len(body)} items; at most {MAX_BATCH} are allowed")
    indexed: list[tuple[int, Invitation]] = []
    errors: list[FieldError] = []
    for index, value in enumerate(body):
        item, item_errors = read_invitation(value, index)
        errors += item_errors
        if item is not None:
            indexed.append((index, item))
    errors += duplicates_within(indexed)
    if errors:
        raise validation_problem(sorted(errors, key=lambda e: e.index or 0), "the batch")
    return [item for _, item in indexed]
