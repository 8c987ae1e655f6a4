"""The account's history as export writes it: the paylists the account already has, known.

After an export the first payrun reads the money of its window, and the company's own
paylists of that window would be untraced money: export lists them (`history.paylists`, by id
with their totals and a reason), so they are known history. Each is named by its id: a later
paylist, or one whose total is not the one written, is untraced again.
"""

from __future__ import annotations

from reconciler.export.yamltext import quoted
from reconciler.plan.money import LiveMoney, money_report

#: The service's limit for a text (the schema's `text`), which a reason must keep to.
_REASON_LIMIT = 255
_REASON = "paid before export"


def history_lines(money: LiveMoney | None) -> list[str]:
    """The `history:` lines for the paylists the money window holds (none: no lines)."""
    if money is None:
        return []
    totals = {paylist.paylist_id: paylist.total for paylist in money.paylists}
    found = money_report(money, ()).untraced
    if not found:
        return []
    lines = [
        "history:",
        "  # The paylists the account paid before this export: known, never untraced money.",
        "  paylists:",
    ]
    for item in sorted(found, key=lambda item: item.paylist_id):
        description = " ".join(item.description.split())
        reason = f"{_REASON}: {description}" if description else _REASON
        if len(reason) > _REASON_LIMIT:
            reason = reason[: _REASON_LIMIT - 3].rstrip() + "..."
        total = totals[item.paylist_id]
        lines.append(
            f"    - {{id: {item.paylist_id}, total: {quoted(f'{total:.2f}')}, "
            f"reason: {quoted(reason)}}}"
        )
    return lines
