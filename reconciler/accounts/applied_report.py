"""What `apply` over several accounts prints: each account's ledger, then a summary that names
the accounts in each state, so an operator knows which to look at without reading them all.

An account's apply ends one of six ways: applied (its changes sent, every one landed), no
changes (nothing to send), already applied (its record, `reconciler.accounts.applied`, says
so: nothing sent), incomplete (some change or payment did not land), refused (a check said no
before anything was sent: the plan untrusted, stale, unsafe, or for another account), or
failed (the service or a setting failed it). The last three make the exit status 1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reconciler.accounts.applied import Record
from reconciler.accounts.run import Outcome
from reconciler.apply import Ledger
from reconciler.apply.report import ledger_json, ledger_text
from reconciler.errors import EXIT_POLICY_CHANGE
from reconciler.plan import Plan
from reconciler.words import counted, plural


@dataclass(frozen=True, slots=True)
class Applied:
    """One account's apply: the plan carried out and its ledger; or the record that the plan
    was applied already (nothing sent now); `note`, what went wrong after it applied."""

    plan: Plan | None
    ledger: Ledger
    already: Record | None = None
    note: str | None = None


#: The summary's states, in the order it names them; (JSON key, text words).
STATES = (
    ("applied", "applied"),
    ("no_changes", "with no changes"),
    ("already_applied", "already applied"),
    ("incomplete", "incomplete"),
    ("refused", "refused"),
    ("failed", "failed"),
)


def state_of(outcome: Outcome[Applied]) -> str:
    """Which of `STATES` the account's apply ended in."""
    if outcome.value is None:
        return "refused" if outcome.refused else "failed"
    if outcome.value.already is not None:
        return "already_applied"
    if not outcome.value.ledger.complete:
        return "incomplete"
    plan = outcome.value.plan
    return "applied" if plan is not None and plan.has_changes else "no_changes"


def by_state(outcomes: list[Outcome[Applied]]) -> dict[str, list[str]]:
    """The accounts' names in each state (every state, in `STATES`' order)."""
    found: dict[str, list[str]] = {key: [] for key, _ in STATES}
    for outcome in outcomes:
        found[state_of(outcome)].append(outcome.name)
    return found


def succeeded(outcomes: list[Outcome[Applied]]) -> bool:
    """Whether every account is applied now (exit 0)."""
    bad = {"incomplete", "refused", "failed"}
    return not any(state_of(outcome) in bad for outcome in outcomes)


def failed_status(outcomes: list[Outcome[Applied]]) -> int:
    """The exit status of a fleet apply that did not succeed: 4 when every account that did
    not is held by a change of its approvals policy (the merge stays pending), else 1."""
    bad = [o for o in outcomes if state_of(o) in {"incomplete", "refused", "failed"}]
    held = bad and all(outcome.exit_code == EXIT_POLICY_CHANGE for outcome in bad)
    return EXIT_POLICY_CHANGE if held else 1


def applied_json(outcomes: list[Outcome[Applied]]) -> str:
    """`{"accounts": [{"name", "ledger" | "already_applied" | "error"}], "summary"}`."""
    rows: list[dict[str, Any]] = []
    for outcome in outcomes:
        row: dict[str, Any] = {"name": outcome.name, "state": state_of(outcome)}
        value = outcome.value
        if value is None:
            row["error"] = {"message": outcome.error}
        elif value.already is not None:
            record = value.already
            row["already_applied"] = {"at": record.applied_at, "actions": record.actions}
        else:
            row["ledger"] = json.loads(ledger_json(value.ledger))
        if value is not None and value.note is not None:
            row["note"] = value.note
        rows.append(row)
    summary: dict[str, Any] = {"accounts": len(outcomes), **by_state(outcomes)}
    return json.dumps({"accounts": rows, "summary": summary}, indent=2) + "\n"


def applied_text(outcomes: list[Outcome[Applied]]) -> str:
    """A header and the ledger per account, then the summary line."""
    parts: list[str] = []
    for outcome in outcomes:
        parts.append(f"=== account {outcome.name} ===\n")
        value = outcome.value
        if value is None:
            parts.append(f"Error: {outcome.error}\n\n")
            continue
        if value.already is not None:
            record = value.already
            parts.append(
                f"Already applied at {record.applied_at} ({record.actions}): nothing was sent.\n\n"
            )
            continue
        assert value.plan is not None, "an account applied now has its plan"
        parts.append(f"Plan: {value.plan.actions_line}.\n")
        parts.append(ledger_text(value.ledger))
        if value.note is not None:
            parts.append(f"Warning: {value.note}\n")
        parts.append("\n")
    return "".join(parts) + summary_line(outcomes) + "\n"


def summary_line(outcomes: list[Outcome[Applied]]) -> str:
    """'3 accounts: 1 applied (us), 1 already applied (eu), 1 failed (apac).'"""
    states = by_state(outcomes)
    words = dict(STATES)
    shown = [f"{counted(len(states['applied']))} applied" + _names(states["applied"])]
    for key, names in states.items():
        if key != "applied" and names:
            shown.append(f"{counted(len(names))} {words[key]}" + _names(names))
    return f"{plural(len(outcomes), 'account')}: {', '.join(shown)}."


def _names(names: list[str]) -> str:
    return f" ({', '.join(names)})" if names else ""
