"""PromQL the rules, the alerts and the dashboards share: what a counter counted over a window, series born
inside the window included (the form, and why it is right: the comment above `counted` in mixin/rules.py)."""

from __future__ import annotations

# A series with a sample in this span before a window existed when the window began; one without is new in it.
# Longer than the gaps a live sidecar's series may show in Prometheus (failed scrapes, a Prometheus restart).
BEFORE_WINDOW = "1h"


def counted(selector: str, window: str) -> str:
    """What counter `selector` counted over `window`, per series: increase() for a series that existed before the
    window, its whole value for one born inside it. Sum it before dividing."""
    before = f"present_over_time({selector}[{BEFORE_WINDOW}] offset {window})"
    return (f"(increase({selector}[{window}]) and {before})"
            f" or (last_over_time({selector}[{window}]) unless {before})")
