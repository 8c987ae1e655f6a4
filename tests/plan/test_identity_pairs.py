"""Identities compare as people see them: each pair below is one person or one mailbox.

Live agreements are made in the sandbox over HTTP; the file names the same person in another
form. The plan must not invite again (nor inactivate and re-invite), and apply must send no
invitation: the sandbox's request log says what was sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler
from tests.sandbox.support import invitation

NFC_E = "\u00e9"  # é
NFD_E = "e\u0301"  # e and a combining acute accent

PAIRS = [
    ("an externalId in NFD beside the same one in NFC", f"ENG-Ren{NFC_E}", f"ENG-Ren{NFD_E}",
     "rene@example.com", "rene@example.com"),
    ("an email in NFD beside the same one in NFC", "ENG-1", "ENG-1",
     f"ren{NFC_E}@example.com", f"ren{NFD_E}@example.com"),
    ("a domain in punycode beside the same one in Unicode", "ENG-1", "ENG-1",
     "ada@xn--bcher-kva.example", "ada@b\u00fccher.example"),
    ("an email in other case", "ENG-1", "ENG-1", "Ada@Example.COM", "ada@example.com"),
]  # fmt: skip


def _desired(path: Path, external_id: str, email: str) -> Path:
    path.write_text(
        "version: 1\nscope: {externalIdPrefix: ENG-}\nworkers:\n"
        f"  - externalId: {json.dumps(external_id)}\n"
        "    typeOfWorker: Worker\n    workerName: Ada\n    workerSurname: Lovelace\n"
        f"    workerEmail: {json.dumps(email)}\n    countryIso: GB\n    jobTitle: Engineer\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("name", "live_id", "file_id", "live_email", "file_email"), PAIRS, ids=[p[0] for p in PAIRS]
)
def test_one_person_in_two_spellings_is_one_worker(
    sandbox: SandboxServer,
    tmp_path: Path,
    name: str,
    live_id: str,
    file_id: str,
    live_email: str,
    file_email: str,
) -> None:
    invited = httpx.post(
        f"{sandbox.base_url}/contract/workers/inviteWorkersBulkLocked",
        headers={"Authorization": f"Bearer {sandbox.token}"},
        json=[invitation(externalId=live_id, workerEmail=live_email)],
    )
    assert invited.is_success, invited.text
    path = _desired(tmp_path / "desired.yaml", file_id, file_email)

    planned = reconciler("plan", str(path), "--format", "json", server=sandbox)
    assert planned.returncode == 0, planned.stderr
    summary = json.loads(planned.stdout)["summary"]
    assert (summary["invite"], summary["inactivate"], summary["replace"]) == (0, 0, 0), summary
    assert summary["drifted"] == 0 and summary["conflicts"] == 0, summary

    since = httpx.get(f"{sandbox.base_url}/_sandbox/requests").json()[-1]["seq"]
    applied = reconciler("apply", str(path), "--auto-approve", server=sandbox)
    assert applied.returncode == 0, applied.stderr
    log = httpx.get(f"{sandbox.base_url}/_sandbox/requests", params={"since": since}).json()
    assert [e["path"] for e in log if e["method"] != "GET"] == []
