"""A desired-state file's problems as `validate` prints them: file:line:col lines, a JSON list,
or GitHub workflow annotations, the first few listed and the rest counted.

Both `validate PATH` and `validate --all` (each account's files) print them, so they live
beside the problems (`reconciler.desired.problems`), not in the command line.
"""

from __future__ import annotations

import json

from reconciler.annotations import workflow_command
from reconciler.desired import DesiredState, InvalidDesiredState, Problem
from reconciler.desired.ignore import IgnoreRules
from reconciler.desired.problems import KEPT, SHOWN

#: How many problems each format lists (the rest are counted): a person reads the first few,
#: a program gets more, and GitHub shows only a handful of annotations per step anyway.
LISTED = {"text": SHOWN, "json": KEPT, "github": 50}


def render_problems(error: InvalidDesiredState, output_format: str) -> str:
    problems = error.problems[: LISTED[output_format]]
    if output_format == "json":
        rows = [
            {
                "file": problem.location.file,
                "line": problem.location.line,
                "column": problem.location.column,
                "message": problem.message,
            }
            for problem in problems
        ]
        return json.dumps(rows, indent=2)
    if output_format == "github":
        return "\n".join(_annotation(problem) for problem in problems)
    lines = [str(problem) for problem in problems]
    lines.append(error.count_line(LISTED["text"]))
    return "\n".join(lines)


def _annotation(problem: Problem) -> str:
    """A GitHub workflow command, at the problem's place."""
    location = problem.location
    return workflow_command(
        "error", problem.message, file=location.file, line=location.line, col=location.column
    )


def expired_rules(state: DesiredState, output_format: str, *, account: str | None = None) -> str:
    """The ignore rules past their day, and those that hide too much (`risk_lines`), as
    `validate` reports them (they fail nothing: a plan still runs, and an expired rule's drift
    is shown again): GitHub warning annotations, or `Warning:` lines for stderr; "" when
    there is none."""
    named = f"account {account}: " if account is not None else ""
    rules = IgnoreRules(state.ignore)
    found = (*(rule.expired_line() for rule in rules.expired()), *rules.risk_lines())
    lines = [named + line for line in found]
    if output_format == "github":  # a rule's reason and owner are the file's text: escaped
        return "\n".join(workflow_command("warning", line) for line in lines)
    return "\n".join(f"Warning: {line}" for line in lines)
