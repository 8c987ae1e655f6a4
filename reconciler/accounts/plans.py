"""`plan`, `drift` and `comment` over a fleet: each account planned and shown where it ran
(`reconciler.accounts.combined.show`), the outputs joined in the accounts file's order, and the
folder of saved plans `plan --out DIR` writes; a fleet of one (PATH) shown, and saved to one
file, as one account always was.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler import redaction
from reconciler.accounts.fleet import Fleet, run_fleet
from reconciler.accounts.options import exit_for, nothing_selected
from reconciler.accounts.staging import drop_staged, place_plans, staged_plan
from reconciler.errors import ReconcilerError
from reconciler.terminal import text_look
from reconciler.words import plural

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.approving import Gate
    from reconciler.accounts.combined import Look, Shown
    from reconciler.accounts.run import Job, Outcome
    from reconciler.plan import Plan
    from reconciler.session.connection import Connect, Connection
    from reconciler.session.planning import Planned


def plan_fleet(
    fleet: Fleet,
    *,
    look: Look,
    plan_options: Any,
    out: Path | None,
    money_since: datetime | None,
    connect: Connect,
    detailed_exitcode: bool = False,
    pull_request: tuple[int, str] | None = None,
    gate: Gate | None = None,
) -> None:
    """`plan` and (`look.drift`) `drift`: every account planned and shown; `out` saves the
    plans (a folder, one `<name>.json` each; for a fleet of one, one file). Exit 1 when an
    account failed, else 2 when there are changes with `detailed_exitcode`, or, for `drift`,
    when one drifted (under `--strict`, unmanaged workers, conflicts and money needing action
    too)."""
    done = plan_accounts(
        fleet,
        look=look,
        plan_options=plan_options,
        out=out,
        money_since=money_since,
        connect=connect,
        top_ups=look.drift,  # drift's money summary counts the journal's top-ups
        doing="reading" if look.drift else "planning",
        pull_request=pull_request,
        gate=gate,
    )
    if done is None:
        return
    print_plans(fleet, done, look, out=out, pull_request=pull_request)
    if look.drift:
        exit_for(done, any(o.value and o.value.drift_found for o in done))
    exit_for(done, detailed_exitcode and any(o.value and o.value.changes for o in done))


def plan_accounts(
    fleet: Fleet,
    *,
    look: Look,
    plan_options: Any,
    out: Path | None,
    money_since: datetime | None,
    connect: Connect,
    top_ups: bool = False,
    doing: str = "planning",
    pull_request: tuple[int, str] | None = None,
    gate: Gate | None = None,
) -> list[Outcome[Shown]] | None:
    """Plan every selected account side by side, each shown as `look` says where it ran;
    `out`: a folder, one saved plan each, put in place once its account is reported planned;
    `connect` makes each account's connection from its environment. The accounts are spread
    over this machine's processors (`reconciler.accounts.spread`): planning is mostly the
    interpreter's work."""
    accounts, chosen = fleet.load()
    if not chosen:
        nothing_selected(accounts, fleet.options)
        return None
    if fleet.single and out is not None and out.is_dir():
        raise click.BadParameter(
            f"{out} is a folder: a single plan is one file (a folder of plans is for --all)",
            param_hint="--out",
        )
    if out is not None and not fleet.single:
        clear_plans_folder(out, [entry.name for entry in chosen])
    work = functools.partial(
        _plan_and_show,
        look=look,
        single=fleet.single,
        plan_options=plan_options,
        out=None if fleet.single else out,
        keyed=out is not None,
        money_since=money_since,
        connect=connect,
        top_ups=top_ups,
        pull_request=pull_request,
        gate=gate,
        accounts_path=None if fleet.single else accounts.path,
    )
    outcomes = run_fleet(fleet, accounts, chosen, work, doing=doing, processes=os.cpu_count() or 1)
    if out is not None and not fleet.single:
        saved = [o.name for o in outcomes if o.value is not None]
        place_plans(out, saved, [entry.name for entry in chosen])
        if saved:
            click.echo(
                f"Saved {plural(len(saved), 'plan')} to {out}/ ({', '.join(saved)}); apply "
                f"them with: reconciler apply {out}",
                err=True,
            )
    return outcomes


def _plan_and_show(job: Job, *, look: Look, single: bool, **plan: Any) -> Shown:
    """The account planned and shown; a fleet of one's plan is kept, to be printed (the JSON
    as it is written) and saved where the command prints it."""
    from reconciler.accounts.combined import judged, show

    planned = plan_and_save(job, **plan)
    if single:
        return replace(judged(planned.plan, look), planned=planned)
    return show(job.entry.name, planned.plan, look)


