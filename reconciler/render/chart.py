"""A Mermaid bar chart of money by month, paid and failed, for Markdown read on a forge.

`xychart-beta` is the chart's name in every forge's Mermaid, the oldest being 10.7 (the name
`xychart` alone is Mermaid 11's). It has no legend and draws a chart's bars over one another, not
side by side nor stacked: each month's settled money (paid and failed) is drawn first, red, and
its paid part over it, green, so what shows above the green is what failed, and a line under the
chart says so. At most `CHART_MONTHS` months (the last ones): a year's labels fit side by side
in a chart 900 wide, two years' overlap, and the table beside it, which stands on its own where
the chart is not drawn, has the months. Labels are the months themselves (`2026-11`), amounts
plain two-place decimals, the axis from 0 (else Mermaid starts it near the smallest bar). Drawn
as this writes it by Mermaid 10.7.0 and 11.17.2 in Chromium, alike.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal

from reconciler.money import two_places
from reconciler.words import counted

CHART_MONTHS = 12
#: The series' colours, in the order they are drawn: settled (its visible top: failed), paid.
#: A chart wide enough for a year's labels (`2026-01`) side by side; the page scales it to fit.
_INIT = (
    '%%{init: {"xyChart": {"width": 900}, '
    '"themeVariables": {"xyChart": {"plotColorPalette": "#cf222e, #1a7f37"}}}}%%'
)


def months_chart(months: Sequence[tuple[str, Decimal, Decimal]]) -> Iterator[str]:
    """The chart of `(month, paid, failed)`, oldest first (the last `CHART_MONTHS`), and a line
    saying how to read it."""
    shown = list(months)[-CHART_MONTHS:]
    labels = ", ".join(f'"{month}"' for month, _, _ in shown)
    yield "```mermaid"
    yield _INIT
    yield "xychart-beta"
    yield '    title "Paid and failed by month"'
    yield f"    x-axis [{labels}]"
    # From 0, or Mermaid starts the axis near the smallest bar, and a month paid little looks
    # like nothing.
    top = max((paid + failed for _, paid, failed in shown), default=Decimal(0))
    yield f'    y-axis "Amount" 0 --> {two_places(top) if top > 0 else "1"}'
    yield f"    bar [{', '.join(two_places(paid + failed) for _, paid, failed in shown)}]"
    yield f"    bar [{', '.join(two_places(paid) for _, paid, _ in shown)}]"
    yield "```"
    yield ""
    last = f"the last {counted(len(shown))} of {counted(len(months))} months; "
    yield (
        f"_Each month's bar: paid (green) and, above it, failed (red); "
        f"{last if len(months) > len(shown) else ''}pending money is in the table only._"
    )
