"""Every body GitHub receives, within GitHub's limits: `fit_body` is the one place that cuts.

GitHub answers 422 to a comment or issue body over 65,536 characters, and drops a job summary
over 1 MiB. A body over its limit is cut at a line boundary, the code fences and `<details>`
it leaves open are closed, and a note says how much was left out and where the whole is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reconciler.plan.model import Plan
from reconciler.render.markdown import MarkdownRenderer
from reconciler.render.marker import Marker
from reconciler.words import plural

#: GitHub refuses a comment or issue body longer than this many characters.
GITHUB_BODY_LIMIT = 65_536
#: GitHub drops a step's job summary larger than this many bytes.
JOB_SUMMARY_LIMIT = 1024 * 1024

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_OPEN = re.compile(r"<details[\s>]")
_CLOSE = re.compile(r"</details>")


def characters(text: str) -> int:
    return len(text)


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def fit_body(
    text: str,
    limit: int = GITHUB_BODY_LIMIT,
    *,
    measure: Callable[[str], int] = characters,
    whole: str = "The whole text is in this run's job summary and log.",
) -> str:
    """`text` if it fits `limit` (as `measure` counts), else its first lines, what they left
    open closed, and a note saying what was left out; `whole` says where the rest is."""
    if measure(text) <= limit:
        return text
    lines = text.split("\n")
    size_of = [measure(line) + 1 for line in lines]
    unit = "bytes" if measure is utf8_bytes else "characters"
    budget = limit - measure(_note(len(lines), measure(text), unit, whole)) - 200  # to close
    kept: list[str] = []
    used = 0
    fence: str | None = None
    details = 0
    for line, size in zip(lines, size_of, strict=True):
        if used + size > budget:
            break
        kept.append(line)
        used += size
        fence, details = _track(line, fence, details)
    closing = ([fence] if fence else []) + ["", "</details>"] * details
    left = len(lines) - len(kept)
    note = _note(left, measure(text) - used, unit, whole)
    return "\n".join([*kept, *closing, "", note]) + "\n"


def _track(line: str, fence: str | None, details: int) -> tuple[str | None, int]:
    """The open fence (its opening run) and the count of open `<details>` after `line`."""
    match = _FENCE.match(line)
    if fence is not None:
        if match is None or match[1][0] != fence[0] or len(match[1]) < len(fence):
            return fence, details
        closes = not line.strip()[len(match[1]) :]  # a closing fence has nothing after it
        return (None if closes else fence), details
    if match is not None:
        return match[1], details
    details += len(_OPEN.findall(line)) - len(_CLOSE.findall(line))
    return None, max(details, 0)


def _note(lines: int, size: int, unit: str, whole: str) -> str:
    return (
        f"_This text was cut to fit GitHub's limit: {plural(lines, 'line')} "
        f"({size:,} {unit}) left out. {whole}_"
    )


def plan_comment(
    plan: Plan, marker: Marker, *, show_unmanaged: bool = False, commit: str | None = None
) -> str:
    """The same bytes for the same plan, so an unchanged plan leaves its comment alone;
    `commit`: the pull request's commit that was planned, named under the heading."""
    text = MarkdownRenderer(show_unmanaged=show_unmanaged).render(plan)
    if commit is not None:
        heading, _, rest = text.partition("\n")
        text = f"{heading}\n\nPlanned at commit `{commit}`.\n{rest}"
    return fit_body(marker.stamp(text))
