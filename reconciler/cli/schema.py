"""`reconciler schema`: the desired-state file's JSON Schema, for editors, offline."""

from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path

import click

from reconciler.desired.schema import SCHEMA_NAME
from reconciler.errors import ReconcilerError
from reconciler.export.files import is_schema_copy
from reconciler.export.model import MODELINE

#: The schemas this command prints: the desired state's, and the accounts file's.
_SCHEMAS = {"desired-state": SCHEMA_NAME, "accounts": "accounts.schema.json"}


@click.command("schema")
@click.argument("which", type=click.Choice(list(_SCHEMAS)), default="desired-state")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the schema to this file (a copy written before is replaced) instead of stdout.",
)
def schema(which: str, out: Path | None) -> None:
    """Print the JSON Schema of the desired-state file, or write it with --out.

    Commit the copy beside your files (for instance `schemas/desired-state.schema.json`) and
    editors complete and check them offline; `reconciler export` points its modeline at it.
    `reconciler schema accounts` is the accounts file's (reconciler.yaml).
    """
    name = _SCHEMAS[which]
    text = resources.files("reconciler").joinpath("schemas", name).read_text("utf-8")
    if out is None:
        click.echo(text, nl=False)
        return
    _write(out, text)
    click.echo(f"Wrote the schema to {out}.", err=True)
    files = "reconciler.yaml" if which == "accounts" else "a desired-state file"
    click.echo(
        f"Next: if {files} does not start with `{MODELINE}...` yet (`reconciler export` writes "
        f"that line), start it with `{MODELINE}<path to {out.name}>`.",
        err=True,
    )


def _write(out: Path, text: str) -> None:
    """Write atomically; replace only an earlier copy of this schema, never a file of yours."""
    if out.is_symlink() or (out.exists() and not (is_schema_copy(out) or _same_id(out, text))):
        raise ReconcilerError(
            f"{out} exists and is not a copy of this schema: refusing to replace it",
            hint="pick another path, or move that file away first",
        )
    folder = out.absolute().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(text)
            os.chmod(temporary, 0o644)
            os.replace(temporary, out)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise ReconcilerError(f"cannot write {out}: {error.strerror or error}") from None


def _same_id(out: Path, text: str) -> bool:
    """Whether `out` is an earlier copy of the schema in `text` (the same `$id`)."""
    import json

    try:
        if out.stat().st_size > 1_000_000:
            return False
        document = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(document, dict) and document.get("$id") == json.loads(text)["$id"]
