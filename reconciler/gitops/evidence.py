"""After an account's apply: what its approvals were, said on its outcome, and the evidence of
each payrun paid kept where it outlives the run.

`reconciler apply --records-out DIR` (the core, `reconciler.plan.approvals`) writes a signed
record per payrun paid, `DIR/<account>/<paylist key>.json`, and the verdicts of its approvals,
`DIR/approvals.json`. The landing keeps the records on the repository's branch
`reconciler/records` through the forge (`Records.keep_files`: GitHub's Git database API,
GitLab's commits API), as `records/<account>/<paylist key>.json`: a branch nobody's workflow
runs from, whose history git keeps as long as the repository, where an auditor reads them a
year later (`reconciler report --records origin/reconciler/records`); job logs and artifacts
expire. The outcome says who approved each payrun paid, and what each payrun not paid waits for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from reconciler.accounts.saved_view import read_document
from reconciler.errors import ReconcilerError

#: The branch the records are kept on, and the folder they are in there.
RECORDS_BRANCH = "reconciler/records"
RECORDS_FOLDER = "records"
#: The verdicts `apply --records-out DIR` writes beside the records.
VERDICTS = "approvals.json"
#: The exit status of `apply` when a change of the approvals policy waits for its approvals:
#: nothing was applied, and the merge stays pending.
POLICY_WAITS = 4


class Records(Protocol):
    """A forge that keeps files on a branch of the repository."""

    def keep_files(self, branch: str, files: Mapping[str, str], message: str) -> str:
        """One commit of `files` (path: text) on `branch`, never forced; its SHA."""
        ...


@dataclass(frozen=True, slots=True)
class Approvals:
    """What the verdicts say: each payrun paid with its approvers, each payrun waiting with
    what it needs and has, and the policy change waiting (if any)."""

    approved: tuple[str, ...] = ()  # 'paylist["2027-01"] approved by alice, bob'
    waiting: tuple[str, ...] = ()  # 'paylist["2027-01"] needs 2 of alice, bob, dave: 1 (...)'
    policy: str | None = None  # 'needs 2 of alice, bob: has 1'
    #: Why each approval of a payrun waiting did not count ('carol (#31): the author's ...').
    not_counted: tuple[str, ...] = ()

    def parts(self) -> list[str]:
        """'waiting for approvals: ...', 'approved: ...': what the outcome says first (a forge
        may cut it: GitHub keeps 140 characters of a status), what waits before who approved."""
        parts = []
        if self.waiting:
            parts.append(f"waiting for approvals: {'; '.join(self.waiting)}")
        if self.approved:
            parts.append(f"approved: {', '.join(self.approved)}")
        return parts

    def why(self) -> list[str]:
        """'not counted: ...', what the outcome says last (the longest, and the least read)."""
        return [f"not counted: {'; '.join(self.not_counted)}"] if self.not_counted else []


def read_approvals(folder: Path) -> Approvals:
    """The verdicts `apply` wrote in `folder` (none written: nothing to say)."""
    path = folder / VERDICTS
    if not path.exists():
        return Approvals()
    document = read_document(path)
    found = _verdicts(document)
    if found is None:
        raise ReconcilerError(f"{path}: not the verdicts of an apply's approvals")
    approved, waiting, policy, why = [], [], None, []
    for verdict in found:
        payrun = str(verdict.get("payrun") or "")
        needs_has = str(verdict.get("needs_has") or verdict.get("missing") or "")
        if payrun.startswith("policy"):  # the change of the policy itself (`policy.approvals`)
            policy = needs_has if verdict.get("missing") else None
            continue
        missing = verdict.get("missing")
        if missing:
            unread = "" if str(missing).startswith("needs") else f" ({missing})"
            waiting.append(f'paylist["{payrun}"] {needs_has}{unread}')
            why += [str(line) for line in verdict.get("not_counted") or [] if line not in why]
            continue
        logins = [str(a.get("login")) for a in verdict.get("approvals") or []
                  if isinstance(a, Mapping)]  # fmt: skip
        if logins:
            approved.append(f'paylist["{payrun}"] by {", ".join(logins)}')
    return Approvals(tuple(approved), tuple(waiting), policy, tuple(why))


def _verdicts(document: Any) -> list[Mapping[str, Any]] | None:
    """The verdicts, a list of `Verdict.as_dict()` (alone, under `verdicts`, or by payrun)."""
    if isinstance(document, Mapping):
        listed = document.get("verdicts")
        if listed is None and all(isinstance(v, Mapping) for v in document.values()):
            listed = list(document.values())
        document = listed
    if not isinstance(document, list) or not all(isinstance(v, Mapping) for v in document):
        return None
    return document


def record_files(folder: Path) -> dict[str, str]:
    """The records `apply` wrote in `folder`, by their path on the records branch."""
    files = {}
    for path in sorted(folder.glob("*/*.json")):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ReconcilerError(f"{path}: cannot be read: {error}") from None
        files[f"{RECORDS_FOLDER}/{path.parent.name}/{path.name}"] = text
    return files


def keep_records(forge: Records, folder: Path, account: str, sha: str, log_url: str) -> str | None:
    """Keep the records of `folder` on the records branch. None: kept (or none to keep); else
    why not, to say on the outcome (the money is paid all the same)."""
    try:
        files = record_files(folder) if folder.is_dir() else {}
        if files:
            message = f"reconciler: the records of {account} applied at {sha[:12]}\n\n{log_url}\n"
            forge.keep_files(RECORDS_BRANCH, files, message)
    except ReconcilerError as error:
        return f"its records could not be kept on {RECORDS_BRANCH}: {error.one_line()}"
    return None
