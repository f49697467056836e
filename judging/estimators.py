"""The estimators behind ragpulse's rates, in plain Python (docs/statistics.md has the formulas).

The same maths runs in PromQL (mixin/rules.py) over the exported counters; this module serves the
terminal (`ragpulse calibration`, the demo summary), the calibration API and the simulation tests
that prove the estimators against a known truth.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragpulse.judging.verdicts import JUDGED_VERDICTS

Z95 = 1.959964


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    low: float
    high: float

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


def wilson(successes: float, n: float, z: float = Z95) -> Interval | None:
    """The Wilson score interval of successes/n; None when nothing was judged (no data is not zero)."""
    if n <= 0:
        return None
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def two_proportion_z(s1: float, n1: float, s0: float, n0: float) -> float | None:
    """The drift rules' one-sided test of a recent share s1/n1 against a baseline s0/n0 (mixin/alerts.py):
    z = (p1 − p0) / sqrt(p(1−p)(1/n1 + 1/n0)) with the pooled p; None when either side has no count or the
    pooled share is 0 or 1 (no variance: the rule's series is absent there too)."""
    if n1 <= 0 or n0 <= 0:
        return None
    pooled = (s1 + s0) / (n1 + n0)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n0)
    if variance <= 0:
        return None
    return (s1 / n1 - s0 / n0) / math.sqrt(variance)


def newcombe_difference(s1: float, n1: float, s0: float, n0: float, z: float = Z95) -> Interval | None:
    """p1 − p0 with Newcombe's hybrid score interval (his method 10): each side's Wilson bounds combined,
    d − sqrt((p1 − l1)² + (u0 − p0)²) to d + sqrt((u1 − p1)² + (p0 − l0)²). Unlike the plain Wald
    difference it keeps its coverage near 0 and 1. None when either side has no count."""
    after, before = wilson(s1, n1, z), wilson(s0, n0, z)
    if after is None or before is None:
        return None
    difference = after.estimate - before.estimate
    return Interval(difference,
                    difference - math.sqrt((after.estimate - after.low) ** 2 + (before.high - before.estimate) ** 2),
                    difference + math.sqrt((after.high - after.estimate) ** 2 + (before.estimate - before.low) ** 2))


@dataclass(frozen=True, slots=True)
class Stratum:
    offered: float  # N_s: traces of the stratum in the traffic
    judged: float  # n_s: judged at random within it (routine and its class's draws)
    positives: float  # of those, found hallucinated


def stratified(strata: Sequence[Stratum], z: float = Z95) -> Interval | None:
    """Σ w_s·p̂_s with w_s = N_s/ΣN, over the strata that have judgments, and a normal interval with
    variance Σ w_s²·p̃_s(1−p̃_s)/(n_s + z²). p̃_s = (s + z²/2)/(n_s + z²) is the Agresti–Coull
    adjustment: with p̂_s at 0 or 1 (a stratum of nothing but hallucinations, say) the plain
    p̂_s(1−p̂_s)/n_s is 0 and the interval would claim a certainty the sample does not have.
    No finite-population correction: slightly conservative. None when no stratum has a judgment."""
    covered = [s for s in strata if s.judged > 0 and s.offered > 0]
    total = sum(s.offered for s in covered)
    if not covered or total <= 0:
        return None
    z2 = z * z
    estimate = variance = 0.0
    for s in covered:
        weight = s.offered / total
        estimate += weight * s.positives / s.judged
        adjusted = (s.positives + z2 / 2) / (s.judged + z2)
        variance += weight * weight * adjusted * (1 - adjusted) / (s.judged + z2)
    half = z * math.sqrt(variance)
    return Interval(estimate, max(0.0, estimate - half), min(1.0, estimate + half))


