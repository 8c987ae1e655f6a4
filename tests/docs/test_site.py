"""The documentation site builds under `mkdocs build --strict`, and its reference is complete."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.docs.support import ROOT


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = _build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stderr
    return out


def test_the_site_builds_strict_and_has_a_page_per_nav_entry(site: Path) -> None:
    for page in sorted((ROOT / "docs").glob("*.md")):
        name = "" if page.stem == "index" else f"{page.stem}/"
        assert (site / name / "index.html").is_file(), page.name


def test_links_to_repository_files_point_at_the_repository(site: Path) -> None:
    page = (site / "desired-state" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://github.com/OWNER/reconciler/blob/main/examples/team.yaml"' in page
    assert 'href="https://github.com/OWNER/reconciler/tree/main/examples/large-company/"' in page


def _reference_text(site: Path) -> str:
    page = (site / "reference" / "index.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _commands(
    group: click.Group, ctx: click.Context, prefix: str = ""
) -> list[tuple[str, click.Command]]:
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, click.Context(command, parent=ctx), f"{prefix}{name} ")
    return found


def test_the_reference_lists_every_command_and_every_option(site: Path) -> None:
    """The lazily loaded commands included: each one's usage line and each of its options."""
    from reconciler.cli import main

    text = _reference_text(site)
    commands = _commands(main, click.Context(main, info_name="reconciler"))
    assert len(commands) >= 20
    for name, command in commands:
        assert f"reconciler {name} [OPTIONS]" in text, name
        for parameter in command.params:
            for option in parameter.opts + parameter.secondary_opts:
                if option.startswith("-"):
                    assert option in text, (name, option)


def test_a_link_to_a_missing_repository_file_fails_the_strict_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the file](../examples/no-such-file.yaml).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: t\nrepo_url: https://github.com/OWNER/reconciler\n"
        f"docs_dir: {docs}\nhooks:\n  - {ROOT / 'tools' / 'mkdocs_hooks.py'}\n"
    )
    result = _build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "../examples/no-such-file.yaml" in result.stderr
