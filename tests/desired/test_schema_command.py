"""`reconciler schema`: the shipped schema, printed or written where editors find it offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import ROOT
from tests.cli import reconciler as run

SHIPPED = ROOT / "schemas" / "desired-state.schema.json"


def test_prints_the_shipped_schema() -> None:
    printed = run("schema")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == SHIPPED.read_text(encoding="utf-8")


def test_writes_a_copy_creating_its_folder_and_replaces_an_older_copy(tmp_path: Path) -> None:
    target = tmp_path / "schemas" / "desired-state.schema.json"
    first = run("schema", "--out", str(target), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert target.read_bytes() == SHIPPED.read_bytes()
    older = json.loads(target.read_text()) | {"title": "an older copy"}
    target.write_text(json.dumps(older))
    again = run("schema", "--out", str(target), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert target.read_bytes() == SHIPPED.read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temporary


@pytest.mark.parametrize(
    "content", ["# my notes\n", '{"$id": "https://example.com/mine.json"}', ""]
)
def test_never_replaces_a_file_that_is_not_a_copy(tmp_path: Path, content: str) -> None:
    target = tmp_path / "desired-state.schema.json"
    target.write_text(content)
    refused = run("schema", "--out", str(target), cwd=tmp_path)
    assert refused.returncode == 1
    assert "is not a copy of this schema: refusing to replace it" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert target.read_text() == content


def test_never_writes_through_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "docker-compose.yml"
    elsewhere.write_text("services: {}\n")
    link = tmp_path / "desired-state.schema.json"
    link.symlink_to(elsewhere)
    refused = run("schema", "--out", str(link), cwd=tmp_path)
    assert refused.returncode == 1, refused.stderr
    assert elsewhere.read_text() == "services: {}\n"


@pytest.mark.parametrize(("which", "files"), [("desired-state", "a desired-state file"),
                                              ("accounts", "reconciler.yaml")])  # fmt: skip
def test_the_next_step_asks_for_the_modeline_only_where_it_is_missing(
    tmp_path: Path, which: str, files: str
) -> None:
    """`export` writes the modeline already: the hint must not ask every file to get it."""
    done = run("schema", which, "--out", str(tmp_path / "s.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"Next: if {files} does not start with `# yaml-language-server: $schema=...` yet "
        "(`reconciler export` writes that line), start it with "
        "`# yaml-language-server: $schema=<path to s.json>`."
    )
    assert "start each" not in done.stderr
