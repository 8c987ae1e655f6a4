"""How hard the client tries again: its own module, since the settings (`service.config`) hold
one and the retries (`service.retries`) follow one, and neither should import the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try again after a transient failure (429, 5xx, connection trouble).

    Backoff is exponential from `wait_initial` up to `wait_max`, plus up to `wait_jitter` of
    random jitter; a Retry-After from the service replaces the computed wait. A request gives up
    after `attempts` tries or once `total_seconds` have passed, whichever comes first.
    """

    attempts: int = 6
    total_seconds: float = 60.0
    wait_initial: float = 0.25
    wait_max: float = 10.0
    wait_jitter: float = 0.5
