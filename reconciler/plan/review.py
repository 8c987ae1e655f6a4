"""What a saved plan was reviewed as: the files it was made from, and in CI the pull request.

A saved plan records, inside what is signed, a keyed digest of the desired-state files it was
planned from and, when the plan job says so (`plan --pull-request N --head-sha SHA`), the pull
request and the commit of it that was planned. At merge the action applies the reviewed plan
only when all three are the merged pull request's and the merged files' (`check_review`);
otherwise it plans the merged files again and applies only an equal plan.

The digest covers each file's name (not its folder: the plan job reads the pull request's files
from another folder than the merge job) and the SHA-256 of its bytes: those the plan's load read
and parsed, never a second read (a file changed meanwhile would be signed as reviewed while the
plan reflects the earlier text). It is keyed with the plan key like every other hash in a saved
plan, so it says nothing of the files to a reader of the artifact.

A plan made again at merge is compared with the reviewed one by their changes only
(`compare_plans`): what each change does to which address, with which values. Fingerprints of
the live state and the time are left out, since a plan made later against a busier account may
still ask for exactly what the reviewer approved. Header values from `${VAR}` are compared by
their keyed HMACs: equal only when the value and the token are both unchanged, which errs on
the side of refusing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.plan.signing import PREFIX, UntrustedPlan
from reconciler.words import counted, plural

FILES_LABEL = b"reconciler saved-plan files v2"  # v1: of the files' texts, read again
#: A full commit id: SHA-1 (40 hex digits) or SHA-256 (64) for a repository that uses it.
COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class OtherReview(UntrustedPlan):
    """The saved plan was reviewed for other files, another pull request or commit."""


def files_digest(files: Iterable[tuple[str, str]], key: bytes) -> str:
    """The keyed digest of desired-state files given as (file name, SHA-256 of its bytes),
    in any order."""
    canonical = json.dumps(sorted(files), separators=(",", ":"), ensure_ascii=False)
    return PREFIX + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Review:
    """The files a plan was made from (their digest) and the pull request commit, if any."""

    files: str
    pull_request: int | None = None
    head_sha: str | None = None

    def as_record(self) -> dict[str, Any]:
        return {"files": self.files, "pull_request": self.pull_request, "head_sha": self.head_sha}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Review:
        return cls(record["files"], record["pull_request"], record["head_sha"])

    def describe(self) -> str:
        """'pull request #42 at commit 9fceb02d0ae5' or 'no pull request'."""
        if self.pull_request is None:
            return "no pull request"
        return f"pull request #{self.pull_request} at commit {self.head_sha}"


def check_review(recorded: Review, expected: Review, *, name: str) -> None:
    """Refuse a plan reviewed for another pull request, commit or files than `expected`."""
    differences = []
    if recorded.pull_request != expected.pull_request:
        differences.append("pull request")
    if recorded.head_sha != expected.head_sha:
        differences.append("head commit")
    if not hmac.compare_digest(recorded.files, expected.files):
        differences.append("desired-state files")
    if not differences:
        return
    raise OtherReview(
        f"{name} was not reviewed for this merge ({' and '.join(differences)} differ): it was "
        f"planned for {recorded.describe()}, and the merge is {expected.describe()}; "
        "nothing was applied",
        hint="the merge job plans the merged files again and applies them only if that plan "
        "makes exactly the reviewed changes",
    )


# --- the plan at merge against the reviewed plan --------------------------------------------

#: What a change record holds that is not part of what it does: the live state's fingerprint,
#: and a payrun's variance (what changed since the payrun paid before: what it is compared
#: with, which a payrun paid between the review and the merge moves, not what it pays).
_NOT_COMPARED = frozenset({"fingerprint", "variance"})

Record = Mapping[str, Any]


#: The kinds of difference, riskiest first: what nobody reviewed, then what was reviewed with
#: other values, then what the review saw but the merge would no longer do. Each with the phrase
#: a person reads after the change.
NEVER_REVIEWED = "planned now, but never reviewed"
CHANGED = "planned differently from the review"
NO_LONGER_PLANNED = "reviewed, but no longer planned"

#: Within a kind, the plan comment's order of risk: removals, the webhook, payruns, invitations.
_ACTION_RISK = {"inactivate": 20, "replace": 20, "webhook_create": 30, "webhook_update": 30}
_ACTION_RISK |= {"pay": 40, "invite": 60}

#: The merge-refused comment lists differences until this many characters, and counts the rest:
#: the plan at merge follows it in the same comment, within GitHub's 65,536.
MARKDOWN_LIST_LIMIT = 20_000

_HEAD = ":no_entry: **Not applied: the plan at merge differs from the reviewed plan.**"
_AFTER = "Review the new plan (open a pull request, or re-run the plan job) and merge again."


@dataclass(frozen=True, slots=True)
class PlanComparison:
    """The addresses only the reviewed plan changes, only the new one, and both but differently
    (each riskiest first)."""

    only_reviewed: tuple[str, ...]
    only_new: tuple[str, ...]
    different: tuple[str, ...]

    @property
    def equal(self) -> bool:
        return not (self.only_reviewed or self.only_new or self.different)

    def kinds(self) -> list[tuple[str, tuple[str, ...]]]:
        """Each kind of difference with its changes, riskiest kind first."""
        return [
            (NEVER_REVIEWED, self.only_new),
            (CHANGED, self.different),
            (NO_LONGER_PLANNED, self.only_reviewed),
        ]

    def describe(self) -> list[tuple[str, str]]:
        """Each difference as (change, what happened to it), for a person, riskiest first."""
        return [(change, what) for what, changes in self.kinds() for change in changes]

    def text(self) -> str:
        """Every difference, a line each, riskiest first."""
        lines = [f"  {change}: {what}" for change, what in self.describe()]
        return "\n".join(["The new plan differs from the reviewed plan:", *lines])

    def markdown(self, limit: int = MARKDOWN_LIST_LIMIT) -> str:
        """The merge-refused paragraph: the differences riskiest first, listed until `limit`
        characters, then how many of each kind are not listed."""
        listed: list[str] = []
        left: list[str] = []
        used = 0
        for what, changes in self.kinds():
            shown = 0
            for change in changes:
                line = f"- `{change}`: {what}"
                if used + len(line) + 1 > limit:
                    break
                listed.append(line)
                used += len(line) + 1
                shown += 1
            if shown < len(changes):
                left.append(f"{counted(len(changes) - shown)} of {counted(len(changes))} {what}")
        parts = [_HEAD, _summary(self.kinds()), "\n".join(listed)]
        if left:
            parts.append(f"_Not listed here: {'; '.join(left)}._")
        return "\n\n".join([*parts, _AFTER])


def _summary(kinds: list[tuple[str, tuple[str, ...]]]) -> str:
    found = [f"{plural(len(changes), 'change')} {what}" for what, changes in kinds if changes]
    return "Differences: " + "; ".join(found) + "."


def compare_plans(reviewed: Iterable[Record], new: Iterable[Record]) -> PlanComparison:
    """Compare two saved plans' change records (as `SavedPlan.records` holds them)."""
    before = _by_change(reviewed)
    after = _by_change(new)
    return PlanComparison(
        only_reviewed=_riskiest_first(before.keys() - after.keys()),
        only_new=_riskiest_first(after.keys() - before.keys()),
        different=_riskiest_first(
            key for key in before.keys() & after.keys() if before[key] != after[key]
        ),
    )


def _riskiest_first(keys: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    ordered = sorted(keys, key=lambda key: (_ACTION_RISK.get(key[1], 0), key[0], key[1]))
    return tuple(_label(key) for key in ordered)


def _by_change(records: Iterable[Record]) -> dict[tuple[str, str], str]:
    """Each record keyed by (address, action), its content as canonical JSON."""
    found: dict[tuple[str, str], str] = {}
    for record in records:
        content = {name: value for name, value in record.items() if name not in _NOT_COMPARED}
        found[(str(record["address"]), str(record["action"]))] = json.dumps(
            content, sort_keys=True, separators=(",", ":")
        )
    return found


def _label(key: tuple[str, str]) -> str:
    address, action = key
    return f"{address} ({action.replace('_', ' ')})"
