"""Through the command line: a plan shows a worker's text as the file holds it.

A name holding a bidi override (U+202E) drew the rest of its line reversed in the plan and the
pull request's comment, and one holding a zero-width space (U+200B) or a Hangul filler looked
like another name: such characters are shown as their escapes, in text and in Markdown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

FILE = """\
version: 1
scope:
  externalIdPrefix: "NEW-"
workers:
  - externalId: NEW-001
    typeOfWorker: Worker
    workerName: "Ada\\u202e\\u2066 gnirts"
    workerSurname: "Love\\u200blace"
    workerEmail: ada.new@example.com
    countryIso: GB
    jobTitle: "Design\\u3164lead"
"""
EMAIL_FILE = """\
version: 1
scope:
  externalIdPrefix: "NEW-"
workers:
  - externalId: NEW-001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: "ada@ex\\u0430mple.com"
    countryIso: GB
"""


@pytest.mark.parametrize("output", ["text", "markdown"])
def test_hidden_characters_of_a_worker_are_shown_escaped(
    sandbox: SandboxServer, tmp_path: Path, output: str
) -> None:
    path = tmp_path / "team.yaml"
    path.write_text(FILE, encoding="utf-8")

    result = reconciler("plan", str(path), "--format", output, server=sandbox)

    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    for hidden in ("\u202e", "\u2066", "\u200b", "\u3164"):
        assert hidden not in said, said
    assert '"Ada\\u202e\\u2066 gnirts"' in said, said
    assert '"Love\\u200blace"' in said and '"Design\\u3164lead"' in said, said


@pytest.mark.parametrize("output", ["text", "markdown"])
def test_an_invitations_look_alike_email_is_shown_escaped(
    sandbox: SandboxServer, tmp_path: Path, output: str
) -> None:
    """`ada@exаmple.com` (a Cyrillic а: a domain anyone may register) read as ada's own
    address in the invitation, where a payment to it shows `\\u0430`."""
    path = tmp_path / "team.yaml"
    path.write_text(EMAIL_FILE, encoding="utf-8")

    result = reconciler("plan", str(path), "--format", output, server=sandbox)

    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "\u0430" not in said, said
    assert '"ada@ex\\u0430mple.com"' in said, said
