"""The nouns of an adoption: what was taken from the account, what was not and why, and
which variable must hold a value only the service has."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.desired.ignore import address_matches
from reconciler.render.base import clean
from reconciler.words import plural

#: What each adopted item does to the files.
CHANGED, ADDED, REMOVED = "changed", "added", "removed"


@dataclass(frozen=True, slots=True)
class Adopted:
    """One thing taken from the account: its address (`worker["ENG-002"].<field>`,
    `worker["ENG-009"]`, `webhook.event_types`), what it does to the files, and a line for
    people (never a secret: header values are never shown)."""

    address: str
    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class NotAdopted:
    """Drift left in the account as it is, and why."""

    address: str
    why: str


@dataclass(frozen=True, slots=True)
class Variable:
    """A `${NAME}` the adopted files read, which must hold what the service has."""

    name: str
    holds: str  # 'the value of the webhook header "X-Token"'


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's text before and after (`before` is None for a file adopt creates)."""

    name: str
    before: str | None
    after: str


@dataclass(frozen=True, slots=True)
class Adoption:
    """Everything one adopt found: the edits, the items, what it left, what to set."""

    files: tuple[FileChange, ...] = ()
    adopted: tuple[Adopted, ...] = ()
    not_adopted: tuple[NotAdopted, ...] = ()
    variables: tuple[Variable, ...] = ()
    ignored: int = 0  # drift an ignore rule keeps out (counted, never adopted)
    diff_text: str | None = None  # the diff, for an adoption read back from its document
    passed_over: int = 0  # what `--only` left out (for people only: not in the document)
    #: What it does to money and to where secrets go (`reconciler.adopt.risks`): read first.
    risks: tuple[str, ...] = ()

    @property
    def anything(self) -> bool:
        return bool(self.files)

    def diff(self) -> str:
        """A unified diff of every file changed, as `git diff` shows one."""
        if self.diff_text is not None:
            return self.diff_text
        parts: list[str] = []
        for change in self.files:
            before = [] if change.before is None else change.before.splitlines(keepends=True)
            after = change.after.splitlines(keepends=True)
            old = "/dev/null" if change.before is None else f"a/{change.name}"
            lines = difflib.unified_diff(before, after, old, f"b/{change.name}")
            parts += (line if line.endswith("\n") else line + "\n" for line in lines)
        return "".join(parts)

    def document(self) -> dict[str, Any]:
        """`adopt --format json`: every field, each file's new text whole (no secret is ever
        in one: header values are references), for `reconciler github adopt-pr`."""
        return {
            "files": [
                {"path": change.name, "created": change.before is None, "content": change.after}
                for change in self.files
            ],
            "adopted": [
                {"address": item.address, "kind": item.kind, "detail": item.detail}
                for item in self.adopted
            ],
            "not_adopted": [{"address": i.address, "why": i.why} for i in self.not_adopted],
            "variables": [{"name": v.name, "holds": v.holds} for v in self.variables],
            "ignored": self.ignored,
            "diff": self.diff(),
            "risks": list(self.risks),
        }

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> Adoption:
        """The adoption `document` wrote; `ValueError` when it is not one."""
        try:
            return cls(
                files=tuple(
                    FileChange(f["path"], None if f["created"] else "", f["content"])
                    for f in document["files"]
                ),
                adopted=tuple(
                    Adopted(a["address"], a["kind"], a["detail"]) for a in document["adopted"]
                ),
                not_adopted=tuple(
                    NotAdopted(n["address"], n["why"]) for n in document["not_adopted"]
                ),
                variables=tuple(Variable(v["name"], v["holds"]) for v in document["variables"]),
                ignored=int(document["ignored"]),
                diff_text=str(document["diff"]),
                risks=tuple(str(risk) for risk in document.get("risks", ())),
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"not the JSON of `reconciler adopt`: {error}") from None

    def added(self) -> tuple[Adopted, ...]:
        return tuple(item for item in self.adopted if item.kind == ADDED and _is_worker(item))

    def removed(self) -> tuple[Adopted, ...]:
        return tuple(item for item in self.adopted if item.kind == REMOVED and _is_worker(item))

    def report(self) -> str:
        """What was adopted, what was not and why, and the variables to set: for people (an
        address or a value from the service with a control character or a bidi override shows
        it escaped, as the plan does, never acting on the terminal)."""
        lines: list[str] = []
        if self.risks:
            lines.append("Review first: what this adoption does to money and to where secrets go:")
            lines += (f"  ! {clean(risk)}" for risk in self.risks)
        if self.adopted:
            files = plural(len(self.files), "file")
            lines.append(f"Adopted {plural(len(self.adopted), 'live change')} into {files}:")
            lines += (
                f"  {_SIGNS[item.kind]} {clean(item.address)}: {clean(item.detail)}"
                for item in self.adopted
            )
        else:
            lines.append(self._nothing())
        if self.ignored:
            lines.append(f"{plural(self.ignored, 'drifted field')} kept out by ignore rules.")
        if self.not_adopted:
            lines.append("Not adopted:")
            lines += (f"  ! {clean(item.address)}: {clean(item.why)}" for item in self.not_adopted)
        if self.variables:
            lines.append("Set these variables wherever the files are planned (never in a file):")
            lines += (f"  {variable.name}: {clean(variable.holds)}" for variable in self.variables)
        return "\n".join(lines) + "\n"

    def _nothing(self) -> str:
        """Why nothing was adopted, as far as it is known: the files agree only when there
        was nothing to leave out, nothing to list and nothing ignored."""
        if self.variables:
            return "Nothing to adopt into the files: the variables below must change."
        if self.passed_over:
            left = plural(self.passed_over, "live change")
            return f"Nothing to adopt that --only names: it leaves out {left}."
        if self.not_adopted or self.ignored:
            return "Nothing to adopt."
        return "Nothing to adopt: the files already say what the account has."


_SIGNS = {CHANGED: "~", ADDED: "+", REMOVED: "-"}


def _is_worker(item: Adopted) -> bool:
    return item.address.startswith("worker[") and item.address.endswith("]")


def selects(patterns: Iterable[str], address: str) -> bool:
    """Whether `--only` keeps `address`: no pattern, or one naming it or an address it lies
    under (`worker["ENG-002"]` keeps its fields, `webhook` its url and headers), as ignore
    rules name drift."""
    patterns = list(patterns)
    return not patterns or any(address_matches(pattern, address) for pattern in patterns)
