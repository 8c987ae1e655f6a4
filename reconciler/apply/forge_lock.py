"""The account lock in CI: a claim recorded on the forge, so that a laptop's apply with the
forge's token and the merge job's apply of one account exclude each other, wherever each runs.

The machine's lock (`reconciler.apply.lock.MachineLock`) holds only on one machine; CI's merge
job and a colleague's laptop share none. Both can reach the forge, so the forge keeps the
account's claims (`LockRecords`: an in-progress deployment on GitHub, a running deployment on the
other forge), keyed as the machine's lock is (the account's service and client, hashed:
`apply.lock.lock_name`). To take the lock an apply records its claim, then reads the account's
claims that are not released: the oldest live one (the forge's ids only grow) holds the lock,
so of two applies that claim at once exactly one is first, whoever read first. The holder reads
again after a short pause (a claim the forge numbered first may show a moment later), then
holds; a waiter keeps its claim (it is next) and reads again until `timeout`, then withdraws it
and refuses, saying who holds the lock and since when.

A claim is a lease: it holds for `lease_s` seconds from its last renewal. A forge that can renew
one (`RenewedLocks`, GitHub: a new status of the deployment) renews it while the apply runs, so
a short lease covers an apply of any length and a holder that died (killed, its runner lost)
frees the lock once its lease runs out; the next apply takes it over and releases the dead
claim, saying so. A forge that cannot renew a claim gives its claims a lease longer than an apply.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from reconciler.apply.lock import AccountLocked, Holder, lock_name
from reconciler.errors import ReconcilerError
from reconciler.plan.account import Account
from reconciler.redaction import shown
from reconciler.threads import start

#: How long after recording its claim, seen first, an apply reads the claims again before it
#: holds the lock (a claim numbered before it may show a moment after).
CONFIRM_S = 1.0
#: How often a waiting apply reads the claims again.
POLL_S = 2.0
#: What a released claim says when it is not its holder's own release.
TAKEN_OVER = "taken over: its lease ran out (its apply died, or lost the forge)"
#: How much of the holder's command a claim keeps (its paths can be long): the rest of the
#: claim (the process, the host, the CI run) is always kept whole.
COMMAND_MOST = 150
#: How much of a claim's text a message shows: more than a claim of ours ever holds, so a cut
#: is only ever of a claim someone else wrote.
WHO_MOST = 600


@dataclass(frozen=True, slots=True)
class Claim:
    """One apply's claim on an account's lock, as the forge records it: its id (the forge's,
    which only grows), who made it, when (the forge's clock), when it was last renewed, and how
    long it holds from then."""

    id: int
    who: str
    since: datetime
    renewed: datetime
    lease_s: float

    def expired(self, now: datetime) -> bool:
        return now >= self.renewed + timedelta(seconds=self.lease_s)

    def describe(self, now: datetime) -> str:
        """'pid 42 on ci-7 (reconciler apply ...), since 2026-12-01 23:10:04 UTC, 12 s ago'."""
        ago = max(0, int((now - self.since).total_seconds()))
        since = f"{self.since.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
        return f"{shown(self.who, WHO_MOST)}, since {since}, {ago} s ago"


class LockRecords(Protocol):
    """Where a forge keeps the claims on accounts' locks. Every call may raise the adapter's
    error (a `ReconcilerError`) when the forge refuses or cannot be reached."""

    @property
    def lock_place(self) -> str:
        """Where the claims are, for a message: 'GitHub's deployments of reconciler-lock in
        octo-org/workforce'."""
        ...

    def claim_lock(self, key: str, who: str) -> int:
        """Record a claim on the lock `key`, made by `who`; its id."""
        ...

    def lock_claims(self, key: str) -> list[Claim]:
        """The claims on `key` not released (live, or of a holder that died), oldest first."""
        ...

    def release_lock(self, key: str, claim: int, why: str) -> None:
        """Release the claim (its holder's own release, or `TAKEN_OVER`)."""
        ...


@runtime_checkable
class RenewedLocks(Protocol):
    """A forge whose claims are renewed while held: each renewal starts the lease again."""

    renew_every_s: float

    def renew_lock(self, key: str, claim: int) -> None: ...


def who_applies(environ: Mapping[str, str]) -> str:
    """This apply, as a claim says it: the process (pid, host, command) and, in CI, its job;
    only the command is cut (at `COMMAND_MOST`), never who holds the lock or its run."""
    holder = Holder.this_process()
    said = f"pid {holder.pid} on {holder.host} ({shown(holder.command, COMMAND_MOST)})"
    if environ.get("GITHUB_RUN_ID") and environ.get("GITHUB_REPOSITORY"):
        server = environ.get("GITHUB_SERVER_URL") or "https://github.com"
        said += f", the run {server}/{environ['GITHUB_REPOSITORY']}/actions/runs/" \
            f"{environ['GITHUB_RUN_ID']}"  # fmt: skip
    elif environ.get("CI_JOB_URL"):
        said += f", the job {environ['CI_JOB_URL']}"
    return said


class ForgeLock:
    """The account's lock on the forge (an `apply.lock.AccountLock`). `notice` is told once
    when the lock is busy and will be waited for, and when a dead holder's claim is taken
    over."""

    def __init__(
        self,
        records: LockRecords,
        *,
        environ: Mapping[str, str] = os.environ,
        notice: Callable[[str], None] | None = None,
        confirm_s: float = CONFIRM_S,
        poll_s: float = POLL_S,
    ) -> None:
        self._records = records
        self._who = who_applies(environ)
        self._notice = notice or (lambda _text: None)
        self._confirm_s = confirm_s
        self._poll_s = poll_s

    @contextmanager
    def hold(self, account: Account, *, timeout: float) -> Iterator[None]:
        records, key = self._records, lock_name(account)
        mine = records.claim_lock(key, self._who)
        renewing = _Renewing(records, key, mine)
        try:
            self._wait_first(account, key, mine, timeout)
            yield
        finally:
            renewing.stop()
            with suppress(ReconcilerError):  # unreleased, it frees itself when its lease ends
                records.release_lock(key, mine, "released: the apply ended")

    def _wait_first(self, account: Account, key: str, mine: int, timeout: float) -> None:
        """Until `mine` is the oldest live claim, twice in a row; `AccountLocked` after
        `timeout` seconds."""
        deadline, told, confirmed = time.monotonic() + timeout, False, False
        while True:
            now = datetime.now(UTC)
            claims = self._records.lock_claims(key)
            live = [claim for claim in claims if claim.id == mine or not claim.expired(now)]
            first = live[0] if live else None
            if first is not None and first.id == mine:
                if confirmed:
                    self._take_over([c for c in claims if c.id < mine], key, now)
                    return
                confirmed = True
                time.sleep(self._confirm_s)
                continue
            confirmed = False
            if time.monotonic() >= deadline:
                raise self._locked(account, first, now, waited=timeout)
            if not told and first is not None:
                told = True
                waits = round(timeout, 1)
                self._notice(
                    f"waiting up to {waits:g} s for the lock of {account.describe()} on "
                    f"{self._records.lock_place}, held by {first.describe(now)}"
                )
            time.sleep(min(self._poll_s, max(0.0, deadline - time.monotonic())))

    def _take_over(self, dead: list[Claim], key: str, now: datetime) -> None:
        """Release the claims before ours whose lease ran out (their holders died)."""
        for claim in dead:
            self._notice(
                f"took over the lock from {claim.describe(now)}: its lease of "
                f"{claim.lease_s:g} s ran out"
            )
            with suppress(ReconcilerError):
                self._records.release_lock(key, claim.id, TAKEN_OVER)

    def _locked(
        self, account: Account, first: Claim | None, now: datetime, *, waited: float
    ) -> AccountLocked:
        after = f" after waiting {round(waited, 1):g} s" if waited else ""
        holder = "a claim the forge does not show" if first is None else first.describe(now)
        lease = "" if first is None else f" (its lease of {first.lease_s:g} s)"
        return AccountLocked(
            f"another apply of {account.describe()} holds its lock on "
            f"{self._records.lock_place}{after}: {holder}; nothing was changed",
            hint="wait for it to end, or apply with --lock-timeout (such as 5m) to wait for "
            f"it; the lock of an apply that died is taken over once its lease{lease} runs out",
        )


class _Renewing:
    """Renews a claim while it is held or waits (a forge that renews claims), on a thread."""

    def __init__(self, records: LockRecords, key: str, claim: int) -> None:
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        if isinstance(records, RenewedLocks):
            every = records.renew_every_s
            self._thread = start(self._run, records, key, claim, every, name="lock-renewal")

    def _run(self, records: RenewedLocks, key: str, claim: int, every: float) -> None:
        while not self._stopped.wait(every):
            with suppress(ReconcilerError):  # tried again next time; the lease allows a miss
                records.renew_lock(key, claim)

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
