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
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reconciler.plan.signing import PREFIX, UntrustedPlan

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
