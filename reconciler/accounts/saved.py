"""Saved plans per account (`plan --out DIR`, `comment DIR`, `apply DIR`) and `apply` over the
selected accounts.

`DIR/<name>.json` is the account's saved plan, signed and bound to its account as a single
plan is (base URL, client); its first source, `account:<name>`, is signed too, so a plan renamed
to another account's file is refused before any request, naming both. Each account is then
applied as `apply PLAN` applies one, with its own client, side by side, each with its ledger.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from reconciler import logs
from reconciler.accounts.applied import applied_record, check_entry, write_record
from reconciler.accounts.applied_report import (
    Applied,
    applied_json,
    applied_text,
    failed_status,
    succeeded,
)
from reconciler.accounts.approving import Gate, Subject, gated, saved_policy
from reconciler.accounts.bundle import with_bundle
from reconciler.accounts.combined import Part
from reconciler.accounts.environment import ENV_PLAN_KEY
from reconciler.accounts.file import AccountEntry, AccountsFile, approvals_in_force
from reconciler.accounts.options import AccountOptions, nothing_selected
from reconciler.accounts.owner import plan_owner
from reconciler.accounts.run import Job, run_accounts
from reconciler.apply import Executor, Ledger
from reconciler.apply.lock import AccountLock, MachineLock, hold, noting_refusal
from reconciler.apply.paying import pay
from reconciler.errors import ReconcilerError
from reconciler.plan import Plan, PlanOptions, WebhookCreate, WebhookUpdate, diff
from reconciler.plan.payruns import REFUSED, WAITING
from reconciler.plan.refresh import refresh
from reconciler.plan.resume import resume
from reconciler.plan.review import check_review
from reconciler.plan.saved import SavedPlan, load_saved_plan
from reconciler.plan.signing import PlanKey, UntrustedPlan
from reconciler.session.account import check_saved_account, current_account
from reconciler.session.connection import Connect, Connection
from reconciler.session.plankey import offline_plan_key, plan_key
from reconciler.session.reading import file_and_account
from reconciler.session.review import review_of


class OtherAccountsPlan(UntrustedPlan):
    """A saved plan in DIR/<name>.json made for another account of the file."""


def plans_in(folder: Path, accounts: AccountsFile, options: AccountOptions) -> list[AccountEntry]:
    """The accounts with a plan in `folder` (and selected, when a selection was given); a plan
    whose name is no account of the file is an error, before anything is sent."""
    from reconciler.accounts.selection import account_names, select

    names = [file.stem for file in sorted(folder.glob("*.json"))]
    unknown = [name for name in names if accounts.named(name) is None]
    if unknown:
        raise ReconcilerError(
            f"{folder} holds plans of no account of {accounts.path}: "
            + ", ".join(f"{name}.json" for name in unknown),
            hint=f"its accounts: {', '.join(accounts.names)}",
        )
    chosen = select(accounts, options.selection) if options.active else list(accounts.accounts)
    asked = account_names(options.selection.names)
    missing = [name for name in asked if name not in names]
    if missing:
        raise ReconcilerError(
            f"{folder} holds no plan of {', '.join(missing)}: nothing was applied",
            hint=f"make it with `reconciler plan --account NAME --out {folder}`",
        )
    return [entry for entry in chosen if entry.name in names]


def bound_plan(folder: Path, entry: AccountEntry) -> SavedPlan:
    """`folder/<name>.json`, refused unless it was made for this account of the file."""
    file = folder / f"{entry.name}.json"
    saved = load_saved_plan(file)
    owner = plan_owner(saved.sources)
    if owner is None:
        raise OtherAccountsPlan(
            f"{file} is not a plan of account {entry.name}: it was saved by a single-account "
            "`reconciler plan --out`; nothing was applied",
            hint=f"make it with `reconciler plan --account {entry.name} --out {folder}`",
        )
    if owner != entry.name:
        raise OtherAccountsPlan(
            f"{file} is the plan of account {owner}, not of account {entry.name} (its name "
            f"says {entry.name}, its signed content says {owner}): nothing was applied to "
            f"{entry.name}",
            hint=f"apply each account's own plan: `reconciler plan --out {folder}` writes "
            "them under their names",
        )
    return saved


def register_header_values(plan: Plan) -> None:
    """Header values go into the request, so no log line or error may ever show them."""
    for change in plan.changes:
        if isinstance(change, WebhookCreate | WebhookUpdate):
            for header in change.webhook.headers:
                logs.register_secret(header.value.reveal())


@dataclass(frozen=True, slots=True)
class Carry:
    """How each account's plan is carried out, as `apply` does for one; `stop` is shared by
    every account (the first Ctrl-C: requests in flight end, nothing new is sent)."""

    force: bool
    parallelism: int
    wait: bool
    settle_s: float
    stop: threading.Event = field(default_factory=threading.Event)
    lock_timeout: float = 0.0
    #: The forge's lock too (CI's record of who applies), when a forge is configured.
    forge_lock: AccountLock | None = None
    #: The approvals gate (`reconciler.accounts.approving`); None: no forge, no options.
    gate: Gate | None = None

    def gated(self, plan: Plan, subject: Subject) -> Plan:
        """The plan with the payruns its approvals do not cover waiting (before any write)."""
        return gated(self.gate, plan, subject)

    def record(
        self,
        account: str,
        plan: Plan,
        ledger: Ledger,
        key: Callable[[], PlanKey],
        files: Path | None,
    ) -> None:
        """With `--records-out`, the signed evidence record of each paylist sent."""
        if self.gate is None or self.gate.records_out is None:
            return
        from reconciler.accounts.records import write_records

        run_url = self.gate.run_url
        write_records(
            self.gate.records_out, account, plan, ledger, key=key(), run_url=run_url, files=files
        )

    def locked(self, client: Any, connection: Connection) -> AbstractContextManager[None]:
        """The account's lock, from before the first write to the ledger (`apply.lock`): this
        machine's, then the forge's; a refusal is noted beside the records (`--records-out`),
        where the merge job's landing reads who held it."""
        notice = functools.partial(click.echo, err=True)
        machine = MachineLock(notice=notice)
        held = hold(
            current_account(client, connection),
            timeout=self.lock_timeout,
            locks=(machine,) if self.forge_lock is None else (machine, self.forge_lock),
        )
        return noting_refusal(held, self.gate.records_out if self.gate is not None else None)

    def needed(self, plan: Plan) -> bool:
        """Whether there is anything to carry out (changes, or a refused payrun to put in the
        ledger); an unsafe plan is refused here without `force`."""
        refused = any(decision.state in (REFUSED, WAITING) for decision in plan.payruns)
        if not plan.has_changes and not refused:
            return False
        plan.raise_if_unsafe(self.force)
        return True

    def out(self, client: Any, plan: Plan) -> Ledger:
        if not self.needed(plan):
            return Ledger(())
        register_header_values(plan)
        if self.stop.is_set():
            raise ReconcilerError("interrupted before this account was applied: nothing sent")
        executor = Executor(client, parallelism=self.parallelism, stop=self.stop)
        ledger = executor.apply(plan)
        if not self.stop.is_set():
            pay(
                client, plan, ledger, force=self.force, wait=self.wait, settle_timeout=self.settle_s
            )
        return ledger