def plan_and_save(
    job: Job,
    *,
    plan_options: Any,
    out: Path | None,
    money_since: datetime | None,
    connect: Connect,
    top_ups: bool,
    pull_request: tuple[int, str] | None = None,
    keyed: bool = False,
    gate: Gate | None = None,
    accounts_path: Path | None = None,
) -> Planned:
    """Plan one account; with `out`, write its signed plan aside, for `out/<name>.json` once
    it is reported planned (`reconciler.accounts.staging`; for `pull_request`, (number, head
    commit), when it is reviewed on one); `keyed`: ready to be saved (by the caller)."""
    from reconciler.accounts.approving import Subject, gated
    from reconciler.accounts.file import approvals_in_force
    from reconciler.accounts.owner import SOURCE_PREFIX
    from reconciler.session.planning import plan_path, write_planned

    connection = job.connect(connect)
    entry = job.entry
    planned = plan_path(
        entry.path,
        plan_options,
        connection,
        keyed=keyed or out is not None,
        money_since=money_since,
        top_ups=top_ups,
        progress=job.progress,
    )
    if gate is not None:  # `plan`: what each payrun's approvals need and have (apply judges)
        policy = approvals_in_force(entry, accounts_path, planned.approvals)
        account = (entry.name, accounts_path) if accounts_path is not None else (None, None)
        subject = Subject(entry.path, policy, planned.live, plan_options, job.environ, *account)
        planned = replace(planned, plan=gated(gate, planned.plan, subject, hold=False))
    if out is not None:  # put in place once the account is reported planned
        sources = [SOURCE_PREFIX + job.entry.name, job.entry.written_path]
        write_planned(staged_plan(out, job.entry.name), planned, sources, pull_request)
    return planned


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


def print_plans(
    fleet: Fleet,
    outcomes: list[Outcome[Shown]],
    look: Look,
    *,
    out: Path | None = None,
    pull_request: tuple[int, str] | None = None,
) -> None:
    """The accounts' plans on stdout, joined; a fleet of one's alone, then saved to `out`."""
    from reconciler.accounts.combined import (
        DRIFT,
        PLAN,
        combined_json,
        combined_markdown,
        combined_text,
    )

    if fleet.single:
        (outcome,) = outcomes
        assert outcome.value is not None and outcome.value.planned is not None
        planned = outcome.value.planned
        print_plan(planned.plan, look)
        if out is not None:
            assert fleet.path is not None and fleet.connection is not None
            save_plan(out, planned, fleet.path, fleet.connection, pull_request=pull_request)
        return
    wording = DRIFT if look.drift else PLAN
    if look.fmt == "json":
        click.echo(combined_json(outcomes, wording), nl=False)
    elif look.fmt == "markdown":
        click.echo(combined_markdown(outcomes, wording=wording), nl=False)
    else:
        click.echo(combined_text(outcomes, wording), nl=False, color=look.color)


def print_plan(result: Plan, look: Look) -> None:
    """One account's plan on stdout as `look` says."""
    from reconciler.render import renderer_for

    if look.fmt == "json":  # written as it is made: it lists every managed resource
        _write_json(result)
        return
    renderer = renderer_for(
        look.fmt,
        color=look.color,
        show_unmanaged=look.show_unmanaged,
        strict=look.strict,
        drift=look.drift,
        width=look.width,
    )
    click.echo(renderer.render(result), nl=False, color=look.color)


def _write_json(result: Plan) -> None:
    """The JSON plan to stdout in UTF-8 as it is made, through the secrets' redaction."""
    from reconciler.render.json import plan_json, write_plan_json

    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a stream of text only (a caller's StringIO)
        click.echo(plan_json(result), nl=False)
        return
    write_plan_json(result, redaction.ScrubbedBytes(binary))
    binary.flush()


def save_plan(
    out: Path,
    planned: Planned,
    source: Path,
    connection: Connection,
    *,
    pull_request: tuple[int, str] | None = None,
) -> None:
    """Write `--out` of one account: the signed saved plan, made from `source` against the
    live state (for `pull_request`, (number, head commit), when it is reviewed on one)."""
    from reconciler.session.planning import write_planned

    write_planned(out, planned, [str(source)], pull_request)
    again = connection.repeated()
    click.echo(
        f"Saved the plan to {out}; apply it with: reconciler apply{again} {shlex.quote(str(out))}",
        err=True,
    )
