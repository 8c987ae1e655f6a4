"""What can go wrong when talking to the service, as one class hierarchy.

Every error is a `ReconcilerError`, so the CLI prints its message without a traceback. Messages
carry the status, the service's own explanation and the per-item errors, and never a token or a
header value: whatever the service sent back is shown only through `redaction.shown`, which
bounds it and masks every registered secret and every run that could be a credential.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.errors import ReconcilerError
from reconciler.redaction import shown

#: How much of the service's text an error shows: the message (with the service's explanation
#: in it), each detail, and how many item errors.
_MESSAGE = 1000
_DETAIL = 300
_ITEMS = 50


@dataclass(frozen=True, slots=True)
class ItemError:
    """One problem the service found in a request body: which item, which field, what."""

    message: str
    index: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        place = []
        if self.index is not None:
            place.append(f"item {self.index}")
        if self.field:
            place.append(self.field)
        return f"{', '.join(place)}: {self.message}" if place else self.message


class ServiceError(ReconcilerError):
    """The service answered with an error, or could not be reached.

    `status` is the HTTP status (None when no answer came), `detail` the service's explanation,
    `item_errors` what it found wrong in each item of the request, `retry_after` the wait its
    `Retry-After` asked for, in seconds (a 429's, or a 503's), if it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        detail: str | None = None,
        item_errors: Sequence[ItemError] = (),
        hint: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        self.detail = None if detail is None else shown(detail, _DETAIL)
        self.item_errors = tuple(item_errors)
        lines = [shown(message, _MESSAGE)]
        lines.extend(f"  - {shown(str(item), _DETAIL)}" for item in self.item_errors[:_ITEMS])
        if len(self.item_errors) > _ITEMS:
            lines.append(f"  - and {len(self.item_errors) - _ITEMS:,} more")
        super().__init__("\n".join(lines), hint=hint)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, message={self.message!r})"


class InvalidRequest(ServiceError):
    """400 (or 422): the service refused the request as invalid and changed nothing."""


class Unauthorized(ServiceError):
    """401: the token was missing or refused."""


class Forbidden(ServiceError):
    """403: the request named another client."""


class NotFound(ServiceError):
    """404: no such object, or not this client's (the service does not say which)."""


class Conflict(ServiceError):
    """409: an idempotence key was reused with other content."""


class PayloadTooLarge(ServiceError):
    """413: too many items in one request."""


class RateLimited(ServiceError):
    """429: too many requests; `retry_after` is the wait the service asked for, in seconds."""


class ServerError(ServiceError):
    """5xx: the service failed; a request that is safe to repeat may be tried again."""


class TransportFailure(ServiceError):
    """No complete answer: the connection failed, timed out or was dropped.

    `surely_not_sent` is True when the request cannot have reached the service (the connection
    was never made), which makes even an unrepeatable request safe to send again.
    """

    def __init__(self, message: str, *, surely_not_sent: bool, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.surely_not_sent = surely_not_sent


class UnknownHost(ServiceError):
    """The service's host name does not resolve (DNS): a typo or no network, not a passing
    fault, so it is said at once instead of retried; nothing was sent."""


class AmbiguousOutcome(ServiceError):
    """A request that is not safe to repeat may or may not have taken effect.

    Raised instead of retrying after a 5xx, a timeout or a dropped connection once the request
    was sent; the caller re-reads the live state to find out what happened. It is not a refusal.
    """


class UnexpectedResponse(ServiceError):
    """The service answered success with a body the client cannot read."""


class ReadOnlyViolation(ServiceError):
    """A read-only client was asked to send something other than GET; nothing was sent."""


class Abandoned(ServiceError):
    """The client was abandoned (`ServiceClient.abandon`): nothing more is sent or retried."""


class ClientIdUnknown(ReconcilerError):
    """The wallet needs the client id, and neither the settings nor the account give it."""
