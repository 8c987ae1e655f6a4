"""The service client: one method per endpoint, typed answers, paging, retries, read-only mode.

It is the only code that speaks HTTP to the service. One `httpx.Client` with a bounded pool of
`parallelism` connections serves every thread, so the client can be shared by the threads that
send invitation batches in parallel; its own thread pool fetches the pages of a list
concurrently once the first page says how many there are.

Retries (stamina): a request that is safe to repeat (GET, inactivation, paylist creation with
its idempotence key, replacing the webhook) is retried after a connection failure, a timeout,
a 429 or a 5xx. The bulk invitation is not idempotent: it is retried only after a 429 or when
the connection was never made; after a 5xx, a timeout or a dropped connection it raises
`AmbiguousOutcome` so the caller can re-read the workers and decide.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from http import HTTPStatus
from types import TracebackType
from typing import Any, TypeVar

import httpx
import stamina

from reconciler import logs
from reconciler.errors import ReconcilerError
from reconciler.service import decode
from reconciler.service.config import ClientConfig
from reconciler.service.errors import (
    AmbiguousOutcome,
    Conflict,
    Forbidden,
    InvalidRequest,
    ItemError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ReadOnlyViolation,
    ServerError,
    ServiceError,
    TransportFailure,
    Unauthorized,
    UnexpectedResponse,
)
from reconciler.service.models import (
    STATUS_IDS,
    InactivationResult,
    Invitation,
    InvitationResult,
    JournalEntry,
    Paylist,
    Payment,
    PaymentItem,
    Wallet,
    Webhook,
    WebhookHeader,
    Worker,
    WorkerStatus,
)
from reconciler.service.paging import Item, Page, parse_page, walk

T = TypeVar("T")

#: The most invitations one bulk request may carry (contract: more answers 413).
MAX_INVITATION_BATCH = 100

_log = logs.get_logger("reconciler.service")

_ERROR_CLASSES: dict[int, type[ServiceError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidRequest,
}


class ClientIdUnknown(ReconcilerError):
    """The wallet needs the client id, and neither the settings nor the account give it."""


class _BearerAuth(httpx.Auth):
    """Adds the token at the last moment, so it lives in one place only."""

    def __init__(self, config: ClientConfig) -> None:
        self._token = config.token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token.reveal()}"
        yield request

    def __repr__(self) -> str:
        return "_BearerAuth(token=Secret('(sensitive value)'))"


class ServiceClient:
    """A client of the workforce service; `read_only=True` refuses everything but GET."""

    def __init__(self, config: ClientConfig, *, read_only: bool = False) -> None:
        self.config = config
        self.read_only = read_only
        self._http = httpx.Client(
            base_url=config.base_url + "/",
            auth=_BearerAuth(config),
            headers={"User-Agent": config.user_agent, "Accept": "application/json"},
            timeout=httpx.Timeout(
                config.timeout, connect=config.connect_timeout, pool=max(config.timeout, 60.0)
            ),
            limits=httpx.Limits(
                max_connections=config.parallelism, max_keepalive_connections=config.parallelism
            ),
            follow_redirects=False,
        )
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._client_id: int | None = config.client_id

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"ServiceClient({self.config.base_url!r}, {mode})"

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connections and stop the page fetchers."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        self._http.close()

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
        body = [_invitation_body(invitation) for invitation in invitations]
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
        body = {
            "url": url,
            "headers": [{"name": h.name, "value": h.value.reveal()} for h in headers],
            "event_types": [str(event_type) for event_type in event_types],
            "enabled": enabled,
        }
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
        body: dict[str, Any] = {
            "description": description,
            "idempotence_key": key,
            "payments": [
                {
                    "description": item.description,
                    "amount": _json_amount(item.amount),
                    "worker_email": item.worker_email,
                }
                for item in payments
            ],
        }
        if client_id is not None:
            body["client_id"] = client_id
        answer = self._request("POST", "payment-agent/paylists", body=body)
        return self._decode("payment-agent/paylists", decode.paylist, answer)

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
        params = {}
        if since is not None:
            params["startDate"] = format_timestamp(since)
        if until is not None:
            params["endDate"] = format_timestamp(until)
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

    def client_id(self) -> int:
        """The client's id: from the settings, else from the webhook or the journal.

        Only the wallet's path needs it; the service never says it directly.
        """
        if self._client_id is None:
            webhook = self.get_webhook()
            if webhook is not None and webhook.client_id is not None:
                self._client_id = webhook.client_id
        if self._client_id is None:
            entry = next(iter(self.iter_transactions()), None)
            if entry is not None and entry.client_id is not None:
                self._client_id = entry.client_id
        if self._client_id is None:
            raise ClientIdUnknown(
                "the wallet needs the client id, and the account does not show it "
                "(no webhook configuration and no journal entry to read it from)",
                hint="pass --client-id N or set RECONCILER_CLIENT_ID",
            )
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

        return walk(fetch, size=size, key=item_key, submit=self._submit, window=self._window)

    @property
    def _window(self) -> int:
        # Enough pages queued to keep every connection busy while the caller consumes in order.
        return 2 * self.config.parallelism

    def _submit(self, fetch: Callable[[int], Page], number: int) -> Future[Page]:
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.config.parallelism, thread_name_prefix="reconciler-page"
                )
        return self._executor.submit(fetch, number)

    # -- one request ------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: object = None,
        repeatable: bool = True,
    ) -> Any:
        """Send one request (with its retries) and return the decoded JSON answer, or None."""
        if self.read_only and method != "GET":
            raise ReadOnlyViolation(
                f"refusing to send {method} /{path}: this client is read-only",
                hint="plan, drift, export and the look commands never change the account",
            )
        content = None if body is None else json.dumps(body).encode()
        policy = self.config.retry
        deadline = time.monotonic() + policy.total_seconds
        answer: Any = None
        for attempt in stamina.retry_context(
            on=_should_retry(repeatable, deadline, policy.wait_jitter),
            attempts=policy.attempts,
            timeout=policy.total_seconds,
            wait_initial=policy.wait_initial,
            wait_max=policy.wait_max,
            wait_jitter=policy.wait_jitter,
        ):
            with attempt:
                answer = self._send_once(method, path, params, content, repeatable)
        return answer

    def _send_once(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        content: bytes | None,
        repeatable: bool,
    ) -> Any:
        headers = {"Content-Type": "application/json"} if content is not None else None
        started = time.monotonic()
        try:
            response = self._http.request(
                method, path, params=params, content=content, headers=headers
            )
        except httpx.TransportError as error:
            _log.debug(
                "service request failed",
                method=method,
                path="/" + path,
                error=type(error).__name__,
                elapsed_ms=round((time.monotonic() - started) * 1000, 1),
            )
            raise self._transport_failure(method, path, error, repeatable) from error
        _log.debug(
            "service request",
            method=method,
            path="/" + path,
            params=dict(params or {}),
            status=response.status_code,
            elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        )
        if response.is_success:
            return self._success_body(method, path, response)
        raise self._error(method, path, response, repeatable)

    def _transport_failure(
        self, method: str, path: str, error: httpx.TransportError, repeatable: bool
    ) -> ServiceError:
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
            return TransportFailure(
                f"could not connect to the service at {self.config.base_url}: {_describe(error)}",
                surely_not_sent=True,
            )
        what = (
            "no answer in time"
            if isinstance(error, httpx.TimeoutException)
            else "the connection was dropped before a complete answer"
        )
        if not repeatable:
            return AmbiguousOutcome(
                f"{method} /{path} may or may not have taken effect: {what}",
                hint="re-read the live state to see what happened before sending it again",
            )
        return TransportFailure(
            f"{method} /{path} failed: {what} ({_describe(error)})", surely_not_sent=False
        )

    def _success_body(self, method: str, path: str, response: httpx.Response) -> Any:
        if not response.content.strip():
            return None
        try:
            return json.loads(response.content, parse_float=Decimal)
        except ValueError:
            raise UnexpectedResponse(
                f"the answer to {method} /{path} ({response.status_code}) is not JSON",
                status=response.status_code,
            ) from None

    def _error(
        self, method: str, path: str, response: httpx.Response, repeatable: bool
    ) -> ServiceError:
        status = response.status_code
        title, detail, item_errors = _problem(response)
        reason = _reason(status)
        explanation = detail or title
        what = f"{method} /{path} failed: {status} {reason}"
        if explanation and explanation != reason:
            what = f"{what}: {explanation}"
        details: dict[str, Any] = {"status": status, "detail": detail, "item_errors": item_errors}
        if status == 401:
            return Unauthorized(
                f"the service refused the token from {self.config.token_source} (401 {reason})",
                hint="check that the token is current and meant for this service address",
                **details,
            )
        if status == 429:
            return RateLimited(what, retry_after=_retry_after(response), **details)
        if status >= 500:
            if not repeatable:
                return AmbiguousOutcome(
                    f"{method} /{path} may or may not have taken effect: {status} {reason}",
                    hint="re-read the live state to see what happened before sending it again",
                    **details,
                )
            return ServerError(what, **details)
        return _ERROR_CLASSES.get(status, ServiceError)(what, **details)

    def _decode(self, path: str, decoder: Callable[[Any], T], answer: Any) -> T:
        if answer is None:
            raise UnexpectedResponse(f"the service answered /{path} with no body")
        try:
            return decoder(answer)
        except (decode.DecodeError, AttributeError, TypeError) as error:
            raise UnexpectedResponse(
                f"the answer to /{path} is not what the contract says: {error}"
            ) from None


def _should_retry(repeatable: bool, deadline: float, jitter: float) -> Callable[[Exception], Any]:
    """stamina's hook: whether to retry, or how long to wait when the service said so."""

    def hook(error: Exception) -> bool | float:
        if isinstance(error, RateLimited):
            if error.retry_after is None:
                return True
            if time.monotonic() + error.retry_after > deadline:
                return False  # the service asks for a longer wait than the time left
            # Never earlier than asked; the jitter keeps parallel fetches from returning at once.
            return error.retry_after + random.uniform(0, jitter)
        if isinstance(error, ServerError):
            return True  # raised only for repeatable requests; others get AmbiguousOutcome
        if isinstance(error, TransportFailure):
            return repeatable or error.surely_not_sent
        return False

    return hook


