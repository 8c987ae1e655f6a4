"""`plan`, `drift` and `comment` over the selected accounts: each account planned and shown
where it ran (`reconciler.accounts.combined.show`), the outputs joined in the accounts file's
order, and the folder of saved plans `plan --out DIR` writes."""

from __future__ import annotations

import functools
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler.accounts.options import AccountOptions, nothing_selected
from reconciler.accounts.staging import drop_staged, place_plans
from reconciler.errors import ReconcilerError
from reconciler.terminal import text_look
from reconciler.words import plural

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.combined import Look, Shown
    from reconciler.accounts.run import Job, Outcome
    from reconciler.session.connection import Connect


def plan_accounts(
    options: AccountOptions,
    *,
    look: Look,
    plan_options: Any,
    out: Path | None,
    money_since: datetime | None,
    connect: Connect,
    top_ups: bool = False,
    doing: str = "planning",
    pull_request: tuple[int, str] | None = None,
) -> list[Outcome[Shown]] | None:
    """Plan every selected account side by side, each shown as `look` says where it ran;
    `out`: a folder, one saved plan each, put in place once its account is reported planned;
    `connect` makes each account's connection from its environment. The accounts are spread
    over this machine's processors (`reconciler.accounts.spread`): planning is mostly the
    interpreter's work."""
    from reconciler.accounts.run import run_accounts

    accounts, chosen = options.load()
    if not chosen:
        nothing_selected(accounts, options)
        return None
    if out is not None:
        clear_plans_folder(out, [entry.name for entry in chosen])
    work = functools.partial(
        _plan_and_show,
        look=look,
        plan_options=plan_options,
        out=out,
        money_since=money_since,
        connect=connect,
        top_ups=top_ups,
        pull_request=pull_request,
    )
    outcomes = run_accounts(
        accounts,
        chosen,
        work,
        parallelism=options.parallelism,
        environ=os.environ,
        doing=doing,
        processes=os.cpu_count() or 1,
    )
    if out is not None:
        saved = [o.name for o in outcomes if o.value is not None]
        place_plans(out, saved, [entry.name for entry in chosen])
        if saved:
            click.echo(
                f"Saved {plural(len(saved), 'plan')} to {out}/ ({', '.join(saved)}); apply "
                f"them with: reconciler apply {out}",
                err=True,
            )
    return outcomes


def _plan_and_show(job: Job, *, look: Look, **plan: Any) -> Shown:
    from reconciler.accounts.combined import show
    from reconciler.accounts.saved import plan_and_save

    return show(job.entry.name, plan_and_save(job, **plan).plan, look)


def look_for(
    fmt: str, *, show_unmanaged: bool = False, strict: bool = False, drift: bool = False
) -> Look:
    """How the accounts' plans are shown on stdout (text: its colour and width)."""
    from reconciler.accounts.combined import Look

    color, width = text_look(sys.stdout) if fmt == "text" else (False, None)
    return Look(fmt, show_unmanaged, strict, drift, color, width)


def clear_plans_folder(out: Path, names: list[str]) -> None:
    """Make `out` hold this run's plans only: the selected accounts' earlier plans are removed
    before planning (an account that fails now must not leave an older plan to apply), and a
    folder holding other accounts' plans, or another file under a plan's name, is refused."""
    from reconciler.accounts.applied import remove_records
    from reconciler.plan.saved import is_saved_plan

    if out.exists() and not out.is_dir():
        raise click.BadParameter(
            f"{out} is a file: with accounts selected, --out names a folder (DIR/<name>.json each)",
            param_hint="--out",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReconcilerError(f"cannot create the plans folder {out}: {error.strerror}") from None
    others = sorted(p.name for p in out.glob("*.json") if p.stem not in names and is_saved_plan(p))
    if others:
        raise ReconcilerError(
            f"{out} holds saved plans of accounts not planned now ({', '.join(others)}): "
            f"`reconciler apply {out}` would apply them too",
            hint="give --out an empty folder (each run its own), or remove those plans",
        )
    for name in names:
        file = out / f"{name}.json"
        if file.is_symlink() or (file.exists() and not is_saved_plan(file)):
            raise ReconcilerError(
                f"{file} exists and is not a saved plan: refusing to replace it",
                hint="give --out another folder",
            )
    for name in names:
        (out / f"{name}.json").unlink(missing_ok=True)
    remove_records(out, names)  # a record of an earlier plan is no record of the new one
    drop_staged(out, names)


def print_plans(outcomes: list[Outcome[Shown]], look: Look) -> None:
    from reconciler.accounts.combined import (
        DRIFT,
        PLAN,
        combined_json,
        combined_markdown,
        combined_text,
    )

    wording = DRIFT if look.drift else PLAN
    if look.fmt == "json":
        click.echo(combined_json(outcomes, wording), nl=False)
    elif look.fmt == "markdown":
        click.echo(combined_markdown(outcomes, wording=wording), nl=False)
    else:
        click.echo(combined_text(outcomes, wording), nl=False, color=look.color)
