"""The documentation site builds under `mkdocs build --strict`, and its reference is complete."""

from __future__ import annotations

import html
import re
from pathlib import Path

import click

from tests.docs.conftest import build_site
from tests.docs.support import ROOT


def test_the_site_builds_strict_and_has_a_page_per_nav_entry(site: Path) -> None:
    for page in sorted((ROOT / "docs").glob("*.md")):
        name = "" if page.stem == "index" else f"{page.stem}/"
        assert (site / name / "index.html").is_file(), page.name


def _hrefs(site: Path) -> list[tuple[str, str]]:
    return [
        (page.relative_to(site).as_posix(), href)
        for page in sorted(site.rglob("*.html"))
        for href in re.findall(r'href="([^"]*)"', page.read_text(encoding="utf-8"))
    ]


def test_no_link_leads_to_a_placeholder_or_to_a_repository_host(site: Path) -> None:
    """The site stands alone: the repository's address is not known, so nothing links to a
    guess of it (`github.com/OWNER/...`), neither a page nor the theme's header."""
    bad = [(page, href) for page, href in _hrefs(site) if "OWNER" in href or "github.com/" in href]
    assert not bad, bad


def test_the_repository_files_the_pages_link_are_pages_of_the_site(site: Path) -> None:
    """`../examples/team.yaml` in a page (right on GitHub and in a clone) leads, on the site, to
    a page showing the file; a folder's link to a page listing its files."""
    page = (site / "desired-state" / "index.html").read_text(encoding="utf-8")
    assert 'href="../files/examples/team.yaml/"' in page
    assert 'href="../files/examples/large-company/"' in page
    shown = (site / "files" / "examples" / "team.yaml" / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", shown))
    assert (ROOT / "examples" / "team.yaml").read_text(encoding="utf-8").strip() in text
    folder = (site / "files" / "examples" / "large-company" / "index.html").read_text("utf-8")
    for name in ("00-settings.yaml", "engineering.yaml", "sales.yaml"):
        assert f'href="{name}/"' in folder, name
    action = site / "files" / "github" / "actions" / "reconciler" / "action.yml" / "index.html"
    assert "composite" in action.read_text(encoding="utf-8")


def test_the_first_page_installs_and_plans_and_reviews(site: Path) -> None:
    """The home page is a getting started of its own: the install, a plan against the sandbox,
    the saved-plan loop and the CI recipe (the commands are run by test_documented_output)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "index.html").read_text("utf-8")))
    for step in (
        "python -m pip install -e .",
        "reconciler plan --sandbox examples/quickstart.yaml",
        "--out plan.json",
        "reconciler comment plan.json",
        "reconciler apply --sandbox plan.json",
        "CI recipes",
    ):
        assert step in text, step


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
        f"site_name: t\ndocs_dir: {docs}\nhooks:\n  - {ROOT / 'tools' / 'mkdocs_hooks.py'}\n"
    )
    result = build_site(config, tmp_path / "site")
    assert result.returncode != 0
    assert "../examples/no-such-file.yaml" in result.stderr


def _reference_rows(site: Path) -> dict[str, list[list[str]]]:
    """Each command's option rows in the reference page: the cells' text, by command heading."""
    page = (site / "reference" / "index.html").read_text(encoding="utf-8")
    rows: dict[str, list[list[str]]] = {}
    for part in re.split(r"<h[2-6][^>]*>", page)[1:]:
        heading = html.unescape(re.sub(r"<[^>]+>", "", part.split("</h", 1)[0])).strip("¶ \n")
        cells = [
            [
                html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
                for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            ]
            for row in re.findall(r"<tr>(.*?)</tr>", part, re.S)
        ]
        rows[heading] = [row for row in cells if row]
    return rows


def test_the_reference_shows_the_defaults_help_shows(site: Path) -> None:
    """Each option's Default cell is what `reconciler COMMAND --help` says (`[default: ...]`),
    or empty where --help says none: never the UNSET sentinel of click 8.3, never `None`."""
    from reconciler.cli import main

    rows = _reference_rows(site)
    commands = [("", main), *_commands(main, click.Context(main, info_name="reconciler"))]
    checked = 0
    for name, command in commands:
        heading = f"reconciler {name}".strip()
        ctx = click.Context(command, info_name=name or "reconciler")
        shown = {row[0].split(",")[0].split(" /")[0].strip(): row[-1] for row in rows[heading]}
        for option in command.params:
            if not isinstance(option, click.Option) or option.hidden:
                continue
            extra = option.get_help_extra(ctx)
            expected = "required" if "required" in extra else extra.get("default", "")
            assert shown[option.opts[0]] == expected, (
                heading,
                option.opts[0],
                shown[option.opts[0]],
            )
            checked += 1
    assert checked >= 200, checked
    assert "Sentinel" not in _reference_text(site)