def expected_review(
    pull_request: int | None, head_sha: str | None, files: Path | None
) -> tuple[int, str] | None:
    """`apply DIR --expect-pull-request N --expect-head-sha SHA`: the pull request and commit
    every account's plan must have been reviewed for (None: nothing expected). The files are
    each account's own, at its entry's `path`: `--expect-files` names one folder, so it is
    refused with DIR rather than read for every account."""
    if files is not None:
        raise click.UsageError(
            "--expect-files names the files of one saved plan; with a folder of plans each "
            "account's plan is checked against the files at its entry's `path` in the accounts "
            "file: pass --expect-pull-request and --expect-head-sha only"
        )
    if (pull_request is None) != (head_sha is None):
        raise click.UsageError(
            "with a folder of plans, --expect-pull-request and --expect-head-sha go together: "
            "the pull request and the commit of it that was reviewed"
        )
    return None if pull_request is None or head_sha is None else (pull_request, head_sha)


def apply_saved(
    job: Job,
    folder: Path,
    carry: Carry,
    max_age: timedelta,
    connect: Connect,
    expect: tuple[int, str] | None = None,
    accounts_path: Path | None = None,
) -> Applied:
    """Apply `folder/<name>.json` to its account, as `apply PLAN` applies one; with `expect`
    (pull request, head commit), only if it was reviewed for them and for the files at the
    account's `path` now. Everything about the plan is checked before any request: its
    account, signature, review, that its account is the one the entry names now, and its
    record (`reconciler.accounts.applied`): a plan applied already is not applied again."""
    saved = bound_plan(folder, job.entry)
    key = offline_plan_key(job.environ, job.names)
    saved.verify(key)
    if expect is not None:  # another pull request's plan, or other files: refused here
        assert saved.review is not None, "a saved plan read from a file records its review"
        check_review(saved.review, review_of(job.entry.path, key, expect), name=saved.name)
    check_entry(saved, job.entry, job.environ)
    record = applied_record(folder, saved, key)
    if record is not None:
        return Applied(None, Ledger(()), already=record)
    connection = job.connect(connect)
    with connection.open(read_only=False, parallelism=carry.parallelism) as client:
        check_saved_account(saved, client, connection, doing="talks to")
        with carry.locked(client, connection):  # before the refresh: it sees the last apply
            live = refresh(
                client,
                job.progress,
                payruns=bool(saved.payruns),
                parallelism=client.config.parallelism,
            )
            plan = resume(saved, live, key=key, environ=job.environ, max_age=max_age)
            entry, path = job.entry, accounts_path
            policy = saved_policy(saved, entry.path, job.environ, entry, path)
            subject = Subject(
                entry.path, policy, live, PlanOptions(), job.environ, entry.name, path
            )
            plan = carry.gated(plan, subject)
            job.status("applying")
            ledger = carry.out(client, plan)
            carry.record(entry.name, plan, ledger, lambda: key, entry.path)
    if not ledger.complete:
        return Applied(plan, ledger)
    try:
        write_record(folder, saved, key, plan.actions_line)
    except ReconcilerError as error:
        return Applied(plan, ledger, note=str(error))
    return Applied(plan, ledger)


