"""Identity across scripts: a Latin `ABC-1` and a Cyrillic `АВС-1` each pass alone, but read
as one; both are refused at their lines (Unicode TS #39's confusable skeleton, through ICU),
in one file or two. An externalId that keeps a character beyond ASCII is shown escaped in the
text and Markdown plans, as a payment's description is (issue 39, item 5)."""

from __future__ import annotations

from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

LATIN = "ABC-1"
CYRILLIC = "\u0410\u0412\u0421-1"  # АВС-1


def _worker(external_id: str, email: str) -> str:
    return (
        f'  - externalId: "{external_id}"\n'
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        f"    workerEmail: {email}\n"
        "    countryIso: GB\n"
    )


def test_two_ids_of_two_scripts_that_read_as_one_are_refused_at_both_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "team.yaml"
    text = "version: 1\nworkers:\n" + _worker(LATIN, "a@example.com")
    path.write_text(text + _worker(CYRILLIC, "b@example.com"), encoding="utf-8")

    result = reconciler("validate", str(path))

    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    rows = [row for row in output.splitlines() if "confusable" in row]
    assert any("team.yaml:3:" in row and "'ABC-1' reads as" in row for row in rows), output
    assert any(
        "team.yaml:9:" in row and "'\\u0410\\u0412\\u0421-1' reads as" in row for row in rows
    )
    assert CYRILLIC not in output


def test_look_alikes_in_two_files_of_a_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "version: 1\nworkers:\n" + _worker(LATIN, "a@example.com"), encoding="utf-8"
    )
    (tmp_path / "b.yaml").write_text(
        "workers:\n" + _worker(CYRILLIC, "b@example.com"), encoding="utf-8"
    )
    result = reconciler("validate", str(tmp_path))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "a.yaml:3:" in output and "b.yaml:2:" in output and "confusable" in output


def test_a_non_ascii_external_id_is_shown_escaped_in_text_and_markdown(
    tmp_path: Path, sandbox: SandboxServer
) -> None:
    kept = "ENG-M\u00fcller"  # Latin with an umlaut: one script, kept
    path = tmp_path / "team.yaml"
    path.write_text(
        'version: 1\nscope:\n  externalIdPrefix: "ENG-M"\nworkers:\n'
        + _worker(kept, "m@example.com"),
        encoding="utf-8",
    )
    for fmt in ("text", "markdown"):
        planned = reconciler("plan", str(path), "--format", fmt, server=sandbox)
        assert planned.returncode == 0, planned.stdout + planned.stderr
        assert 'worker["ENG-M\\u00fcller"]' in planned.stdout, planned.stdout
        assert kept not in planned.stdout
