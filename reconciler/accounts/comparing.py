"""The key two saved plans are compared with (`reconciler plan-compare`): an account's plans
are signed with the key its entry in the accounts file names, a single account's with the
plan key or the token; plans of two different owners compare with nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from reconciler.accounts.environment import key_environment
from reconciler.accounts.file import find_accounts_file, load_accounts_file
from reconciler.accounts.owner import plan_owner
from reconciler.errors import ReconcilerError
from reconciler.plan.saved import SavedPlan
from reconciler.plan.signing import PlanKey, UntrustedPlan
from reconciler.session.plankey import offline_plan_key


def comparison_key(
    plans: tuple[SavedPlan, SavedPlan], files: tuple[Path, Path], accounts_file: Path | None
) -> PlanKey:
    """The key both plans must be signed with: for an account's plans, the key its entry
    names (`planKeyEnv`, else RECONCILER_PLAN_KEY, else its `tokenEnv`), as its plan read it;
    else RECONCILER_PLAN_KEY, else the token."""
    owners = plan_owner(plans[0].sources), plan_owner(plans[1].sources)
    if owners[0] != owners[1]:
        said = [
            f"{file} is {'a single-account plan' if o is None else f'the plan of account {o}'}"
            for file, o in zip(files, owners, strict=True)
        ]
        raise UntrustedPlan(
            f"{said[0]}, {said[1]}: plans of one account compare, nothing else",
            hint="compare the account's reviewed plan with its new plan",
        )
    name = owners[0]
    if name is None:
        return offline_plan_key()
    accounts = load_accounts_file(find_accounts_file(accounts_file))
    entry = accounts.named(name)
    if entry is None:
        raise UntrustedPlan(
            f"{files[0]} is the plan of account {name}, which {accounts.path} does not have: "
            "its plan key is unknown",
            hint=f"its accounts: {', '.join(accounts.names)}",
        )
    environ = key_environment(entry, os.environ)
    if not environ:
        variables = [entry.plan_key_env or "RECONCILER_PLAN_KEY"]
        variables += [entry.token_env] if entry.token_env is not None else []
        raise ReconcilerError(
            f"comparing plans of account {name} needs its plan key: {' or '.join(variables)} "
            "is not set",
            hint="set it as for the `reconciler plan --account NAME --out` that made the plans",
        )
    return offline_plan_key(environ)