def apply_files(
    job: Job,
    options: PlanOptions,
    carry: Carry,
    connect: Connect,
    accounts_path: Path | None = None,
) -> Applied:
    """Plan the account's files and apply the plan (`apply --all --auto-approve`)."""
    connection = job.connect(connect)
    with (
        file_and_account(
            job.entry.path,
            connection,
            read_only=False,
            parallelism=carry.parallelism,
            progress=job.progress,
        ) as ready,
        carry.locked(ready.client, connection),
    ):
        plan = diff(ready.desired, ready.live, options)
        entry = job.entry
        policy = approvals_in_force(entry, accounts_path, ready.desired.policy.approvals)
        subject = Subject(
            entry.path, policy, ready.live, options, job.environ, entry.name, accounts_path
        )
        plan = carry.gated(plan, subject)
        job.status("applying")
        ledger = carry.out(ready.client, plan)
        client = ready.client
        carry.record(
            entry.name, plan, ledger, lambda: plan_key(client, job.environ, job.names), entry.path
        )
        return Applied(plan, ledger)


def apply_accounts(
    options: AccountOptions,
    source: Path | None,
    plan_options: PlanOptions,
    carry: Carry,
    max_age: timedelta,
    auto_approve: bool,
    fmt: str,
    expect: tuple[int | None, str | None, Path | None],
    connect: Connect,
) -> None:
    """`apply DIR` (each account's saved plan) or `apply --all --auto-approve` (from files);
    `expect`: `--expect-pull-request`, `--expect-head-sha`, `--expect-files` (DIR only);
    `connect` makes each account's connection from its environment. A PATH that is no folder
    of plans is refused by the command before."""
    from reconciler.accounts.file import find_accounts_file, load_accounts_file

    if source is not None:
        if plan_options != PlanOptions():
            raise ReconcilerError(
                "--target, --exclude and --replace shape a plan; saved plans are already shaped",
                hint="pass them to `reconciler plan --all --out DIR` instead",
            )
        accounts = load_accounts_file(find_accounts_file(options.accounts_file))
        reviewed = expected_review(*expect)
        chosen = plans_in(source, accounts, options)
        work: Any = functools.partial(
            apply_saved,
            folder=source,
            carry=carry,
            max_age=max_age,
            connect=connect,
            expect=reviewed,
            accounts_path=accounts.path,
        )
    else:
        if expect != (None, None, None):
            raise ReconcilerError(
                "--expect-pull-request, --expect-head-sha and --expect-files check saved plans, "
                "and apply --auto-approve plans the accounts' files: nothing was applied",
                hint="apply the folder of reviewed plans: `reconciler apply DIR "
                "--expect-pull-request N --expect-head-sha SHA`",
            )
        if not auto_approve:
            raise ReconcilerError(
                "apply over several accounts does not ask: review with `reconciler plan --all "
                "--out DIR`, then `reconciler apply DIR`, or pass --auto-approve",
                hint="nothing was changed",
            )
        accounts, chosen = options.load()
        work = functools.partial(
            apply_files,
            options=plan_options,
            carry=carry,
            connect=connect,
            accounts_path=accounts.path,
        )
    if not chosen:
        nothing_selected(accounts, options)
        return
    from reconciler.apply.running import graceful_interrupt

    try:
        with graceful_interrupt(carry.stop):
            outcomes = run_accounts(
                accounts, chosen, work, parallelism=options.parallelism, environ=os.environ
            )
    except KeyboardInterrupt:  # the second Ctrl-C: leave without waiting for requests in flight
        click.echo(
            "Quit at once (second Ctrl-C): a change in flight may still land. Run `reconciler "
            "plan --all` to see the accounts now.",
            err=True,
        )
        os._exit(130)
    click.echo(applied_json(outcomes) if fmt == "json" else applied_text(outcomes), nl=False)
    if not succeeded(outcomes):
        raise click.exceptions.Exit(failed_status(outcomes))


