"""promtool unit tests of every alert in mixin/ragpulse.rules.yaml: each fires when it should and stays
quiet on noise, on too few samples and on a change smaller than the minimum effect.

Firing is read from the ALERTS series that Prometheus' rule evaluation writes, so `for:` durations
count; one alert is also checked with its rendered annotations. Scenarios are built here as data and
run through the real promtool."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragpulse.judging.estimators import Stratum, stratified
from ragpulse.mixin import alerts as mixin_alerts
from ragpulse.mixin.rules import DEFAULTS, RULES_FILE, render, rules
from ragpulse.mixin.settings import Settings

LABELS = 'route="r",model="m",release="1"'


def counter(name: str, labels: str, values: str) -> dict[str, str]:
    return {"series": f"{name}{{{labels}}}", "values": values}


def per_minute(rate: float, minutes: int, start: float = 0.0) -> str:
    """A counter growing by `rate` a step for `minutes` steps (integers stay exact in the notation)."""
    return f"{start:g}+{rate:g}x{minutes}"


def firing(alert: str, eval_time: str, *label_sets: dict[str, str], settings: Settings = DEFAULTS) -> dict[str, Any]:
    severity = next(a.severity for a in mixin_alerts.alerts(settings) if a.name == alert)
    samples = []
    for labels in label_sets:
        all_labels = {"alertname": alert, "alertstate": "firing", "severity": severity, **labels}
        rendered = ",".join(f'{k}="{v}"' for k, v in sorted(all_labels.items()))
        samples.append({"labels": f"ALERTS{{{rendered}}}", "value": 1})
    return {"expr": f'ALERTS{{alertname="{alert}",alertstate="firing"}}', "eval_time": eval_time, "exp_samples": samples}


def run_promtool(tmp_path: Path, tests: list[dict[str, Any]], evaluation_interval: str = "1m",
                 settings: Settings = DEFAULTS) -> None:
    binary = shutil.which("promtool")
    assert binary, "promtool is missing: scripts/test installs it (scripts/tools.sh)"
    path = tmp_path / "alerts.test.yaml"
    rules_file = RULES_FILE
    if settings != DEFAULTS:  # the shipped file is the defaults' (tests/test_mixin.py holds it to them)
        rules_file = tmp_path / "ragpulse.rules.yaml"
        rules_file.write_text(render(settings))
    # Groups in the file's order, each after those it reads, as Prometheus sees them (at most one interval apart).
    order = [group["name"] for group in rules(settings)["groups"]]
    path.write_text(yaml.safe_dump({"rule_files": [str(rules_file)], "evaluation_interval": evaluation_interval,
                                    "group_eval_order": order, "tests": tests}, sort_keys=False))
    result = subprocess.run([binary, "test", "rules", str(path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def strata(app: str, offered: str, hallucinated: str, grounded: str) -> list[dict[str, str]]:
    labels = f'app="{app}",{LABELS},fallback="false",stratum="none"'
    return [counter("ragpulse_judge_stratum_offered_total", labels, offered),
            counter("ragpulse_judge_stratum_judgments_total", labels + ',judge="llm",verdict="hallucination"', hallucinated),
            counter("ragpulse_judge_stratum_judgments_total", labels + ',judge="llm",verdict="grounded"', grounded)]


def test_the_hallucination_red_line_pages_on_the_interval_not_the_point_estimate(tmp_path: Path) -> None:
    series = [
        # 2 judgments a minute, 30% hallucinated: 120 an hour, lower bound 22%.
        *strata("bad", per_minute(10, 130), per_minute(0.6, 130), per_minute(1.4, 130)),
        # 20% over 60 judgments an hour: above 15%, but the lower bound (11.8%) is not.
        *strata("noisy", per_minute(10, 130), per_minute(0.2, 130), per_minute(0.8, 130)),
        # 50%, but 30 judgments an hour: under judge min_judgments (50).
        *strata("few", per_minute(10, 130), per_minute(0.25, 130), per_minute(0.25, 130)),
    ]
    estimate = stratified([Stratum(600, 120, 36)])
    assert estimate is not None
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [firing("RagpulseHallucinationRateHigh", "120m", {"app": "bad"})],
        "alert_rule_test": [{"alertname": "RagpulseHallucinationRateHigh", "eval_time": "120m", "exp_alerts": [{
            "exp_labels": {"severity": "critical", "app": "bad"},
            "exp_annotations": {
                "summary": "The hallucination rate is above the red line, beyond sampling noise.",
                "description": f"bad: hallucination rate 30% over 1h, 95% interval [{100 * estimate.low:.4g}%, "
                               f"{100 * estimate.high:.4g}%], above 15%.",
                "runbook_url": "docs/runbook.md#ragpulsehallucinationratehigh"}}]}],
    }])


def local_strata(app: str, offered: str, hallucinated: str, grounded: str) -> list[dict[str, str]]:
    return [{**s, "series": s["series"].replace('judge="llm"', 'judge="local"')} for s in strata(app, offered, hallucinated, grounded)]


def test_the_red_line_trusts_an_llm_or_a_calibrated_judge_never_an_uncalibrated_local_one(tmp_path: Path) -> None:
    """The page test's 30% at 120 judgments an hour from the LLM judge and from the local judge: the LLM judge's
    pages; the local judge's does not while its human reviews are under calibration.min_reviews, and does once
    they reach it, on its rate corrected for its errors (Rogan–Gladen with the reviews' sensitivity 0.75 and
    specificity 0.9: (0.3 + 0.9 - 1) / 0.65 = 30.77%)."""
    reviews = 'judge="local",judge_model="claims",prompt_version="v",answer_length="short",self_judging="false"'

    def cells(judge: str, human: str, per_minute_count: float) -> dict[str, str]:
        return counter("ragpulse_calibration_reviews_total", reviews + f',judge_verdict="{judge}",human_verdict="{human}"',
                       per_minute(per_minute_count, 170))

    series = [
        *strata("llm", per_minute(10, 170), per_minute(0.6, 170), per_minute(1.4, 170)),
        *local_strata("local", per_minute(10, 170), per_minute(0.6, 170), per_minute(1.4, 170)),
        {"series": "ragpulse_calibration_min_reviews", "values": "560+0x170"},
        # Four reviews a minute: calibrated from minute 140. Of 2 a minute the humans called hallucinated the judge
        # caught 1.5 (sensitivity 0.75); of 2 they called grounded it flagged 0.2 (specificity 0.9).
        cells("hallucination", "hallucination", 1.5), cells("grounded", "hallucination", 0.5),
        cells("grounded", "grounded", 1.8), cells("hallucination", "grounded", 0.2),
    ]
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [
            firing("RagpulseHallucinationRateHigh", "130m", {"app": "llm"}),
            {"expr": "judge:ragpulse_judge_calibrated", "eval_time": "130m", "exp_samples": [
                {"labels": 'judge:ragpulse_judge_calibrated{judge="llm"}', "value": 0},
                {"labels": 'judge:ragpulse_judge_calibrated{judge="local"}', "value": 0}]},
            {"expr": "judge:ragpulse_judge_calibrated", "eval_time": "145m", "exp_samples": [
                {"labels": 'judge:ragpulse_judge_calibrated{judge="llm"}', "value": 0},
                {"labels": 'judge:ragpulse_judge_calibrated{judge="local"}', "value": 1}]},
            {"expr": "judge:ragpulse_judge_trusted", "eval_time": "130m", "exp_samples": [
                {"labels": 'judge:ragpulse_judge_trusted{judge="llm"}', "value": 1}]},
            {"expr": "round(judge:ragpulse_calibration_youden:ratio30d, 0.0001)", "eval_time": "145m", "exp_samples": [
                {"labels": '{judge="local"}', "value": 0.65}]},
            # The LLM judge's rate as observed (no calibration behind it), the local judge's corrected.
            {"expr": "round(app:ragpulse_hallucination_trusted_stratified:ratio1h, 0.0001)", "eval_time": "165m",
             "exp_samples": [{"labels": '{app="llm"}', "value": 0.3}, {"labels": '{app="local"}', "value": 0.3077}]},
            firing("RagpulseHallucinationRateHigh", "165m", {"app": "llm"}, {"app": "local"}),
        ],
    }])


def test_a_calibrated_judge_no_better_than_chance_is_not_trusted(tmp_path: Path) -> None:
    """Enough reviews, but the judge flags as often whatever the humans say (Se + Sp - 1 = 0): no correction
    exists, so its judgments never reach the red line."""
    reviews = 'judge="local",judge_model="claims",prompt_version="v",answer_length="short",self_judging="false"'
    series = [
        *local_strata("local", per_minute(10, 130), per_minute(0.6, 130), per_minute(1.4, 130)),
        {"series": "ragpulse_calibration_min_reviews", "values": "20+0x130"},
        *(counter("ragpulse_calibration_reviews_total", reviews + f',judge_verdict="{j}",human_verdict="{h}"', per_minute(1, 130))
          for j in ("hallucination", "grounded") for h in ("hallucination", "grounded")),
    ]
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [
            {"expr": "judge:ragpulse_judge_calibrated", "eval_time": "125m", "exp_samples": [
                {"labels": 'judge:ragpulse_judge_calibrated{judge="local"}', "value": 1}]},
            {"expr": "judge:ragpulse_judge_trusted", "eval_time": "125m", "exp_samples": []},
            {"expr": 'ALERTS{alertname="RagpulseHallucinationRateHigh"}', "eval_time": "125m", "exp_samples": []},
        ],
    }])


def routine(app: str, hallucinated: str, grounded: str) -> list[dict[str, str]]:
    labels = f'app="{app}",{LABELS},judge="llm",sample="routine",metric="groundedness"'
    return [counter("ragpulse_judgments_total", labels + ',verdict="hallucination"', hallucinated),
            counter("ragpulse_judgments_total", labels + ',verdict="grounded"', grounded)]


def test_fast_drift_pages_on_a_significant_rise_and_not_on_noise_or_a_small_one(tmp_path: Path) -> None:
    series = [
        # 10 judgments a minute: 10% for 100 minutes, then 40%.
        *routine("drift", "0+1x100 104+4x14", "0+9x100 906+6x14"),
        *routine("steady", per_minute(1, 115), per_minute(9, 115)),
        # 1,000 a minute: 10% -> 13% is highly significant, but under the 5-point minimum effect.
        *routine("small", "0+100x100 10130+130x14", "0+900x100 90870+870x14"),
        # 2 a minute: 10% -> 50% but 10 judgments in the recent window (under 30).
        *routine("thin", "0+0.2x100 21+1x14", "0+1.8x100 181+1x14"),
        # Fallbacks of 100 traces a minute: 8% for 100 minutes, then 30%; and a steady app.
        *traces("drift", per_minute(100, 115), "0+8x100 830+30x14"),
        *traces("steady", per_minute(100, 115), per_minute(8, 115)),
    ]
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [firing("RagpulseHallucinationDriftFast", "115m", {"app": "drift"}),
                             firing("RagpulseHallucinationDriftFast", "99m"),  # before the change: nothing
                             firing("RagpulseFallbackDriftFast", "115m", {"app": "drift"})],
    }])


def traces(app: str, total: str, fallbacks: str) -> list[dict[str, str]]:
    labels = f'app="{app}",{LABELS}'
    return [counter("ragpulse_traces_total", labels, total),
            counter("ragpulse_fallbacks_total", labels + ',rule="en_not_found"', fallbacks)]


@pytest.mark.beside  # a week of ten-minute steps in promtool: ~1 min of one core (pyproject.toml)
def test_the_fallback_band_and_the_slow_drift(tmp_path: Path) -> None:
    # Ten-minute steps over 7 days and 3 hours: 1,000 traces a step; "jump" goes from 8% to 20% for the last 2 hours.
    steps = 7 * 144 + 18
    series = [
        *traces("jump", per_minute(1000, steps), f"0+80x{steps - 12} {80 * (steps - 12) + 200:g}+200x11"),
        *traces("steady", per_minute(1000, steps), per_minute(80, steps)),
        *traces("quiet", per_minute(10, steps), per_minute(3, steps)),  # 30%, but 60 traces an hour (under 200)
        # The routine sample of "jump": 100 judgments a step, 10% hallucinated, then 30% for the last 2 hours.
        *routine("jump", f"0+10x{steps - 12} {10 * (steps - 12) + 30:g}+30x11", f"0+90x{steps - 12} {90 * (steps - 12) + 70:g}+70x11"),
        *routine("steady", per_minute(10, steps), per_minute(90, steps)),
        # "steady" (1,000 traces a step): rephrases 1% -> 10% for the last 2 hours; escalations a steady 1%.
        signal("steady", "rephrase", f"0+10x{steps - 12} {10 * (steps - 12) + 100:g}+100x11"),
        signal("steady", "escalation", per_minute(10, steps)),
    ]
    end = f"{steps * 10}m"
    run_promtool(tmp_path, [{
        "interval": "10m", "input_series": series,
        "promql_expr_test": [firing("RagpulseFallbackDriftSlow", end, {"app": "jump"}),
                             firing("RagpulseFallbackRateOutOfBand", end, {"app": "jump"}),
                             firing("RagpulseHallucinationDriftSlow", end, {"app": "jump"}),
                             firing("RagpulseRephraseDriftSlow", end, {"app": "steady"}),
                             firing("RagpulseEscalationDriftSlow", end)],
    }], evaluation_interval="10m")


def signal(app: str, name: str, values: str) -> dict[str, str]:
    return counter("ragpulse_satisfaction_signals_total", f'app="{app}",{LABELS},fallback="false",signal="{name}"', values)


def test_rephrase_and_escalation_drift_per_app(tmp_path: Path) -> None:
    series = [
        counter("ragpulse_traces_total", f'app="a",{LABELS}', per_minute(100, 115)),
        # 1 rephrase a minute (1%) for 100 minutes, then 10 (10%).
        signal("a", "rephrase", "0+1x100 110+10x14"),
        signal("a", "escalation", per_minute(1, 115)),  # steady 1%
    ]
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [firing("RagpulseRephraseDriftFast", "115m", {"app": "a"}),
                             firing("RagpulseEscalationDriftFast", "115m")],
    }])


def reviews(model: str, agree: int, disagree: int) -> list[dict[str, str]]:
    labels = f'judge="llm",judge_model="{model}",prompt_version="judgment.v2",answer_length="short",self_judging="false"'
    return [
        counter("ragpulse_calibration_reviews_total", labels + ',judge_verdict="grounded",human_verdict="grounded"',
                f"0+0x10 {agree}+0x170"),
        counter("ragpulse_calibration_reviews_total", labels + ',judge_verdict="grounded",human_verdict="hallucination"',
                f"0+0x10 {disagree}+0x170"),
    ]


def test_judge_agreement_below_its_line_with_enough_reviews(tmp_path: Path) -> None:
    series = [
        *reviews("weak", 18, 12),  # 60% of 30
        *reviews("good", 27, 3),  # 90%
        *reviews("unproven", 5, 5),  # 50% of 10: too few to say
        {"series": 'ragpulse_calibration_agreement_threshold_ratio{instance="a"}', "values": "0.8+0x180"},
        {"series": 'ragpulse_calibration_min_reviews{instance="a"}', "values": "20+0x180"},
    ]
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [firing("RagpulseJudgeAgreementLow", "180m",
                                    {"judge": "llm", "judge_model": "weak", "prompt_version": "judgment.v2"})],
    }], evaluation_interval="5m")


def test_pipeline_health_alerts(tmp_path: Path) -> None:
    a, b = 'instance="a"', 'instance="b"'
    series = [
        # Judge errors: a 20% of calls failing, b 5%.
        counter("ragpulse_judge_requests_total", a + ',judge_model="j",outcome="ok"', per_minute(8, 40)),
        counter("ragpulse_judge_requests_total", a + ',judge_model="j",outcome="RateLimitError"', per_minute(2, 40)),
        counter("ragpulse_judge_requests_total", b + ',judge_model="j",outcome="ok"', per_minute(19, 40)),
        counter("ragpulse_judge_requests_total", b + ',judge_model="j",outcome="APITimeoutError"', per_minute(1, 40)),
        # The breaker: open on a, closed on b.
        {"series": f"ragpulse_judge_circuit_state{{{a}}}", "values": "0+0x20 1+0x20"},
        {"series": f"ragpulse_judge_circuit_state{{{b}}}", "values": "0+0x40"},
        # Budget: a skips for the token budget, b does not.
        counter("ragpulse_judge_skipped_total", a + ',priority="base_rate",reason="budget_tokens"', per_minute(3, 40)),
        counter("ragpulse_judge_skipped_total", b + ',priority="base_rate",reason="budget_tokens"', "0+0x40"),
        # Stalled: a judges nothing while traces flow; b judges.
        counter("ragpulse_judge_judged_total", a + ',priority="base_rate"', "0+0x40"),
        counter("ragpulse_judge_judged_total", b + ',priority="base_rate"', per_minute(5, 40)),
        counter("ragpulse_traces_total", a + f',app="x",{LABELS}', per_minute(100, 40)),
        counter("ragpulse_traces_total", b + f',app="x",{LABELS}', per_minute(100, 40)),
        # Dropped: a lost events at minute 35.
        counter("ragpulse_events_dropped_total", a + ',reason="shutdown_deadline"', "0+0x35 7+0x5"),
        counter("ragpulse_events_dropped_total", b + ',reason="shutdown_deadline"', "0+0x40"),
        # Failing components: a's span assembler restarted at minute 30; b has none and no stage error.
        counter("ragpulse_component_restarts_total", a + ',component="span_assembler"', "0+0x30 1+0x10"),
        counter("ragpulse_component_restarts_total", b + ',component="span_assembler"', "0+0x40"),
        counter("ragpulse_stage_errors_total", 'instance="c",stage="judge_sampler"', "0+0x35 2+0x5"),  # c: no restart series
        # Invalid: a 10% of what is sent, b 1%.
        counter("ragpulse_events_received_total", a + ',source="http",type="trace"', per_minute(90, 40)),
        counter("ragpulse_events_invalid_total", a + ',source="http",reason="missing_field"', per_minute(10, 40)),
        counter("ragpulse_events_received_total", b + ',source="http",type="trace"', per_minute(99, 40)),
        counter("ragpulse_events_invalid_total", b + ',source="http",reason="missing_field"', per_minute(1, 40)),
        # OTLP: a 20% of traces expire without a root, b 2%.
        counter("ragpulse_otlp_traces_total", a + ',outcome="complete"', per_minute(8, 40)),
        counter("ragpulse_otlp_traces_total", a + ',outcome="ttl_expired"', per_minute(2, 40)),
        counter("ragpulse_otlp_traces_total", b + ',outcome="complete"', per_minute(49, 40)),
        counter("ragpulse_otlp_traces_total", b + ',outcome="ttl_expired"', per_minute(1, 40)),
        # Content: c's traces carry no content (8 of 10), b's all do.
        counter("ragpulse_otlp_traces_total", 'instance="c",outcome="complete"', per_minute(2, 40)),
        counter("ragpulse_otlp_traces_total", 'instance="c",outcome="content_not_captured"', per_minute(8, 40)),
        counter("ragpulse_otlp_traces_total", b + ',outcome="content_not_captured"', "0+0x40"),
        # Kafka lag: "grows" climbs past 10,000; "flat" stays at 50,000.
        {"series": 'ragpulse_kafka_consumer_lag_records{instance="a",topic="grows",partition="0"}', "values": "5000+500x40"},
        {"series": 'ragpulse_kafka_consumer_lag_records{instance="a",topic="flat",partition="0"}', "values": "50000+0x40"},
        {"series": f'up{{{a},job="ragpulse"}}', "values": "1+0x40"},
        {"series": f'up{{{b},job="ragpulse"}}', "values": "1+0x10 0+0x30"},
    ]
    run_promtool(tmp_path, [
        {"interval": "1m", "input_series": series, "promql_expr_test": [
            firing("RagpulseJudgeErrors", "40m", {"instance": "a"}),
            firing("RagpulseJudgeCircuitOpen", "40m", {"instance": "a"}),
            firing("RagpulseJudgeBudgetExhausted", "40m", {"instance": "a"}),
            firing("RagpulseJudgmentsStalled", "40m", {"instance": "a"}),
            firing("RagpulseEventsDropped", "40m", {"instance": "a"}),
            firing("RagpulseComponentFailing", "40m", {"instance": "a"}, {"instance": "c"}),
            firing("RagpulseInvalidEvents", "40m", {"instance": "a"}),
            firing("RagpulseOtlpTracesExpiring", "40m", {"instance": "a"}),
            firing("RagpulseOtlpContentNotCaptured", "40m", {"instance": "c"}),
            firing("RagpulseKafkaLagGrowing", "40m", {"topic": "grows"}),
            firing("RagpulseDown", "40m", {"instance": "b", "job": "ragpulse"}),  # b stopped answering scrapes
            firing("RagpulseJudgeCircuitOpen", "24m"),  # open for 4 minutes: not yet
        ]},
        # No sidecar scraped at all.
        {"interval": "1m", "input_series": [{"series": 'up{job="other"}', "values": "1+0x10"}],
         "promql_expr_test": [firing("RagpulseDown", "10m", {})]},
        # Every sidecar up: quiet.
        {"interval": "1m", "input_series": [{"series": 'up{job="ragpulse",instance="a"}', "values": "1+0x10"}],
         "promql_expr_test": [firing("RagpulseDown", "10m")]},
    ])


def test_failed_runs_warn_over_their_share_with_enough_traces(tmp_path: Path) -> None:
    """"broken" fails 10% of its runs, "healthy" 2%, "tiny" half of too few (2 a minute: 30 in the window, under 50)."""
    def runs(app: str, traces: int, failed: int) -> list[dict[str, str]]:
        labels = f'app="{app}",{LABELS}'
        return [counter("ragpulse_traces_total", labels, per_minute(traces, 40)),
                counter("ragpulse_traces_failed_total", labels, per_minute(failed, 40))]

    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": [*runs("broken", 100, 10), *runs("healthy", 100, 2), *runs("tiny", 2, 1)],
        "promql_expr_test": [firing("RagpulseFailedRunsHigh", "40m", {"app": "broken"}),
                             firing("RagpulseFailedRunsHigh", "8m")],  # above the line for less than its 10m
    }])


@pytest.mark.unit
def test_every_alert_follows_the_conventions_and_is_tested_here() -> None:
    found = mixin_alerts.alerts(DEFAULTS)
    source = Path(__file__).read_text(encoding="utf-8")
    for alert in found:
        assert alert.name.startswith("Ragpulse") and alert.name[8:9].isupper(), alert.name
        assert alert.severity in ("critical", "warning", "info"), alert.name
        assert "{{" not in alert.summary and "{{" in alert.description, alert.name  # static summary, templated description
        assert f'"{alert.name}"' in source, f"{alert.name} has no promtool test here"
    assert len({alert.name for alert in found}) == len(found)


@pytest.mark.beside  # eight hours of minutes in promtool: ~20 s of one core (pyproject.toml)
def test_probe_alerts_fire_on_a_hit_rate_drop_and_a_stale_golden_set(tmp_path: Path) -> None:
    def hourly(per_run: int, runs: int) -> str:
        """A counter that grows by `per_run` once an hour (a probe run), sampled every minute."""
        return " ".join(f"{per_run * run}x59" for run in range(runs))

    def probe(name: str, golden_set: str, per_run: int, runs: int = 8) -> dict[str, str]:
        return counter(name, f'golden_set="{golden_set}",target="shop",intent="returns",release="not_reported"',
                       hourly(per_run, runs))

    series = [
        probe("ragpulse_probe_hit_count", "bad", 30), probe("ragpulse_probe_hit_sum", "bad", 20),  # 67% < 80%
        probe("ragpulse_probe_hit_count", "good", 30), probe("ragpulse_probe_hit_sum", "good", 29),  # 97%
        probe("ragpulse_probe_hit_count", "few", 2), probe("ragpulse_probe_hit_sum", "few", 1),  # 50%, 12 questions in 6h
        # last run: "old" finished at 0 s and never again; "fresh" finishes every minute
        {"series": 'ragpulse_probe_last_run_timestamp_seconds{golden_set="old",target="shop"}', "values": "0x300"},
        {"series": 'ragpulse_probe_last_run_timestamp_seconds{golden_set="fresh",target="shop"}', "values": "0+60x300"},
    ]
    run_promtool(tmp_path, [{
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": [
            firing("RagpulseProbeHitRateLow", "7h", {"golden_set": "bad", "target": "shop"}),
            firing("RagpulseProbeStale", "3h30m", {"golden_set": "old", "target": "shop"}),
            {"expr": 'ALERTS{alertname="RagpulseProbeStale",alertstate="firing"}', "eval_time": "2h50m", "exp_samples": []},
        ],
    }])


def test_the_citation_precision_floor_is_off_by_default_and_warns_when_set(tmp_path: Path) -> None:
    assert "RagpulseCitationPrecisionLow" not in {alert.name for alert in mixin_alerts.alerts(DEFAULTS)}
    settings = dataclasses.replace(DEFAULTS, citation_precision_min=0.8)

    def verdicts(app: str, supported: float, unsupported: float) -> list[dict[str, str]]:
        labels = f'app="{app}",{LABELS},judge="llm"'
        return [counter("ragpulse_citation_verdicts_total", labels + ',verdict="supported"', per_minute(supported, 420)),
                counter("ragpulse_citation_verdicts_total", labels + ',verdict="unsupported"', per_minute(unsupported, 420)),
                counter("ragpulse_citation_verdicts_total", labels + ',verdict="dangling"', per_minute(1, 420))]

    series = [*verdicts("bad", 3, 2),  # 60% supported over 6h, 1,800 judged (integers: exact ratios)
              *verdicts("good", 9, 1),  # 90%
              *verdicts("few", 0.025, 0.025)]  # 50%, but 18 judged in 6h: under citation_min_judged (30)
    run_promtool(tmp_path, [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [
            firing("RagpulseCitationPrecisionLow", "400m", {"app": "bad"}, settings=settings),
            {"expr": "app:ragpulse_citation_precision:ratio6h", "eval_time": "400m",
             "exp_samples": [{"labels": 'app:ragpulse_citation_precision:ratio6h{app="bad"}', "value": 0.6},
                             {"labels": 'app:ragpulse_citation_precision:ratio6h{app="few"}', "value": 0.5},
                             {"labels": 'app:ragpulse_citation_precision:ratio6h{app="good"}', "value": 0.9}]},
        ],
    }], settings=settings)
