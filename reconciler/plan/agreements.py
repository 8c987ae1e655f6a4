"""The account's agreements grouped as the diff looks them up, built while they are read.

Before it decides anything, a diff of 100,000 workers groups the agreements (by externalId,
the open ones by email) and compares each managed pair field by field: two thirds of its time,
and none of it needs the whole account. The refresh adds each agreement as its page arrives,
and once the file is known (`expect`) the pairs are compared as they come, so a plan spends
the time the service takes to answer on them, and the diff, once both sides are ready, only
decides.

Nothing here changes a decision: the diff builds an index of its own when a `LiveState` carries
none, or one of other agreements (`indexes`), and a comparison made ahead is used only for the
very desired worker and agreement it was made for (`compared`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from reconciler.desired.model import DesiredState, DesiredWorker
from reconciler.identity import email_key
from reconciler.plan.changes import FieldChange
from reconciler.plan.compare import compare_worker
from reconciler.service.models import Worker, WorkerStatus

# Set membership is cheaper than the enum's properties, which counts at 100,000 agreements.
KNOWN = frozenset(WorkerStatus.__members__.values())
OPEN = frozenset(status for status in KNOWN if status.is_open)

_Comparison = tuple[DesiredWorker, Worker, tuple[FieldChange, ...]]


class AgreementIndex:
    """Agreements in the order read, grouped by externalId, the open ones by email too.

    `add` is called by one thread (the refresh's); `expect` and `compared` may be called from
    another while it adds: a comparison missed by the race is made again by the diff.
    """

    __slots__ = (
        "_compared",
        "_wanted",
        "_workers",
        "agreements",
        "by_id",
        "no_external_id",
        "open_by_email",
        "unknown_status",
    )

    def __init__(self) -> None:
        self.agreements: list[Worker] = []
        self.by_id: defaultdict[str, list[Worker]] = defaultdict(list)
        self.open_by_email: defaultdict[str, list[Worker]] = defaultdict(list)
        self.no_external_id: list[Worker] = []  # open agreements without an externalId
        self.unknown_status: list[Worker] = []  # agreements of a status not known here
        self._wanted: dict[str, DesiredWorker] | None = None
        self._compared: dict[int, _Comparison] = {}
        self._workers: tuple[Worker, ...] | None = None

    @classmethod
    def of(cls, agreements: Iterable[Worker]) -> AgreementIndex:
        index = cls()
        for agreement in agreements:
            index.add(agreement)
        return index

    def add(self, agreement: Worker) -> None:
        self.agreements.append(agreement)
        status, external_id = agreement.status, agreement.external_id
        if status not in KNOWN:
            self.unknown_status.append(agreement)
        is_open = status in OPEN
        if is_open:
            self.open_by_email[email_key(agreement.email)].append(agreement)
        if external_id is None:
            if is_open:
                self.no_external_id.append(agreement)
            return
        self.by_id[external_id].append(agreement)
        wanted = self._wanted
        if is_open and wanted is not None:
            want = wanted.get(external_id)
            if want is not None:
                self._compare(want, agreement)

    def expect(self, desired: DesiredState) -> None:
        """The file is known: compare its workers with the open agreements read so far, and
        with the next ones as they are added."""
        wanted = {worker.external_id: worker for worker in desired.workers}
        self._wanted = wanted
        for agreement in self.agreements[: len(self.agreements)]:
            if agreement.status in OPEN and agreement.external_id is not None:
                want = wanted.get(agreement.external_id)
                if want is not None and agreement.agreement_id not in self._compared:
                    self._compare(want, agreement)

    def freeze(self) -> tuple[Worker, ...]:
        """Every agreement added, as the `LiveState` holds them; nothing is added after."""
        self._workers = tuple(self.agreements)
        return self._workers

    def indexes(self, workers: tuple[Worker, ...]) -> bool:
        """Whether this index was built from exactly these agreements (the same tuple)."""
        return self._workers is workers

    def compared(self, want: DesiredWorker, agreement: Worker) -> tuple[FieldChange, ...]:
        """`compare_worker(want, agreement)`, made ahead when it was."""
        found = self._compared.get(agreement.agreement_id)
        if found is not None and found[0] is want and found[1] is agreement:
            return found[2]
        return compare_worker(want, agreement)

    def _compare(self, want: DesiredWorker, agreement: Worker) -> None:
        self._compared[agreement.agreement_id] = (want, agreement, compare_worker(want, agreement))
