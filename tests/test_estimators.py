"""The estimators against hand-computed values (docs/statistics.md), edge cases included, and
their interval coverage by simulation against a known truth."""

from __future__ import annotations

import math
import random

import pytest

from ragpulse.collector.sampling import draw
from ragpulse.judging.estimators import Confusion, Stratum, rogan_gladen, stratified, wilson


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_wilson_interval() -> None:
    # p = 0.15, n = 200: centre (0.15 + z²/400) / (1 + z²/200), half-width z·√(p(1-p)/200 + z²/160000) / (1 + z²/200)
    interval = wilson(30, 200)
    assert interval is not None
    assert (interval.estimate, round(interval.low, 6), round(interval.high, 6)) == (0.15, 0.107136, 0.206056)
    zero = wilson(0, 10)  # no hallucination seen is not a certainty of none
    assert zero is not None and zero.low == 0.0 and round(zero.high, 4) == 0.2775
    everything = wilson(10, 10)
    assert everything is not None and everything.high == pytest.approx(1.0) and round(everything.low, 4) == 0.7225
    assert wilson(0, 0) is None  # no data is not zero


def test_stratified_estimate() -> None:
    # flagged: 35 of 50 judged, 100 in the traffic; none: 9 of 150 judged, 900 in the traffic.
    interval = stratified([Stratum(100, 50, 35), Stratum(900, 150, 9)])
    assert interval is not None
    assert round(interval.estimate, 10) == 0.1 * 0.7 + 0.9 * 0.06
    z2 = 1.959964**2
    adjusted = [(35 + z2 / 2) / (50 + z2), (9 + z2 / 2) / (150 + z2)]
    variance = 0.1**2 * adjusted[0] * (1 - adjusted[0]) / (50 + z2) + 0.9**2 * adjusted[1] * (1 - adjusted[1]) / (150 + z2)
    assert interval.high - interval.estimate == pytest.approx(1.959964 * math.sqrt(variance))
    # A stratum without judgments drops out of the weights; a stratum of only hallucinations still has a width.
    lone = stratified([Stratum(500, 0, 0), Stratum(100, 20, 20)])
    assert lone is not None and lone.estimate == 1.0 and lone.low < 0.95
    assert stratified([Stratum(100, 0, 0)]) is None and stratified([]) is None


def test_agreement_kappa_sensitivity_specificity() -> None:
    judge = Confusion(a=8, b=2, c=4, d=36)
    # p_o = 44/50; p_e = (10·12 + 40·38)/2500 = 0.656; kappa = (0.88 − 0.656)/0.344
    assert judge.agreement == 0.88
    assert judge.kappa == pytest.approx(0.224 / 0.344)
    assert (judge.sensitivity, judge.specificity) == (8 / 12, 36 / 38)
    perfect = Confusion(a=10, b=0, c=0, d=40)
    assert (perfect.agreement, perfect.kappa, perfect.sensitivity, perfect.specificity) == (1.0, 1.0, 1.0, 1.0)
    inverted = Confusion(a=0, b=40, c=10, d=0)  # worse than chance: always wrong
    assert inverted.agreement == 0.0 and inverted.kappa is not None and inverted.kappa < 0
    no_positives = Confusion(a=0, b=3, c=0, d=47)  # humans found no hallucination
    assert no_positives.sensitivity is None and no_positives.specificity == 47 / 50
    all_grounded = Confusion(d=30)  # both always say grounded: agreement 1, chance agreement 1, kappa undefined
    assert all_grounded.agreement == 1.0 and all_grounded.kappa is None
    assert Confusion().agreement is None and Confusion().kappa is None


def test_rogan_gladen_correction_and_its_interval() -> None:
    judge = Confusion(a=40, b=10, c=10, d=140)  # Se 0.8, Sp 140/150
    se, sp = 0.8, 140 / 150
    corrected = rogan_gladen(0.2, 1000, judge)
    assert corrected.reason is None and corrected.estimate is not None
    estimate = (0.2 + sp - 1) / (se + sp - 1)
    assert corrected.estimate == pytest.approx(estimate)
    variance = (0.2 * 0.8 / 1000 + estimate**2 * se * (1 - se) / 50 + (1 - estimate) ** 2 * sp * (1 - sp) / 150) / (se + sp - 1) ** 2
    assert corrected.high - corrected.estimate == pytest.approx(1.959964 * math.sqrt(variance))
    perfect = rogan_gladen(0.13, 500, Confusion(a=30, b=0, c=0, d=70))
    assert perfect.estimate == pytest.approx(0.13) and perfect.low == pytest.approx(0.13 - 1.959964 * math.sqrt(0.13 * 0.87 / 500))
    clipped = rogan_gladen(0.01, 500, judge)  # below the judge's false-positive rate: clipped to 0
    assert clipped.estimate == 0.0 and clipped.low == 0.0
    chance = rogan_gladen(0.2, 1000, Confusion(a=25, b=75, c=25, d=75))  # Se 0.5 + Sp 0.5 = 1
    assert chance.estimate is None and "no better than chance" in (chance.reason or "")
    few = rogan_gladen(0.2, 1000, Confusion(a=5, b=1, c=3, d=90))
    assert few.estimate is None and few.reason == ("too few reviews: 8 human-hallucinated and 91 human-grounded, "
                                                   "at least 20 of each are needed")
    assert rogan_gladen(0.2, 0, judge).reason == "no routine judgments to correct"


def test_intervals_cover_the_truth_in_95_percent_of_simulated_runs() -> None:
    """1,000 populations with a known share; the routine draw and the flag class's draw as the sampler makes them."""
    rnd = random.Random(7)
    runs, routine_covered, stratified_covered = 1_000, 0, 0
    routine_error = stratified_error = 0.0
    for run in range(runs):
        population = []
        for i in range(1_000):
            bad = rnd.random() < 0.15
            population.append((f"{run}-{i}", bad, rnd.random() < (0.7 if bad else 0.1)))  # flags follow hallucinations
        truth = sum(bad for _, bad, _ in population) / len(population)
        routine = [0, 0]
        strata = {True: [0, 0, 0], False: [0, 0, 0]}
        for trace_id, bad, flagged in population:
            stratum = strata[flagged]
            stratum[0] += 1
            if draw(trace_id, "routine") < 0.1:
                routine[0] += 1
                routine[1] += bad
                stratum[1] += 1
                stratum[2] += bad
            elif flagged and draw(trace_id, "scorer_flag") < 0.5:
                stratum[1] += 1
                stratum[2] += bad
        plain, weighted = wilson(routine[1], routine[0]), stratified([Stratum(*s) for s in strata.values()])
        assert plain is not None and weighted is not None
        routine_covered += plain.covers(truth)
        stratified_covered += weighted.covers(truth)
        routine_error += plain.estimate - truth
        stratified_error += weighted.estimate - truth
    assert 0.93 <= routine_covered / runs <= 0.975
    assert 0.93 <= stratified_covered / runs <= 0.985
    assert abs(routine_error / runs) < 0.003 and abs(stratified_error / runs) < 0.002
