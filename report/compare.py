"""Before and after a release: each indicator's change with its interval, and whether it is significant as the
on-call drift rules judge a change (mixin/alerts.py): the one-sided two-proportion z above `z`, a change of at
least `min_effect`, and enough counts on both sides. The thresholds' defaults are the mixin's
(tests/test_report.py holds them equal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragpulse.judging import newcombe_difference, two_proportion_z
from ragpulse.report.store import Share

# Which way is worse: a rise of these is a regression, a fall of these one.
RISING_IS_WORSE = {"hallucination": True, "fallback": True, "citation_precision": False, "context_utilisation": None}


@dataclass(frozen=True, slots=True)
class DriftRule:
    z: float = 3.09  # Settings.drift_z
    min_effect: float = 0.05  # Settings.drift_min_effect
    min_after: int = 30  # Settings.drift_min_recent
    min_before: int = 100  # Settings.drift_min_baseline


def change(indicator: str, before: Share, after: Share, rule: DriftRule) -> dict[str, Any]:
    """The change from `before` to `after`: its estimate and interval, z, and a verdict: worse, better, changed
    (significant, neither better nor worse), unchanged, or too_few (a side under its minimum count)."""
    difference = newcombe_difference(after.successes, after.n, before.successes, before.n)
    z = two_proportion_z(after.successes, after.n, before.successes, before.n)
    if after.n < rule.min_after or before.n < rule.min_before or difference is None:
        verdict = "too_few"
    elif z is None or abs(z) <= rule.z or abs(difference.estimate) < rule.min_effect:
        verdict = "unchanged"
    else:
        worse = RISING_IS_WORSE[indicator]
        verdict = "changed" if worse is None else "worse" if (z > 0) == worse else "better"
    return {"indicator": indicator, "before": before.as_dict(), "after": after.as_dict(), "z": z, "verdict": verdict,
            "change": None if difference is None else difference.estimate,
            "change_low": None if difference is None else difference.low,
            "change_high": None if difference is None else difference.high}


def compare_releases(by_release: dict[str, dict[str, Share]], order: list[str], rule: DriftRule,
                     before: str | None = None, after: str | None = None) -> dict[str, Any] | None:
    """`after` (default: the period's newest release) against `before` (default: the one before it); None when
    the period has fewer than two releases."""
    if after is None:
        after = order[-1] if len(order) >= 2 else None
    if before is None and after in order:
        position = order.index(after)
        before = order[position - 1] if position > 0 else None
    if before is None or after is None or before not in by_release or after not in by_release:
        return None
    return {"before": before, "after": after,
            "indicators": [change(name, by_release[before][name], by_release[after][name], rule)
                           for name in RISING_IS_WORSE]}
