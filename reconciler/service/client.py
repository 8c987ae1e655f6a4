"""The service client: one method per endpoint, with typed answers.

It is the only code that speaks to the service. Its transport (one pool of `parallelism`
connections, retries, errors, read-only mode) serves every thread, so the client can be shared
by the threads that send invitation batches in parallel; its own thread pool fetches the pages
of a list concurrently once the first page says how many there are.

Which requests are safe to repeat: GETs, inactivation, replacing the webhook, and paylist
creation (its idempotence key makes it so). The bulk invitation is not: after a 5xx, a timeout
or a dropped connection it raises `AmbiguousOutcome` instead of being sent again.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

from reconciler import logs, threads
from reconciler.service import decode, encode
from reconciler.service.config import ClientConfig
from reconciler.service.errors import ClientIdUnknown, NotFound, UnexpectedResponse
from reconciler.service.models import (
    STATUS_IDS,
    InactivationResult,
    Invitation,
    InvitationResult,
    JournalEntry,
    Paylist,
    PaylistSummary,
    Payment,
    PaymentItem,
    Wallet,
    Webhook,
    WebhookHeader,
    WebhookTestResult,
    Worker,
    WorkerStatus,
)
from reconciler.service.paging import Item, Numbering, Page, parse_page, walk, walk_from
from reconciler.service.session import token_client_id
from reconciler.service.transport import Transport

T = TypeVar("T")

#: The most invitations one bulk request may carry (contract: more answers 413).
MAX_INVITATION_BATCH = 100


class ServiceClient:
    """A client of the workforce service; `read_only=True` refuses everything but GET."""

    def __init__(self, config: ClientConfig, *, read_only: bool = False) -> None:
        self.config = config
        self.read_only = read_only
        self._transport = Transport(config, read_only=read_only)
        self._request = self._transport.request
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._client_id: int | None = config.client_id
        # How the service numbers pages, once a read has seen it (kept for the later reads).
        self._numbering = Numbering()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"ServiceClient({self.config.base_url!r}, {mode})"

    # -- lifecycle --------------------------------------------------------------------------

    def check_credentials(self) -> None:
        """Before the first request: a pasted JWT past its `exp`, with nothing to renew it,
        stops here, saying when it expired."""
        self._transport.tokens.check_not_expired()

    def abandon(self) -> None:
        """Stop reading: what is not sent yet, or waits to be retried, fails as `Abandoned`."""
        self._transport.abandon()

    def close(self) -> None:
        """Close the connections and stop the page fetchers."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        self._transport.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- workers ----------------------------------------------------------------------------

    def iter_workers(self, status: WorkerStatus | str | None = None) -> Iterator[Worker]:
        """Every worker (one per agreement), optionally of one status, each once.

        The service filters by the statuses it can (ACTIVE, INVITATION_SENT,
        VERIFICATION_PENDING, ENDED); any other status is filtered here from the full list.
        """
        wanted = None if status is None else WorkerStatus(status)
        params: dict[str, Any] = {}
        if wanted is not None and wanted in STATUS_IDS:
            params["statusId"] = STATUS_IDS[wanted]
        for item in self._walk("contract/workers/list", params, key="agreementId"):
            worker = self._decode("contract/workers/list", decode.worker, item)
            if wanted is None or worker.status == wanted:
                yield worker

    def list_workers(self, status: WorkerStatus | str | None = None) -> list[Worker]:
        """Every worker as a list; see `iter_workers`."""
        return list(self.iter_workers(status))

    def invite_workers(self, invitations: Sequence[Invitation]) -> list[InvitationResult]:
        """Invite a batch of at most 100 workers, all or nothing.

        Not repeated after a 5xx, a timeout or a dropped connection (`AmbiguousOutcome`): the
        caller re-reads the workers to learn which invitations landed.
        """
        if not 1 <= len(invitations) <= MAX_INVITATION_BATCH:
            raise ValueError(f"an invitation batch holds 1 to {MAX_INVITATION_BATCH} items")
        path = "contract/workers/inviteWorkersBulkLocked"
        body = [encode.invitation_body(invitation) for invitation in invitations]
        answer = self._request("POST", path, body=body, repeatable=False)
        if answer is None:
            return []  # success without a body: the caller re-reads to see the agreements
        if not isinstance(answer, list):
            raise UnexpectedResponse(f"the answer to POST /{path} is not an array")
        return [self._decode(path, decode.invitation_result, item) for item in answer]

    def inactivate_agreement(self, agreement_id: int) -> InactivationResult:
        """Inactivate one agreement; `changed` is False when it already was."""
        path = f"contract-server/v2/general/worker/agreements/{int(agreement_id)}/status"
        answer = self._request("POST", path, body={"status": "inactivated"})
        return self._decode(path, decode.inactivation_result, answer)

    # -- webhook ----------------------------------------------------------------------------

    def get_webhook(self) -> Webhook | None:
        """The client's webhook configuration, or None when there is none."""
        try:
            answer = self._request("GET", "webhooks/clients")
        except NotFound:
            return None
        webhook = self._decode("webhooks/clients", decode.webhook, answer)
        for header in webhook.headers:
            logs.register_secret(header.value.reveal())
        if webhook.client_id is not None and self._client_id is None:
            self._client_id = webhook.client_id
        return webhook

    def set_webhook(
        self,
        url: str,
        headers: Sequence[WebhookHeader],
        event_types: Sequence[str],
        enabled: bool = True,
    ) -> Webhook:
        """Create the webhook configuration, or replace the whole of it."""
        for header in headers:
            logs.register_secret(header.value.reveal())
        body = encode.webhook_body(url, headers, event_types, enabled)
        answer = self._request("POST", "webhooks/clients", body=body)
        return self._decode("webhooks/clients", decode.webhook, answer)

    # -- paylists and payments --------------------------------------------------------------

    def create_paylist(
        self,
        description: str,
        payments: Sequence[PaymentItem],
        *,
        idempotence_key: str | None = None,
        client_id: int | None = None,
    ) -> Paylist:
        """Create a paylist; its idempotence key (32 characters) makes retrying it safe.

        Without a key a fresh one is made for this call, so the call's own retries reuse it.
        """
        key = idempotence_key or uuid.uuid4().hex
        body = encode.paylist_body(description, key, payments, client_id)
        answer = self._request("POST", "payment-agent/paylists", body=body)
        return self._decode("payment-agent/paylists", decode.paylist, answer)

    def get_worker(self, email: str) -> Worker:
        """The agreement for an email (the open one, else the latest); NotFound otherwise."""
        path = "contract/workers"
        answer = self._request("GET", path, params={"email": email})
        return self._decode(path, decode.worker, answer)

    def get_paylist(self, paylist_id: int) -> Paylist:
        path = f"payment-agent/paylists/{int(paylist_id)}"
        return self._decode(path, decode.paylist, self._request("GET", path))

    def iter_paylists(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[PaylistSummary]:
        """The paylists created in [since, until), oldest first."""
        params = encode.date_range(since, until)
        for item in self._walk("payment-agent/paylists", params, key="paylistId"):
            yield self._decode("payment-agent/paylists", decode.paylist_summary, item)

    def get_payment(self, payment_id: int) -> Payment:
        path = f"payment-agent/payments/{int(payment_id)}"
        return self._decode(path, decode.payment, self._request("GET", path))

    def test_webhook(self, event_type: str | None = None) -> WebhookTestResult:
        """Ask the service to send one test event now; what the configured URL answered."""
        body = {} if event_type is None else {"event_type": event_type}
        answer = self._request("POST", "webhooks/clients/test", body=body)
        return self._decode("webhooks/clients/test", decode.webhook_test_result, answer)

    def iter_paylist_payments(self, paylist_id: int) -> Iterator[Payment]:
        """Every payment of one paylist."""
        path = f"payment-agent/paylists/{int(paylist_id)}/payments"
        for item in self._walk(path, {}, key="id"):
            yield self._decode(path, decode.payment, item)

    def list_paylist_payments(self, paylist_id: int) -> list[Payment]:
        return list(self.iter_paylist_payments(paylist_id))

    def iter_payments(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[Payment]:
        """The client's payments created in [since, until); the service's defaults otherwise."""
        params = encode.date_range(since, until)
        for item in self._walk("payment-agent/payments", params, key="id"):
            yield self._decode("payment-agent/payments", decode.payment, item)

    def list_payments(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> list[Payment]:
        return list(self.iter_payments(since, until))

    # -- wallet -----------------------------------------------------------------------------

    def get_wallet(self, client_id: int | None = None) -> Wallet:
        """The wallet and its balance; the client id is found as `client_id()` says."""
        number = self.client_id() if client_id is None else int(client_id)
        path = f"client-wallet/clients/{number}/wallet"
        return self._decode(path, decode.wallet, self._request("GET", path))

    def iter_transactions(self) -> Iterator[JournalEntry]:
        """Every journal entry of the wallet, oldest first."""
        path = "client-wallet/clients/transactions"
        for item in self._walk(path, {}, key="journal_id"):
            yield self._decode(path, decode.journal_entry, item)

    def list_transactions(self) -> list[JournalEntry]:
        return list(self.iter_transactions())

    def iter_transactions_since(self, since: datetime) -> Iterator[JournalEntry]:
        """The journal entries made at or after `since`, oldest first, reading only the pages
        that may hold them (`paging.walk_from`: the journal takes no dates). Before any walk
        has shown how the service numbers its pages, the journal's own first pages show it (a
        walk's opening: the money is read beside the workers' first page, not after it); an
        empty journal shows nothing, and is read whole."""
        path = "client-wallet/clients/transactions"
        if self._numbering.first is None:
            opening = self._walk(path, {}, key="journal_id")
            next(opening, None)  # the opening learns the numbering; nothing is in flight yet
            del opening
        first = self._numbering.first
        if first is None:
            yield from (e for e in self.iter_transactions() if _at_or_after(e.created_at, since))
            return
        size = self.config.page_size
        pages: dict[int, list[JournalEntry]] = {}

        def page(number: int) -> list[JournalEntry]:
            if number not in pages:
                params = {"page": first + number, "size": size}
                answer = self._decode(path, parse_page, self._request("GET", path, params=params))
                pages[number] = [self._decode(path, decode.journal_entry, i) for i in answer.items]
            return pages[number]

        yield from walk_from(
            page,
            size=size,
            before=lambda entry: not _at_or_after(entry.created_at, since),
            submit=self._pool().submit,
            ahead=self.config.parallelism,
        )

    def client_id(self) -> int:
        """The client's id, found as `known_client_id()` says; only the wallet's path needs it."""
        found = self.known_client_id()
        if found is None:
            raise ClientIdUnknown(
                "the wallet needs the client id, and the account does not show it "
                "(no webhook configuration and no journal entry to read it from)",
                hint=f"{self.config.names.set_client_id} (against the sandbox, "
                "`reconciler sandbox serve` prints it in the line to export)",
            )
        return found

    def confirm_client_id(self, client_id: int) -> bool:
        """Whether the token is client `client_id`'s, as the service answers at the wallet path
        that names it (another client's id answers 404); once confirmed, it is the client id."""
        try:
            self.get_wallet(client_id)
        except NotFound:
            return False
        if self._client_id is None:
            self._client_id = client_id
        return True

    def known_client_id(self) -> int | None:
        """The client's id: from the settings, else the login token's `client_id` claim, else
        the webhook or the journal; None when nothing says it (the service never does
        directly)."""
        if self._client_id is None:
            self._client_id = token_client_id(self._transport.tokens.current().reveal())
        if self._client_id is None:
            webhook = self.get_webhook()
            if webhook is not None and webhook.client_id is not None:
                self._client_id = webhook.client_id
        if self._client_id is None:
            entry = next(iter(self.iter_transactions()), None)
            if entry is not None and entry.client_id is not None:
                self._client_id = entry.client_id
        return self._client_id

    # -- paging -----------------------------------------------------------------------------

    def _walk(self, path: str, params: Mapping[str, Any], *, key: str) -> Iterator[Item]:
        size = self.config.page_size

        def fetch(number: int) -> Page:
            answer = self._request("GET", path, params={**params, "page": number, "size": size})
            return self._decode(path, parse_page, answer)

        def item_key(item: Item) -> object:
            value = item.get(key)
            if value is None:
                raise UnexpectedResponse(f"an item of GET /{path} has no {key}")
            return value

        return walk(
            fetch,
            size=size,
            key=item_key,
            submit=self._submit,
            window=self._window,
            numbering=self._numbering,
        )

    @property
    def _window(self) -> int:
        # Enough pages queued to keep every connection busy while the caller consumes in order.
        return 2 * self.config.parallelism

    def _submit(self, fetch: Callable[[int], Page], number: int) -> Future[Page]:
        return self._pool().submit(fetch, number)

    def _pool(self) -> ThreadPoolExecutor:
        """The threads that read pages concurrently, made on first use."""
        with self._executor_lock:
            if self._executor is None:
                self._executor = threads.Pool(
                    max_workers=self.config.parallelism, thread_name_prefix="reconciler-page"
                )
            return self._executor

    # -- one request ------------------------------------------------------------------------

    def _decode(self, path: str, decoder: Callable[[Any], T], answer: Any) -> T:
        if answer is None:
            raise UnexpectedResponse(f"the service answered /{path} with no body")
        try:
            return decoder(answer)
        except (decode.DecodeError, AttributeError, TypeError) as error:
            raise UnexpectedResponse(
                f"the answer to /{path} is not what the contract says: {error}"
            ) from None


def _at_or_after(moment: datetime | None, since: datetime) -> bool:
    return moment is None or moment >= since