@dataclass(frozen=True, slots=True)
class Confusion:
    """Judge vs human on the same traces: a both say hallucinated, b judge only, c human only, d neither."""

    a: int = 0
    b: int = 0
    c: int = 0
    d: int = 0

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.a + other.a, self.b + other.b, self.c + other.c, self.d + other.d)

    @property
    def total(self) -> int:
        return self.a + self.b + self.c + self.d

    @property
    def agreement(self) -> float | None:
        return (self.a + self.d) / self.total if self.total else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa; None when undefined (no reviews, or chance agreement is already 1)."""
        n = self.total
        if not n:
            return None
        a, b, c, d = self.a, self.b, self.c, self.d
        chance = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
        if chance >= 1:
            return None
        return ((a + d) / n - chance) / (1 - chance)

    @property
    def sensitivity(self) -> float | None:
        """Of the answers humans call hallucinated, the share the judge caught."""
        return self.a / (self.a + self.c) if self.a + self.c else None

    @property
    def specificity(self) -> float | None:
        """Of the answers humans call grounded, the share the judge also calls grounded."""
        return self.d / (self.b + self.d) if self.b + self.d else None


@dataclass(frozen=True, slots=True)
class Corrected:
    """The Rogan–Gladen estimate, or why there is none (`reason`, with estimate None)."""

    estimate: float | None
    low: float | None = None
    high: float | None = None
    reason: str | None = None


def rogan_gladen(observed: float, n: float, confusion: Confusion, *, min_per_class: int = 20,
                 z: float = Z95) -> Corrected:
    """The hallucination rate corrected for the judge's measured errors: π̂ = (p̂ + Sp − 1)/(Se + Sp − 1),
    clipped to [0, 1], with a delta-method interval that carries the uncertainty of p̂, Se and Sp.

    `observed` is the judge's rate p̂ on the routine sample of n judgments. Refuses (a reason, no
    number) with fewer than `min_per_class` human-hallucinated or human-grounded reviews, or when the
    judge is no better than chance (Se + Sp ≤ 1)."""
    positives, negatives = confusion.a + confusion.c, confusion.b + confusion.d
    if positives < min_per_class or negatives < min_per_class:
        return Corrected(None, reason=f"too few reviews: {positives} human-hallucinated and {negatives} human-grounded, "
                                      f"at least {min_per_class} of each are needed")
    if n <= 0:
        return Corrected(None, reason="no routine judgments to correct")
    se, sp = confusion.sensitivity, confusion.specificity
    assert se is not None and sp is not None  # both classes have reviews
    youden = se + sp - 1
    if youden <= 0:
        return Corrected(None, reason=f"the judge is no better than chance (sensitivity {se:.2f} + specificity {sp:.2f} <= 1)")
    estimate = min(1.0, max(0.0, (observed + sp - 1) / youden))
    variance = (observed * (1 - observed) / n + estimate**2 * se * (1 - se) / positives
                + (1 - estimate) ** 2 * sp * (1 - sp) / negatives) / youden**2
    half = z * math.sqrt(variance)
    return Corrected(estimate, max(0.0, estimate - half), min(1.0, estimate + half))


@dataclass(frozen=True, slots=True)
class HallucinationRates:
    """The two estimates of the share of hallucinated answers, from one replica's counters."""

    routine_judged: float
    routine: Interval | None
    stratified_judged: float
    stratified: Interval | None


def hallucination_rates(samples: Iterable[tuple[str, Mapping[str, str], float]]) -> HallucinationRates:
    """From exposition samples (name, labels, value): the routine sample's rate with its Wilson
    interval, and the stratified estimate over every judged answer of the routine and stratum draws."""
    routine = {verdict: 0.0 for verdict in JUDGED_VERDICTS}
    offered: dict[str, float] = {}
    judged: dict[str, dict[str, float]] = {}
    for name, labels, value in samples:
        if name == "ragpulse_judgments_total" and labels.get("metric") == "groundedness" \
                and labels.get("sample") == "routine" and labels.get("verdict") in routine:
            routine[labels["verdict"]] += value
        elif name == "ragpulse_judge_stratum_offered_total" and labels.get("fallback") == "false":
            offered[labels["stratum"]] = offered.get(labels["stratum"], 0.0) + value
        elif name == "ragpulse_judge_stratum_judgments_total" and labels.get("fallback") == "false":
            tally = judged.setdefault(labels["stratum"], {})
            tally[labels["verdict"]] = tally.get(labels["verdict"], 0.0) + value
    strata = [Stratum(offered.get(s, 0.0), sum(t.get(v, 0.0) for v in JUDGED_VERDICTS), t.get("hallucination", 0.0))
              for s, t in judged.items()]
    n = sum(routine.values())
    return HallucinationRates(n, wilson(routine["hallucination"], n), sum(s.judged for s in strata), stratified(strata))
