"""The webhook URL is a credential: once the files stop writing a live URL, its path and query
appear in no output — text, JSON, Markdown, the comment and the full plan, the saved plan,
export's file and messages, debug logs — only its scheme, host and a fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

SECRET_PATH = "T0AB12CD/B0EF34GH/s3cr3tHookPathXyZ"
LIVE_URL = f"https://hooks.example.com/{SECRET_PATH}/in?sig=q5ecr3tQueryV4lue"
SECRETS = ("s3cr3tHookPathXyZ", "q5ecr3tQueryV4lue", SECRET_PATH)
SEED = f"""\
workers:
  - {{externalId: REV-001, firstName: Ada, lastName: Lovelace, email: ada@example.com,
     country: GB, jobTitle: Engineer, status: ACTIVE}}
webhook:
  url: {LIVE_URL}
  event_types: [KYC]
"""
DESIRED = """\
version: 1
scope:
  externalIdPrefix: "REV-"
workers:
  - {externalId: REV-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,
     workerEmail: ada@example.com, countryIso: GB, jobTitle: Engineer}
webhook:
  url: URL
  event_types: [KYC]
"""


@pytest.fixture
def account(tmp_path: Path) -> Iterator[SandboxServer]:
    (tmp_path / "seed.yaml").write_text(SEED)
    with SandboxServer(seed=tmp_path / "seed.yaml", process_delay_ms=0) as server:
        yield server


def _outputs(server: SandboxServer, tmp_path: Path, url: str) -> str:
    """Everything the reconciler prints or writes about this account, joined."""
    path = tmp_path / "desired.yaml"
    path.write_text(DESIRED.replace("URL", url))
    saved, full, exported = tmp_path / "plan.json", tmp_path / "full.md", tmp_path / "export.yaml"
    debug = ("--log-level", "debug", "--log-format", "json")
    runs = [
        reconciler(*debug, "plan", str(path), "--out", str(saved), server=server),
        reconciler("plan", str(path), "--format", "json", server=server),
        reconciler("plan", str(path), "--format", "markdown", server=server),
        reconciler("drift", str(path), "--strict", "--format", "markdown", server=server),
        reconciler("comment", str(path), "--full", str(full), server=server),
        reconciler("comment", str(saved), server=server),
        reconciler(
            *debug, "export", "--scope-prefix", "REV-", "--out", str(exported), server=server
        ),
        reconciler(*debug, "apply", str(saved), server=server),
    ]
    assert [r.returncode for r in runs] == [0, 0, 0, 2, 0, 0, 0, 0], [r.stderr for r in runs]
    files = "".join(p.read_text() for p in (saved, full, exported))
    return files + "".join(r.stdout + r.stderr for r in runs)


def test_a_live_url_the_file_stops_using_is_never_printed(
    account: SandboxServer, tmp_path: Path
) -> None:
    everything = _outputs(account, tmp_path, "https://hooks.example.com/new/in")

    for secret in SECRETS:
        assert secret not in everything
    fingerprint = hashlib.sha256(LIVE_URL.encode()).hexdigest()[:8]
    assert f"https://hooks.example.com/\u2026 (fingerprint {fingerprint})" in everything
    assert "https://hooks.example.com/new/in" in everything  # the file's own URL is shown
    exported = (tmp_path / "export.yaml").read_text()  # after the apply: the new URL
    assert '  url: "${WEBHOOK_URL}"' in exported


def test_a_url_written_literally_in_the_file_is_shown(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "desired.yaml"
    path.write_text(DESIRED.replace("URL", LIVE_URL).replace("[KYC]", "[KYC, PAYMENT]"))
    result = reconciler("plan", str(path), "--format", "json", server=account)

    assert result.returncode == 0, result.stderr
    (change,) = json.loads(result.stdout)["resource_changes"]
    assert change["change"]["before"]["url"] == LIVE_URL  # in git already: nothing to hide