def saved_parts(options: AccountOptions, folder: Path) -> list[Part] | None:
    """`comment DIR`: each account's part from its saved plan, read offline (the job that
    joins a matrix's plans holds no account's secrets). The plan must be the account's own
    (its signed `account:<name>`); its signature is checked where its plan key is set. With
    a selection, a selected account without a plan (its plan job failed) is shown failed."""
    from reconciler.accounts.file import find_accounts_file, load_accounts_file
    from reconciler.accounts.saved_view import saved_part
    from reconciler.accounts.selection import select

    accounts = load_accounts_file(find_accounts_file(options.accounts_file))
    present = {entry.name for entry in plans_in(folder, accounts, AccountOptions.none())}
    expected = select(accounts, options.selection) if options.active else list(accounts.accounts)
    chosen = [entry for entry in expected if options.active or entry.name in present]
    if not chosen:
        nothing_selected(accounts, options)
        return None
    parts = []
    for entry in chosen:
        try:
            if entry.name not in present:
                raise ReconcilerError(
                    f"no saved plan {folder / (entry.name + '.json')}: its plan failed or did "
                    "not run"
                )
            saved = bound_plan(folder, entry)
            variable = entry.plan_key_env or ENV_PLAN_KEY
            environ = with_bundle(os.environ)
            if environ.get(variable):
                saved.verify(plan_key(None, {ENV_PLAN_KEY: environ[variable]}))
            parts.append(saved_part(entry.name, saved))
        except ReconcilerError as error:
            parts.append(Part(entry.name, error=str(error)))
    return parts
