"""The hallucination-rate estimators, proved by simulation against a known truth.

Forty seeded runs of mixed traffic go through a running sidecar, each as its own app, judged by
the fake OpenAI-compatible judge through the real openai client. The judge grades by rule
(HALLUCINATE in the answer), so the true share of hallucinated answers of every run is known.
Hallucinated answers are flagged by the local scorers more often than grounded ones (as in
production), so a sample that lets flags in or out would be biased; the routine and the
stratified estimates must not be.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from helpers.events import ndjson, trace
from helpers.fake_openai import FakeOpenAI
from helpers.metrics import Samples
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until

from ragpulse.judging.estimators import HallucinationRates, hallucination_rates

pytestmark = pytest.mark.beside  # run in scripts/test's second pytest (pyproject.toml)

RUNS = 40
TRACES_PER_RUN = 1_000
CHUNKS = [{"id": "kb-1", "text": "Returns are accepted within 30 days of delivery for unused items in their original packaging."}]
# (answer, hallucinated): the local scorers flag the second and third kinds of each (low support, a number).
GROUNDED = ["Returns are accepted within 30 days of delivery.", "Sure thing, send it back inside a month."]
HALLUCINATED = ["HALLUCINATE Refunds arrive instantly by drone anywhere worldwide.",
                "Returns are accepted within 90 days of delivery. HALLUCINATE",
                "Returns are accepted within 30 days of delivery for unused items HALLUCINATE."]
REFUSAL = "I'm sorry, I couldn't find any information about that."


def run_traffic(run: int) -> tuple[list[dict[str, object]], float]:
    """One run's traces and its true hallucination share (of the answers that are not fallbacks)."""
    rnd = random.Random(run)
    share = 0.08 + 0.17 * rnd.random()
    events, answers, bad = [], 0, 0
    for i in range(TRACES_PER_RUN):
        trace_id = f"{rnd.getrandbits(64):016x}"
        if rnd.random() < 0.05:
            answer = REFUSAL
        elif rnd.random() < share:
            # 70% of hallucinations look unsupported or carry a wrong number; 30% copy the chunk's words.
            answer = HALLUCINATED[0 if rnd.random() < 0.4 else 1] if rnd.random() < 0.7 else HALLUCINATED[2]
            answers, bad = answers + 1, bad + 1
        else:
            answer = GROUNDED[1] if rnd.random() < 0.1 else GROUNDED[0]
            answers += 1
        events.append(trace(trace_id, app=f"run-{run:02d}", query=f"How do I return shoes, case {run}-{i}?",
                            chunks=CHUNKS, answer=answer))
    return events, bad / answers


def rates_of(s: Samples, app: str) -> HallucinationRates:
    return hallucination_rates((name, dict(labels), value) for (name, labels), value in s.items() if ("app", app) in labels)


def test_routine_and_stratified_intervals_cover_the_true_rate(fake: FakeOpenAI,
                                                              ragpulse_factory: Callable[..., RagpulseProcess]) -> None:
    rp = ragpulse_factory(
        "--set", f"judge.base_url={fake.base_url}", "--set", "judge.api_key=k", "--set", "judge.model=judge-model",
        "--set", "judge.sample_rate=0.15", "--set", "judge.priority_rates.scorer_flag=0.5",
        "--set", "judge.priority_rates.over_refusal=0.5", "--set", "judge.cache_entries=0",
        "--set", "judge.concurrency=16", "--set", "judge.queue_capacity=50000", "--set", "satisfaction.max_traces=1000",
        "--set", "judge.max_requests_per_minute=null", "--set", "judge.max_tokens_per_hour=null",
        "--set", "judge.max_tokens_per_day=null", "--set", "results.sqlite_path=null",
    )
    truths = {}
    for run in range(RUNS):
        events, truths[f"run-{run:02d}"] = run_traffic(run)
        assert rp.post("/v1/events", ndjson(events)).json()["accepted"] == TRACES_PER_RUN
    rp.wait_processed(traces=RUNS * TRACES_PER_RUN)
    wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == rp.metrics().total("ragpulse_judge_sampled_total")
               and rp.metrics().get_value("ragpulse_judge_queue_depth") == 0, timeout=240, what="every sampled trace judged")
    s = rp.metrics()
    assert s.total("ragpulse_judge_skipped_total") == 0  # the samples are exactly the designed ones
    assert s.total("ragpulse_judge_stratum_offered_total", fallback="false", stratum="flagged") > 0
    routine_covered = stratified_covered = 0
    routine_errors, stratified_errors, routine_widths, stratified_widths = [], [], [], []
    for app, truth in truths.items():
        rates = rates_of(s, app)
        assert rates.routine is not None and rates.stratified is not None
        routine_covered += rates.routine.covers(truth)
        stratified_covered += rates.stratified.covers(truth)
        routine_errors.append(rates.routine.estimate - truth)
        stratified_errors.append(rates.stratified.estimate - truth)
        routine_widths.append(rates.routine.high - rates.routine.low)
        stratified_widths.append(rates.stratified.high - rates.stratified.low)
    summary = (f"routine covered {routine_covered}/{RUNS}, mean error {sum(routine_errors) / RUNS:+.4f}, "
               f"mean width {sum(routine_widths) / RUNS:.3f}; stratified covered {stratified_covered}/{RUNS}, "
               f"mean error {sum(stratified_errors) / RUNS:+.4f}, mean width {sum(stratified_widths) / RUNS:.3f}")
    print(summary)
    assert routine_covered >= 36 and stratified_covered >= 36, summary
    # The mean error of 40 runs has a standard error of about 0.005 (routine) and 0.004 (stratified).
    assert abs(sum(routine_errors) / RUNS) < 0.015 and abs(sum(stratified_errors) / RUNS) < 0.012, summary
    assert sum(stratified_widths) < sum(routine_widths), summary  # the same traffic, a narrower interval
