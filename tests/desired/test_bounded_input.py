"""Through the command line: input is bounded, and a folder's links stay inside it.

A desired state over 64 MiB in all is refused before any of it is parsed (100 MB took 1.3 GB
and 10 s to refuse for other reasons); a link in a desired-state folder that leads out of it is
refused unread (one to a token file printed the token in `validate --format github`).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli import reconciler

MIB = 1024 * 1024
TEAM = "version: 1\nworkers: []\n"


def _sparse(path: Path, size: int) -> None:
    """A file of `size` bytes that takes no room on disk (NUL bytes, never parsed)."""
    with path.open("wb") as stream:
        stream.truncate(size)


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    _sparse(big, 65 * MIB)

    result = reconciler("validate", str(big))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "big.yaml:1:1: refused unread: 68,157,440 bytes" in said, said
    assert "over 64 MiB in all" in said


def test_a_folder_over_the_limit_in_all_is_refused_at_the_file_that_passes_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.yaml").write_text(TEAM, encoding="utf-8")
    _sparse(tmp_path / "b.yaml", 40 * MIB)  # NUL bytes: refused as such, once read
    _sparse(tmp_path / "c.yaml", 40 * MIB)

    result = reconciler("validate", str(tmp_path))

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "b.yaml:1:1: invalid YAML: the character U+0000" in said, said
    assert "c.yaml:1:1: refused unread: 41,943,040 bytes would take the desired state over" in said


def test_a_link_out_of_the_folder_is_refused_unread(tmp_path: Path) -> None:
    secret = tmp_path / "token.txt"
    secret.write_text("ghp_SECRETVALUE123\n", encoding="utf-8")
    folder = tmp_path / "desired"
    folder.mkdir()
    (folder / "team.yaml").write_text(TEAM, encoding="utf-8")
    os.symlink(secret, folder / "stolen.yaml")
    os.symlink("../token.txt", folder / "relative.yaml")

    for output in ("text", "github"):
        result = reconciler("validate", str(folder), "--format", output)

        said = result.stdout + result.stderr
        assert result.returncode == 1, said
        assert "SECRETVALUE" not in said, said
        assert said.count("a symbolic link that leads out of the directory") == 2, said


def test_a_link_into_a_hidden_directory_of_the_folder_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(
        '[http]\n\textraheader = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX1NFQ1JFVA=="\n',
        encoding="utf-8",
    )
    (tmp_path / "team.yaml").write_text(TEAM, encoding="utf-8")
    os.symlink(".git/config", tmp_path / "config.yaml")

    result = reconciler("validate", str(tmp_path), "--format", "github")

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "a symbolic link to a hidden file or directory" in said, said
    assert "eC1hY2Nl" not in said and "extraheader" not in said, said


def test_a_link_inside_the_folder_is_followed(tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "team.txt").write_text(TEAM, encoding="utf-8")
    os.symlink("kept/team.txt", tmp_path / "team.yaml")

    result = reconciler("validate", str(tmp_path))

    assert result.returncode == 0, result.stdout + result.stderr


def test_a_value_echoed_from_a_file_is_bounded_and_masked(tmp_path: Path) -> None:
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    (tmp_path / "token.yaml").write_text(f"{token}\n", encoding="utf-8")
    (tmp_path / "long.yaml").write_text(
        TEAM.replace("workers: []", f"workers: {'w' * 20_000}"), encoding="utf-8"
    )

    for output in ("text", "github", "json"):
        result = reconciler("validate", str(tmp_path), "--format", output)

        said = result.stdout + result.stderr
        assert result.returncode == 1, said
        assert "the top level must be a mapping" in said and "[masked]" in said, said
        assert token[4:16] not in said, said
        assert "w" * 600 not in said and "(cut at 500 of 20," in said, said


def test_a_desired_state_path_linked_out_of_its_repository_is_refused_unread(
    tmp_path: Path,
) -> None:
    """A pull request can make the folder (or the file) the workflow names a link to the
    runner's files: inside a git work tree, the path must stay in it."""
    outside = tmp_path / "runner"
    outside.mkdir()
    (outside / "credentials.yaml").write_text("ghp_SECRETVALUE123\n", encoding="utf-8")
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    os.symlink(outside, repository / "workforce")
    os.symlink(outside / "credentials.yaml", repository / "team.yaml")

    for path in (repository / "workforce", repository / "team.yaml"):
        for output in ("text", "github"):
            result = reconciler("validate", str(path), "--format", output)

            said = result.stdout + result.stderr
            assert result.returncode == 1, said
            assert "SECRETVALUE" not in said, said
            assert "leads out of the repository" in said, said


def test_a_desired_state_path_linked_within_its_repository_is_read(tmp_path: Path) -> None:
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "teams" / "core").mkdir(parents=True)
    (repository / "teams" / "core" / "team.yaml").write_text(TEAM, encoding="utf-8")
    os.symlink("teams/core", repository / "workforce")

    result = reconciler("validate", str(repository / "workforce"))

    assert result.returncode == 0, result.stdout + result.stderr