def _problem(response: httpx.Response) -> tuple[str | None, str | None, list[ItemError]]:
    """Title, detail and item errors of an RFC 9457 answer, or a short note on any other."""
    text = response.content.decode("utf-8", "replace").strip()
    if not text:
        return None, "the answer had no body", []
    try:
        body = json.loads(text)
    except ValueError:
        content_type = response.headers.get("content-type", "unknown type").split(";")[0]
        snippet = " ".join(text.split())[:200]
        return None, f"a non-JSON answer ({content_type}): {snippet}", []
    if not isinstance(body, dict):
        return None, f"an unexpected JSON answer: {json.dumps(body)[:200]}", []
    title = body.get("title") if isinstance(body.get("title"), str) else None
    detail = body.get("detail") if isinstance(body.get("detail"), str) else None
    if detail is None and isinstance(body.get("message"), str):
        detail = body["message"]  # what Spring's default error answer calls it
    errors = body.get("errors")
    if not isinstance(errors, list):
        errors = []
    return title, detail, [_item_error(error) for error in errors]


def _item_error(error: object) -> ItemError:
    if not isinstance(error, dict):
        return ItemError(message=str(error))
    index = error.get("index")
    field = error.get("field")
    return ItemError(
        message=str(error.get("message", "invalid")),
        index=index if isinstance(index, int) and not isinstance(index, bool) else None,
        field=field if isinstance(field, str) else None,
    )


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds, from a number or an HTTP date."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _describe(error: Exception) -> str:
    return str(error) or type(error).__name__


def _invitation_body(invitation: Invitation) -> dict[str, str]:
    fields = {
        "workerName": invitation.worker_name,
        "workerSurname": invitation.worker_surname,
        "typeOfWorker": invitation.type_of_worker,
        "workerLegalName": invitation.worker_legal_name,
        "workerEmail": invitation.worker_email,
        "countryIso": invitation.country_iso,
        "jobTitle": invitation.job_title,
        "workerEmailText": invitation.worker_email_text,
        "externalId": invitation.external_id,
    }
    return {name: value for name, value in fields.items() if value is not None}


def _json_amount(amount: Decimal) -> float:
    """A JSON number that prints exactly as the Decimal does (two places fit a float's 15)."""
    number = float(amount)
    if Decimal(repr(number)) != amount:
        raise ValueError(f"the amount {amount} cannot be sent exactly")
    return number


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a `Z`, as the date-range payments query takes it."""
    if moment.tzinfo is None:
        raise ValueError("a timestamp sent to the service must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
