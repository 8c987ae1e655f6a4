"""Apply: carry out a plan against the service, safely, and account for every change.

`schedule` orders a plan's changes (inactivations, invitation batches, the webhook), `converge`
decides what to send again after an ambiguous or partly refused request, the `Executor` runs
the steps through a passed-in service, and the `Ledger` records how each change ended.
"""

from reconciler.apply.executor import DEFAULT_PARALLELISM, ApplyService, Executor
from reconciler.apply.ledger import Entry, Ledger, Outcome

__all__ = ["DEFAULT_PARALLELISM", "ApplyService", "Entry", "Executor", "Ledger", "Outcome"]
