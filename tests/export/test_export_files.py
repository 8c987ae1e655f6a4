"""Writing an export: refusal to overwrite, --force, atomic writes, and the schema's path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reconciler.export.files import (
    ExportError,
    check_target,
    schema_ref,
    schema_target,
    write_directory,
    write_file,
)
from reconciler.export.model import SCHEMA_ID, ExportedFile

REPOSITORY = Path(__file__).resolve().parents[2]


def _schema_copy(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"$id": SCHEMA_ID, "type": "object"}))


def test_schema_ref_is_relative_inside_the_repository() -> None:
    assert schema_ref(REPOSITORY) == "schemas/desired-state.schema.json"
    assert schema_ref(REPOSITORY / "examples") == "../schemas/desired-state.schema.json"


def test_no_copy_found_points_at_the_repository_s_schemas_folder(tmp_path: Path) -> None:
    """Where `reconciler schema --out schemas/desired-state.schema.json` at the git root writes
    it; the search for a copy stops at the repository's root."""
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "deep" / "er").mkdir(parents=True)
    _schema_copy(tmp_path / "schemas" / "desired-state.schema.json")  # above the root
    assert schema_ref(repository / "deep" / "er") is None
    place = repository.resolve() / "schemas" / "desired-state.schema.json"
    assert schema_target(repository / "deep" / "er") == (
        "../../schemas/desired-state.schema.json",
        place,
    )
    assert schema_target(repository) == ("schemas/desired-state.schema.json", place)
    _schema_copy(place)
    assert schema_target(repository / "deep") == ("../schemas/desired-state.schema.json", None)


def test_outside_git_the_schema_goes_beside_the_output(tmp_path: Path) -> None:
    if any((folder / ".git").exists() for folder in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temporary folder is inside a git repository")
    assert schema_target(tmp_path) == (
        "schemas/desired-state.schema.json",
        tmp_path.resolve() / "schemas" / "desired-state.schema.json",
    )


@pytest.mark.parametrize(
    "content",
    ["{}", '{"$id": "https://example.com/other.json"}', "not json", '["a list"]'],
)
def test_a_file_that_is_not_the_schema_is_no_target(tmp_path: Path, content: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "desired-state.schema.json").write_text(content)
    assert schema_ref(tmp_path) is None


@pytest.mark.parametrize(
    ("place", "expected"),
    [
        ("schemas/desired-state.schema.json", "../../schemas/desired-state.schema.json"),
        ("desired-state.schema.json", "../../desired-state.schema.json"),
        ("people/desired-state.schema.json", "../desired-state.schema.json"),
    ],
)
def test_schema_ref_finds_a_copy_from_a_subfolder(
    tmp_path: Path, place: str, expected: str
) -> None:
    (tmp_path / ".git").mkdir()
    _schema_copy(tmp_path / place)
    (tmp_path / "people" / "eng").mkdir(parents=True, exist_ok=True)
    assert schema_ref(tmp_path / "people" / "eng") == expected


EXPORTED = "# yaml-language-server: $schema=x.json\n# Written by `reconciler export` at...\n"


@pytest.mark.parametrize(
    ("setup", "directory", "force", "refused"),
    [
        ("nothing", False, False, None),
        ("file", False, False, "exists: refusing to overwrite"),
        ("file", False, True, "was not written by `reconciler export`"),
        ("exported file", False, True, None),
        ("empty dir", False, False, "is a directory"),
        ("nothing", True, False, None),
        ("empty dir", True, False, None),
        ("full dir", True, False, "is not empty: refusing to overwrite"),
        ("full dir", True, True, "which export did not write"),
        ("exported dir", True, True, None),
        ("file", True, True, "is a file"),
        ("no parent", False, False, "does not exist"),
        ("no parent", True, False, "does not exist"),
    ],
)
def test_check_target(
    tmp_path: Path, setup: str, directory: bool, force: bool, refused: str | None
) -> None:
    out = tmp_path / "out"
    if setup == "file":
        out.write_text("old")
    elif setup == "exported file":
        out.write_text(EXPORTED)
    elif setup in ("empty dir", "full dir", "exported dir"):
        out.mkdir()
        if setup == "full dir":
            (out / "a.yaml").write_text("old")
        if setup == "exported dir":
            (out / "a.yaml").write_text(EXPORTED)
            (out / "notes.md").write_text("not merged, not touched")
    elif setup == "no parent":
        out = tmp_path / "missing" / "out"
    if refused is None:
        check_target(out, directory=directory, force=force)
    else:
        with pytest.raises(ExportError, match=refused):
            check_target(out, directory=directory, force=force)


def test_write_file_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "workers.yaml"
    out.write_text("old\n")
    out.chmod(0o640)
    write_file(out, "new\n")
    assert out.read_text() == "new\n"
    assert out.stat().st_mode & 0o777 == 0o640  # an existing file keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workers.yaml"]


def test_a_failed_rename_leaves_the_target_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "workers.yaml"
    out.mkdir()  # a non-empty directory in the way: the rename fails after the write
    (out / "keep").write_text("old\n")
    with pytest.raises(ExportError, match=r"cannot write .*workers\.yaml"):
        write_file(out, "new\n")
    assert (out / "keep").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workers.yaml"]


def test_write_file_reports_an_unwritable_folder(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(ExportError, match="cannot write"):
            write_file(tmp_path / "workers.yaml", "new\n")
    finally:
        tmp_path.chmod(0o700)


FILES = [ExportedFile("00-settings.yaml", "version: 1\n"), ExportedFile("country-gb.yaml", "x\n")]


def test_write_directory_creates_a_new_one(tmp_path: Path) -> None:
    out = tmp_path / "people"
    assert write_directory(out, FILES) == []
    assert sorted(p.name for p in out.iterdir()) == ["00-settings.yaml", "country-gb.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people"]


def test_write_directory_replaces_old_merged_files_and_keeps_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "people"
    out.mkdir()
    (out / "country-gb.yaml").write_text(EXPORTED)
    (out / "country-fr.yml").write_text(EXPORTED)
    (out / "README.md").write_text("keep\n")
    (out / ".pre-commit-config.yaml").write_text("repos: []\n")  # hidden: never merged
    removed = write_directory(out, FILES)
    assert removed == [out / "country-fr.yml"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".pre-commit-config.yaml",
        "00-settings.yaml",
        "README.md",
        "country-gb.yaml",
    ]
    assert (out / ".pre-commit-config.yaml").read_text() == "repos: []\n"
    assert (out / "country-gb.yaml").read_text() == "x\n"
    assert (out / "README.md").read_text() == "keep\n"


def test_a_failed_directory_write_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "people"
    out.mkdir()
    (out / "country-gb.yaml").write_text("old\n")
    # The last file cannot be created (no such folder): the first two were written by then.
    broken = [*FILES, ExportedFile("missing/country-zz.yaml", "x\n")]
    with pytest.raises(ExportError):
        write_directory(out, broken)
    assert sorted(p.name for p in out.iterdir()) == ["country-gb.yaml"]
    assert (out / "country-gb.yaml").read_text() == "old\n"
    with pytest.raises(ExportError):
        write_directory(tmp_path / "new", broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people"]
